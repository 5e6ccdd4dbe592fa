"""Plain pytest's outcome read from a results log (conformance/certification/results/pytest_outcome.py),
the check CI makes on README command 1's bundle instead of running the suite again under
plain pytest (docs/ci.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.certification.catalog import defect_catalog
from conformance.certification.results import runlog
from conformance.certification.results.pytest_outcome import unexpected, unexpected_in_bundle
from conformance.processes import runner
from tests.mutants.runner import PYTEST, pytester_run

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / ".ci" / "pytest_outcome.py"

TINY_SUITE = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("setup fails")

def test_passes():
    pass

def test_fails():
    assert 1 == 2

def test_setup_error(broken):
    pass

@pytest.mark.xfail(reason="known", strict=True)
def test_known_failure():
    assert 1 == 2

@pytest.mark.xfail(reason="known, gone", strict=True)
def test_strict_xpass():
    pass

@pytest.mark.xfail(reason="some draws", strict=False)
def test_loose_xpass():
    pass

def test_skipped():
    pytest.skip("not here")
"""


def test_counts_what_pytest_itself_counts_as_failed(pytester):
    """On a suite holding each kind of outcome, :func:`unexpected` names exactly the
    tests that pytest's own summary lists as FAILED or ERROR."""
    pytester.makepyfile(test_kinds=TINY_SUITE)
    log = pytester.path / "log.jsonl"
    result = pytester_run(pytester, "-p", "no:cacheprovider", "-rfE",
                          f"--report-log={log}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    pytest_failed = {line.split()[1] for line in result.stdout.lines
                     if line.startswith(("FAILED ", "ERROR "))}
    found = unexpected(runlog.records(log))
    assert found == sorted(pytest_failed), (found, result.stdout.str())
    assert len(found) == 3  # fails, setup_error, strict_xpass: the rest pytest accepts


def test_a_clean_log_and_a_collection_error():
    assert unexpected([{"$report_type": "TestReport", "nodeid": "t.py::a", "outcome": "skipped",
                        "wasxfail": "known"},
                       {"$report_type": "SessionStart"}]) == []
    assert unexpected([{"$report_type": "CollectReport", "nodeid": "t.py",
                        "outcome": "failed"}]) == ["t.py"]


def test_bad_records_are_refused_naming_the_argument():
    with pytest.raises(TypeError, match="argument 'records'.*'outcome'"):
        unexpected([{"$report_type": "TestReport", "nodeid": "t.py::a", "outcome": None}])


def test_ci_check_fails_on_a_committed_bundle_with_an_uncataloged_failure():
    """``.ci/pytest_outcome.py`` exits 1 naming the tests on a bundle whose results log
    holds failures outside the catalog (the committed xla-cpu-pjrt plugin bundle: the
    catalog's XLA CPU entries are cataloged for jaxlib's built-in client, not for a plugin
    library), 0 on the committed CPU bundle of jax 0.10.2, and 2 on a directory without a
    results log."""
    def committed(folder: str, jax: str | None = None) -> Path:
        for report in sorted((ROOT / "reports" / folder).glob("*/report.json")):
            if jax is None or json.loads(report.read_text())["environment"]["jax"] == jax:
                return report.parent
        raise AssertionError(f"no committed bundle under reports/{folder}")

    bad = committed("xla-cpu-pjrt")
    good = committed("cpu", "0.10.2")
    expected_bad = unexpected_in_bundle(bad)
    assert expected_bad, "the plugin bundle no longer holds an uncataloged failure"
    proc = subprocess.run([sys.executable, str(CHECK), str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert all(nodeid in proc.stderr for nodeid in expected_bad), proc.stderr
    proc = subprocess.run([sys.executable, str(CHECK), str(good)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "0 tests" in proc.stderr, proc.stderr
    proc = subprocess.run([sys.executable, str(CHECK), str(ROOT / "docs")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def _cataloged_special_value_test() -> str:
    """A strict catalog entry that applies to jaxlib's CPU client on the installed jaxlib
    (an exact test id of test_float_special_values)."""
    for entry in defect_catalog.entries(defect_catalog.load()):
        if ("test_float_special_values[" in entry.pattern and "*" not in entry.pattern
                and entry.applies("cpu", False) and entry.defect.strict):
            return entry.pattern
    pytest.skip("no strict catalog entry of test_float_special_values applies here")


def test_plain_pytest_from_the_root_expects_a_cataloged_failure(tmp_path):
    """README command 2 no longer runs the conformance suite under plain pytest from the
    clone's root (command 1 ran it): this keeps that route checked on one cataloged
    failure and one passing neighbour. pytest exits 0 with one xfailed test, and
    :func:`unexpected` of its log agrees."""
    known = _cataloged_special_value_test()
    neighbour = known.split("[")[0] + "[add-float32]"
    log = tmp_path / "log.jsonl"
    proc = runner.run_python(
        PYTEST, ["-p", "no:cacheprovider", "-q", "--platform=cpu",
                 f"--basetemp={tmp_path / 'base'}", f"--report-log={log}", known, neighbour],
        cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 passed, 1 xfailed" in proc.stdout, proc.stdout[-3000:]
    assert unexpected(runlog.records(log)) == []
    outcomes = {r["nodeid"]: r["outcome"] for r in map(json.loads, log.read_text().splitlines())
                if r.get("when") == "call"}
    assert outcomes == {known: "skipped", neighbour: "passed"}, outcomes
