"""Certification: profiles, waivers, known failures, verdict, report, bundle, diff."""
