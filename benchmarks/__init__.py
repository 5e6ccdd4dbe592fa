"""asv benchmarks of the PJRT layer (numpy's layout: ``bench_<area>.py``).

Every timed operation has its reference in the same class and parameters, so a
run reads as ratios (``python -m benchmarks.ratios``). ``test_asv_suite.py``
runs the same definitions under pytest-benchmark.
"""
