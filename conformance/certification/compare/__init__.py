"""Across bundles: diff of two bundles and the scoreboard of many."""
