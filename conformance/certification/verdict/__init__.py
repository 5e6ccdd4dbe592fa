"""The verdict: profiles and tiers, the two-part decision, and the report document built once from the records."""
