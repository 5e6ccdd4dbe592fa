"""pytest-benchmark front end: ``pytest benchmarks --benchmark-only``.

Each asv case is one benchmark; cases of one class and parameters form a group,
so every operation is printed beside its references (``time_ref_*``).
``peakmem_`` cases run once; ``track_`` values go to ``extra_info``.
"""

from __future__ import annotations

import pytest

from benchmarks import discover

CASES = discover.cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_benchmark(benchmark, case):
    benchmark.group = case.group
    try:
        obj, method = discover.prepared(case)
    except discover.Skip as err:
        pytest.skip(str(err))
    try:
        if case.kind == "timeraw":
            code = method(*case.params)
            benchmark.pedantic(discover.run_timeraw, args=(code,), rounds=3, iterations=1)
        elif case.kind == "track":
            benchmark.extra_info["value"] = benchmark.pedantic(method, args=case.params,
                                                               rounds=1, iterations=1)
        elif case.kind == "peakmem":
            benchmark.pedantic(method, args=case.params, rounds=1, iterations=1)
        else:
            benchmark(method, *case.params)
    finally:
        discover.finish(case, obj)
