"""Live progress (conformance.session.progress): per-area counts, ETA, the end summary,
and tracebacks kept off the terminal unless -v."""

import json
import types

import pytest

from conformance.certification.results import records
from conformance.session import progress
from tests.mutants.runner import pytester_run


def _report(nodeid, when, status, outcome="passed", message=""):
    return types.SimpleNamespace(
        nodeid=nodeid, when=when, outcome=outcome,
        user_properties=[(records.OUTCOME_PROPERTY, {"status": status})] if status else [],
        longrepr=message or None)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_tracker_counts_areas_and_estimates_time_left():
    clock = _Clock()
    t = progress.Tracker(clock=clock)
    ids = [f"conformance/test_a.py::t{i}" for i in range(4)] + ["conformance/test_b.py::t"]
    t.collected(ids)
    phases = [("setup", "pass"), ("call", "fail_wrong_result"), ("teardown", "pass")]
    for when, status in phases:
        assert t.add(_report(ids[0], when, status, message="AssertionError: 2 != 3")) is (
            when == "teardown")
    clock.now = 110.0
    t.add(_report(ids[1], "setup", "pass"))
    t.add(_report(ids[1], "call", "pass"))
    t.add(_report(ids[1], "teardown", "pass"))
    t.add(_report(ids[4], "???", None, outcome="failed", message="worker crashed"))
    t.add(_report(ids[4], "???", "crash"))  # counted once
    rows = {r[0]: r for r in t.rows()}
    assert rows["a"][1:3] == (2, 4) and rows["a"][3]["fail"] == 1 and rows["a"][3]["pass"] == 1
    assert rows["b"][1:3] == (1, 1) and rows["b"][3]["fail"] == 1  # no outcome record: fail
    assert rows["total"][1:3] == (3, 5)
    assert t.eta(2) == pytest.approx(10 / 3 * 2) and rows["a"][4] == "0:07"
    assert t.finished[ids[0]] == "fail_wrong_result" and t.headlines[ids[0]].startswith("Assert")


def test_summary_groups_failures_by_area_and_attribution():
    failed = {"conformance/test_a.py::x": "crash", "conformance/test_b.py::y": "fail_error",
              "conformance/test_a.py::z": "fail_wrong_result"}
    plain = progress.summary_lines(failed, {"conformance/test_a.py::x": "SIGSEGV"}, {})
    assert plain[0] == "a (2):" and "x: SIGSEGV" in plain[1] and plain[3] == "b (1):"
    attributed = progress.summary_lines(failed, {}, {"conformance/test_a.py::x": "framework"})
    assert attributed[:2] == ["a (2):", "  attribution framework:"]
    assert "  attribution unattributed:" in attributed


SYNTHETIC = '''
from conformance.helpers.assertions import BackendCrash

def test_ok():
    assert True

def test_wrong():
    marker_in_traceback = 1
    assert [1, 2] == [1, 3]

def test_crash():
    raise BackendCrash("process killed by SIGSEGV [x.is_ready()]")
'''


@pytest.mark.parametrize("extra", [(), ("-n", "2", "-v")], ids=["n0", "n2-verbose"])
def test_progress_lines_and_summary_in_a_run(pytester, extra):
    pytester.makepyfile(test_demo=SYNTHETIC)
    result = pytester_run(
        pytester, f"--report-dir={pytester.path / 'rep'}", "--profile=none", "-p",
        "no:cacheprovider", "--progress=plain", "--progress-interval=0.001", *extra)
    out = result.stdout.str()
    assert "progress: demo" in out and "pjrt-conformance: results by area" in out
    assert "demo                       3/3     pass 1 fail 1 crash 1" in out
    assert "2 failure(s) by area" in out and "crash             test_crash:" in out
    assert ("marker_in_traceback" in out) is bool(extra)  # tracebacks only with -v
    doc = json.loads((pytester.path / "rep" / "report.json").read_text())
    wrong = next(f for f in doc["failures"] if f["nodeid"].endswith("test_wrong"))
    assert "marker_in_traceback" in wrong["traceback"]  # ... and always in the bundle


def test_progress_is_off_without_a_report_dir_and_rejects_a_bad_interval(pytester):
    pytester.makepyfile(test_demo=SYNTHETIC)
    result = pytester_run(pytester, "--profile=none", "-p", "no:cacheprovider")
    assert "results by area" not in result.stdout.str()
    assert "marker_in_traceback" in result.stdout.str()
    bad = pytester_run(pytester, "--profile=none", "-p", "no:cacheprovider",
                       "--progress=plain", "--progress-interval=0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--progress-interval must be > 0, got 0.0" in bad.stderr.str()
