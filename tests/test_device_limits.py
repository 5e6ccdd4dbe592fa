"""benchmarks.device_limits (the GPU limits file) and session.device_memory (GPU memory
shared by the suite's processes)."""

import json
import math

import pytest

from benchmarks import device_limits
from conformance.session import device_memory


def test_gpu_runs_allocate_on_demand_unless_the_user_chose():
    env: dict[str, str] = {}
    assert device_memory.share_device_memory("cpu", env) is None and env == {}
    assert device_memory.share_device_memory("cuda", env) == "XLA_PYTHON_CLIENT_PREALLOCATE=false"
    assert env == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    for name in device_memory.ALLOCATOR_VARIABLES:
        mine = {name: ".5"}
        assert device_memory.share_device_memory("rocm", mine) is None and mine == {name: ".5"}


def test_rows_ratio_and_specs():
    r = device_limits.row("x", "GB/s", 5.0, "peak", 20.0)
    assert r["ratio"] == 0.25
    assert device_limits.row("x", "us", 5.0, "none", None)["ratio"] is None
    assert device_limits.spec_for("NVIDIA H100 80GB HBM3")["hbm_tbs"] == 3.35
    assert device_limits.spec_for("cpu") is None
    with pytest.raises(ValueError, match="reps"):
        device_limits.median_seconds(lambda: None, 0)


def test_cpu_document_has_the_schema_the_dashboard_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("PJRT_BENCH_CPU_DEVICES", "1")
    out = tmp_path / "limits.json"
    assert device_limits.main(["--sizes-mib", "1", "--matmul-n", "32", "--reps", "1",
                               "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == device_limits.SCHEMA and doc["platform"] == "cpu"
    names = {r["name"] for r in doc["rows"]}
    assert {"h2d_pageable_1MiB", "d2h_1MiB", "d2d_stream_1MiB", "dispatch_runtime_execute_1arg",
            "matmul_bf16_32"} <= names
    for r in doc["rows"]:
        assert r["value"] > 0 and math.isfinite(r["value"]), r
        if r["reference_value"]:
            assert r["ratio"] == pytest.approx(r["value"] / r["reference_value"]), r


def test_bad_arguments_are_usage_errors():
    with pytest.raises(SystemExit) as exc:
        device_limits.main(["--reps", "0"])
    assert exc.value.code == 2


def test_a_failed_jax_child_leaves_no_ratio_and_no_nan(monkeypatch):
    monkeypatch.setenv("PJRT_BENCH_CPU_DEVICES", "1")
    monkeypatch.setattr(device_limits, "child_seconds", lambda *a: None)
    (only,) = device_limits.dispatch_rows(calls=10)
    assert only["name"] == "dispatch_runtime_execute_1arg" and only["ratio"] is None
    assert math.isfinite(only["value"]) and only["value"] > 0
