"""One bundle: its files and manifest, provenance, signatures, report.json reading, reproductions, shards and their merge."""
