"""The defect catalog, the known-failure entries built from it, waivers, and the catalog's release bisection."""
