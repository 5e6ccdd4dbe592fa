"""Results are data: the same selection gives the same report with and without
pytest-xdist, and statuses come from exception types."""

import json
import re

import jsonschema
import pytest

from conformance.certification.bundle import bundle_files
from conformance.helpers import capabilities
from conformance.helpers import reproduction
from conformance.helpers.assertions import BackendCrash
from conformance.processes.isolation import BackendHang
from conformance.session import outcomes
from tests.mutants.runner import pytester_run

MIXED = '''
import numpy as np
import pytest
from hypothesis import given, strategies as st
from jax import lax

from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers.reproduction import reproduction


def test_pass():
    assert True


def test_wrong_result():
    assert [1, 2] == [1, 3], "out differs from expected"


def test_error():
    raise RuntimeError("backend exploded")


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME["bfloat16"])])
def test_gated(dt):
    with capabilities.gated(dt, "put(x)"):
        raise ValueError("no bf16 here")


def test_known_bug():
    assert 1 == 2, "a known upstream bug"


def test_program_twice(program_cache, device):
    x = np.arange(3, dtype=np.float32)
    for _ in range(2):
        (out,), text = program_cache.run("neg_twice", lax.neg, [x], device)
    assert np.array_equal(out, -x)


@given(n=st.integers(min_value=0, max_value=10))
def test_drawn_wrong(program_cache, device, n):
    x = np.full(3, n, dtype=np.float32)
    (out,), text = program_cache.run("neg_drawn", lax.neg, [x], device)
    with reproduction(f"execute(neg) on {device}", program=text, inputs=[x]):
        assert np.array_equal(out, x), "out differs from expected"
'''

KNOWN = ("test_mixed.py::test_known_bug | * | upstream bug 1\n"
         "test_mixed.py::test_never_written | * | fixed long ago\n"
         "test_elsewhere.py::test_x | * | file not collected\n")


def _report(pytester, *workers):
    out = pytester.path / f"rep{'-'.join(workers)}"
    result = pytester_run(
        pytester, f"--report-dir={out}", "-p", "no:cacheprovider", "--profile=none",
        "--cpu-devices=2", f"--known-failures={pytester.path / 'known.txt'}", "--defects=none",
        *workers)
    doc = json.loads((out / "report.json").read_text())
    jsonschema.validate(doc, bundle_files.schema())
    return result, doc


def _comparable(doc):
    """What must not depend on how the tests were distributed over processes."""
    def strip(entry):  # object addresses in messages differ from process to process
        return json.loads(re.sub(r"0x[0-9a-f]+", "0x?", json.dumps(
            {k: v for k, v in entry.items() if k != "duration_s"})))
    return {"results": sorted((r["nodeid"], r["status"], r["tier"]) for r in doc["results"]),
            "summary": doc["summary"], "areas": doc["areas"], "programs": doc["programs"],
            "known_failures": doc["known_failures"], "not_supported": doc["not_supported"],
            "failures": sorted((strip(f) for f in doc["failures"]), key=lambda f: f["nodeid"]),
            # the reasons' examples follow the order in which results arrived
            "verdict": (doc["verdict"], len(doc["verdict_reasons"]))}


def test_same_report_with_and_without_xdist(pytester):
    pytester.makepyfile(test_mixed=MIXED)
    (pytester.path / "known.txt").write_text(KNOWN)
    serial, in_process = _report(pytester, "-n", "0")
    parallel, xdist = _report(pytester, "-n", "2")
    assert serial.ret == parallel.ret == 1  # the unknown failures fail the run
    assert _comparable(xdist) == _comparable(in_process)

    doc = xdist
    status = {r["nodeid"].split("::")[1]: r["status"] for r in doc["results"]}
    assert status == {
        "test_pass": "pass", "test_wrong_result": "fail_wrong_result",
        "test_error": "fail_error", "test_gated[bfloat16]": "not_supported",
        "test_known_bug": "fail_wrong_result", "test_program_twice[cpu:0]": "pass",
        "test_program_twice[cpu:1]": "pass", "test_drawn_wrong[cpu:0]": "fail_wrong_result",
        "test_drawn_wrong[cpu:1]": "fail_wrong_result"}, status
    matched = {k["pattern"]: k["matched"] for k in doc["known_failures"]}
    assert matched == {"test_mixed.py::test_known_bug": 1,
                       "test_mixed.py::test_never_written": 0, "test_elsewhere.py::test_x": 0}
    for result in (serial, parallel):  # the unmatched entry is reported, also under xdist
        result.stdout.fnmatch_lines(["*known-failures entry matched no test: "
                                     "test_mixed.py::test_never_written*"])
        assert "test_elsewhere.py::test_x (" not in result.stdout.str()
    # two devices, one process each or both in one: 4 compiles, the rest served from cache
    assert doc["programs"]["compiles"] == 4 and doc["programs"]["cache_hits"] > 2
    assert [r for r in doc["results"] if "gated" in r["nodeid"]][0]["tier"] == \
        "capability:bf16"
    assert doc["not_supported"][0]["message"].startswith("not_supported: capability bf16")

    failures = {f["nodeid"].split("::")[1]: f for f in doc["failures"]}
    known = failures["test_known_bug"]
    assert known["known_failure"] == "known: upstream bug 1 (<redacted>/known.txt:1)"  # no local path in a bundle
    drawn = failures["test_drawn_wrong[cpu:0]"]
    assert drawn["program_text"].startswith("module @jit_neg_drawn")
    assert "stablehlo.negate" in drawn["program_text"]
    assert drawn["inputs"] == "  arg0: float32[3] = [1. 1. 1.]"  # Hypothesis' minimal n
    assert drawn["falsifying_example"].startswith("test_drawn_wrong(") and "n=1" in \
        drawn["falsifying_example"]
    assert drawn["hypothesis_blob"].startswith("@reproduce_failure(")
    assert drawn["reproduction"].startswith("Reproduction: execute(neg) on")
    assert drawn["hypothesis_blob"] in drawn["reproduction"]
    assert drawn["command"].startswith("pytest ") and "test_drawn_wrong[cpu:0]" in \
        drawn["command"]
    plain = failures["test_wrong_result"]
    assert plain["reproduction"] == "" and plain["program_text"] is None
    assert "out differs from expected" in plain["message"]


# --- statuses by exception type ------------------------------------------------------

def _raised(exc):
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 (any exception is a status)
        return caught


@pytest.mark.parametrize("exc,when,expected", [
    (AssertionError("x"), "call", "fail_wrong_result"),
    (AssertionError("x"), "setup", "fail_error"),
    (RuntimeError("x"), "call", "fail_error"),
    (BackendCrash("SIGSEGV"), "call", "crash"),
    (BackendCrash("SIGSEGV"), "setup", "crash"),
    (BackendHang("no result"), "call", "timeout"),
    (capabilities.NotSupported("not_supported: fp8"), "call", "not_supported"),
    # the message alone does not make a skip not_supported
    (pytest.skip.Exception("not_supported: fp8"), "call", "skipped"),
    (ExceptionGroup("2", [AssertionError("a"), AssertionError("b")]), "call",
     "fail_wrong_result"),
    (ExceptionGroup("2", [AssertionError("a"), RuntimeError("b")]), "call", "fail_error"),
    (ExceptionGroup("2", [AssertionError("a"), BackendCrash("b")]), "call", "crash"),
    (ExceptionGroup("2", [RuntimeError("a"), BackendHang("b")]), "call", "timeout"),
], ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v))
def test_status_comes_from_the_exception_type(exc, when, expected):
    assert outcomes.status(_raised(exc), when=when, outcome="failed") == expected


def test_status_without_exception_follows_the_outcome():
    assert outcomes.status(None, when="call", outcome="passed") == "pass"
    assert outcomes.status(None, when="call", outcome="failed") == "fail_error"  # strict XPASS


def test_text_mentioning_a_crash_is_not_a_crash():
    err = _raised(AssertionError("BackendCrash: process killed by SIGSEGV"))
    assert outcomes.status(err, when="call", outcome="failed") == "fail_wrong_result"


def test_pytest_timeout_failure_is_a_timeout(pytester):
    pytester.makepyfile(test_slow="import time\ndef test_hang():\n    time.sleep(30)\n"
                                  "def test_fail():\n    import pytest; pytest.fail('Timeout')\n")
    out = pytester.path / "rep"
    pytester_run(pytester, f"--report-dir={out}", "--profile=none", "--timeout=2",
                 "-p", "no:cacheprovider", "--timeout-method=signal")
    doc = json.loads((out / "report.json").read_text())
    status = {r["nodeid"].split("::")[1]: r["status"] for r in doc["results"]}
    assert status == {"test_hang": "timeout", "test_fail": "fail_error"}, status


def test_reproduction_facts_travel_with_the_exception():
    with pytest.raises(AssertionError) as info:
        with reproduction.reproduction("outer"):
            with reproduction.reproduction("inner", program="module @m {}", inputs=[[1, 2]]):
                raise AssertionError("wrong")
    facts = outcomes.failure_facts(info.value)
    assert facts["program_text"] == "module @m {}"
    assert facts["inputs"] == "  arg0: int64[2] = [1 2]"
    assert facts["reproduction"].startswith("Reproduction: inner")  # the innermost names it
    assert facts["falsifying_example"] is None and facts["hypothesis_blob"] is None


def test_hypothesis_notes_give_example_and_blob():
    err = _raised(AssertionError("wrong"))
    for note in ("Failing test case: test_f(\n    n=1,\n)", "Draw 1: 3",
                 "\nYou can reproduce this test case by temporarily adding "
                 "@reproduce_failure('6.1', b'AXic') as a decorator on your test function"):
        err.add_note(note)
    facts = outcomes.failure_facts(ExceptionGroup("1", [err]))
    assert facts["falsifying_example"] == "test_f(\n    n=1,\n)\nDraw 1: 3"
    assert facts["hypothesis_blob"] == "@reproduce_failure('6.1', b'AXic')"


def test_not_supported_rejects_an_empty_reason():
    with pytest.raises(TypeError, match="reason"):
        capabilities.not_supported("")

