"""CI smoke run of the benchmarks: every asv case runs once at its smallest
parameters, so a broken benchmark fails CI. No timing is asserted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import discover

ROOT = Path(__file__).resolve().parents[1]
SMOKE = discover.cases(smallest=True)


@pytest.mark.parametrize("case", SMOKE, ids=[c.id for c in SMOKE])
def test_benchmark_runs_once(case):
    try:
        obj, method = discover.prepared(case)
    except discover.Skip as err:
        pytest.skip(f"cannot run here: {err}")
    try:
        result = method(*case.params)
        if case.kind == "timeraw":
            assert isinstance(result, str) and discover.run_timeraw(result) > 0
        elif case.kind == "track":
            assert isinstance(result, float) and result > 0, f"{case.id} tracked {result!r}"
    finally:
        discover.finish(case, obj)


def test_every_area_has_benchmarks_with_references():
    modules = {c.module for c in discover.cases(smallest=True)}
    assert modules == {"bench_transfer", "bench_dispatch", "bench_compile", "bench_sharding",
                       "bench_kernels", "bench_distributed", "bench_eras"}
    for cls in {c.cls for c in SMOKE if c.module != "bench_distributed"}:
        methods = [m for m in vars(cls) if m.startswith(discover.PREFIXES)]
        assert any("_ref_" in m or m.startswith("track_ratio_") for m in methods), \
            f"{cls.__name__} times nothing to compare with"


@pytest.mark.parametrize("conf", ["asv.conf.json", "asv.matrix.conf.json"])
def test_asv_configuration(conf):
    doc = json.loads((ROOT / conf).read_text())
    assert doc["version"] == 1 and (ROOT / doc["benchmark_dir"]).is_dir()
    assert doc["environment_type"] in ("existing", "virtualenv")


def test_asv_discovers_every_benchmark(tmp_path):
    if shutil.which("asv") is None and not (Path(sys.executable).parent / "asv").exists():
        pytest.skip("asv is not installed (pip install -e '.[benchmarks]')")
    asv = shutil.which("asv") or str(Path(sys.executable).parent / "asv")
    proc = subprocess.run([asv, "check", "--python=same", "--config", str(ROOT / "asv.conf.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_sampling_doc_states_asvs_interval_of_the_median():
    """benchmarks/sampling.py says which order statistics bound the 99% interval of the
    median of 20 samples: asv's own quantile_ci is the reference."""
    import re

    from benchmarks import sampling

    try:
        from asv_runner.statistics import quantile_ci
    except ImportError:  # older asv
        quantile_ci = pytest.importorskip("asv.statistics").quantile_ci
    m = re.search(r"(\d+) samples put the 99%\s+interval of the median between the "
                  r"(\d+)\w\w and (\d+)\w\w smallest", sampling.__doc__)
    assert m, "sampling.py no longer states the interval"
    n, low, high = map(int, m.groups())
    _, (a, b) = quantile_ci(list(range(1, n + 1)), 0.5, 0.01)
    assert (low, high) == (a, b)
