"""Statuses, verdict and report files from real pytest runs of synthetic tests."""

import json

import jsonschema

from conformance.certification.bundle import bundle_files

import pytest
from tests.bundle_helpers import clean, flagged
from tests.mutants.runner import pytester_run

SYNTHETIC = '''
import pytest
from conformance.helpers.assertions import BackendCrash
from conformance.helpers.capabilities import not_supported

def test_pass():
    assert 1 + 1 == 2

def test_wrong_result():
    assert [1, 2] == [1, 3], "out differs from expected"

def test_wrong_result_bare_assert():
    assert 64 == 2 * 64

def test_error():
    raise RuntimeError("backend exploded")

def test_not_supported():
    not_supported("capability fp8 (float8_e4m3fn): put raised ValueError")

def test_skipped():
    pytest.skip("needs two devices")

def test_crash():
    raise BackendCrash("process killed by SIGSEGV [x.is_ready()]")
'''


def _run(pytester, *args):
    out = pytester.path / "rep"
    result = pytester_run(pytester, f"--report-dir={out}", "-p", "no:cacheprovider",
                          "--profile=none", *args)
    return result, json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_statuses_and_verdict(pytester):
    pytester.makepyfile(test_synthetic=SYNTHETIC)
    result, doc, md = _run(pytester)
    assert doc["schema_version"] == 3
    jsonschema.validate(doc, bundle_files.schema())     # the written report matches its schema
    by_status = doc["summary"]["by_status"]
    assert by_status == {"pass": 1, "fail_wrong_result": 2, "fail_error": 1, "crash": 1,
                         "timeout": 0, "not_supported": 1, "skipped": 1, "waived": 0,
                         "flaky": 0}, by_status
    assert doc["summary"]["collected"] == 7
    assert doc["areas"]["synthetic"]["pass"] == 1
    assert flagged(doc)
    assert {f["nodeid"].split("::")[1] for f in doc["failures"]} == {
        "test_wrong_result", "test_wrong_result_bare_assert", "test_error", "test_crash"}
    for key in ("suite", "platform", "environment", "hypothesis", "command", "started_utc"):
        assert key in doc, key
    assert doc["environment"]["jaxlib"] and doc["suite"]["version"]
    assert "**Verdict: not certified**" in md and "test_wrong_result" in md
    assert doc["platform"]["loaded"] == {"how": "built-in factory", "source": None}
    assert doc["platform"]["using_pjrt_c_api"] is False and "- Loaded: built-in factory" in md


def test_all_pass_is_certified(pytester):
    pytester.makepyfile(test_ok="def test_a():\n    assert True\n")
    result, doc, md = _run(pytester)
    assert clean(doc)


def test_nothing_collected_is_not_certified(pytester):
    pytester.makepyfile(test_empty="X = 1\n")
    result, doc, md = _run(pytester)
    assert doc["summary"]["collected"] == 0
    assert flagged(doc)
    assert "no test was collected" in doc["verdict_reasons"]


def test_timeout_status(pytester):
    pytester.makepyfile(test_slow="import time\ndef test_hang():\n    time.sleep(30)\n")
    result, doc, md = _run(pytester, "--timeout=2")
    assert doc["summary"]["by_status"]["timeout"] == 1, doc["summary"]
    assert flagged(doc)


def test_known_crash_keeps_its_status(pytester):
    pytester.makepyfile(test_synthetic=SYNTHETIC)
    known = pytester.path / "known.txt"
    known.write_text("test_synthetic.py::test_crash | * | upstream bug\n")
    result, doc, md = _run(pytester, f"--known-failures={known}", "-k", "crash")
    assert result.ret == 0  # pytest is green: the crash is known (strict xfail)
    (failure,) = doc["failures"]
    assert failure["status"] == "crash" and "upstream bug" in failure["known_failure"]
    assert flagged(doc)  # but a crash never certifies


KERNEL_FAMILY = """
import numpy as np
from jax import lax
from conformance.programs import catalog, compiled_programs


def test_twice(program_cache, device):
    x = np.arange(3, dtype=np.float32)
    program_cache.run("neg", lax.neg, [x], device)
    program_cache.run("neg", lax.neg, [x], device)


def test_wrong(program_cache, device):
    assert False, "off by one"
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_kernel_families_and_program_counts_are_reported(pytester, workers):
    """Counts from pytest-xdist workers are summed by the controller."""
    pytester.makepyfile(test_kernels_demo=KERNEL_FAMILY)
    result, doc, md = _run(pytester, "--cpu-devices=2", *workers)
    jsonschema.validate(doc, bundle_files.schema())
    assert doc["kernel_families"] == {"demo": {**{s: 0 for s in doc["kernel_families"]["demo"]},
                                               "pass": 2, "fail_wrong_result": 2}}
    # two devices: each compiles once and reuses once
    assert doc["programs"] == {"compiles": 2, "cache_hits": 2}, doc["programs"]
    assert "## Kernel families" in md and "| demo | 2/4 (50%) | 2 | 2 |" in md.replace("| 0 ", "")
    assert "Programs compiled: 2, executables served from the cache: 2." in md
