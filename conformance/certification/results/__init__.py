"""Results as data: the per-test records, the results log, the attempt record, the pytest outcome rule."""
