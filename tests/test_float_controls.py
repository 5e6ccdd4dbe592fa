"""Self-tests of declared float controls (``--float-controls``): the declaration's parser
and expected results, and ``test_denormals_as_declared`` failing on a backend that does
not compute as it declares, while jaxlib's CPU client passes with its own declaration."""

import json
import re

import ml_dtypes
import numpy as np
import pytest

from conformance.helpers import float_controls as fc
from tests.mutants import CATALOG  # imported once, before pytester snapshots sys.modules

SELECT = "test_denormals_as_declared"


def test_parse_presets_pairs_and_auto():
    assert fc.parse("auto") is None
    assert fc.parse("xla-cpu") is fc.XLA_CPU and fc.parse(" ieee ") is fc.IEEE
    got = fc.parse("float32=ftz+daz, float64=ftz")
    assert got.mode("float32") == "ftz+daz" and got.mode("float64") == "ftz"
    assert got.mode("float16") == "preserve" and got.mode("bfloat16") == "preserve"
    assert got.flushes_results("float64") and not got.flushes_inputs("float64")


@pytest.mark.parametrize("bad", ["", "float32", "float32=flush", "int8=ftz", "xla-gpu",
                                 "float32=ftz,,"])
def test_parse_rejects_bad_values_naming_the_option(bad):
    with pytest.raises(ValueError, match="--float-controls"):
        fc.parse(bad)


def test_declaration_must_cover_every_width_with_a_known_mode():
    with pytest.raises(ValueError, match="'modes'"):
        fc.FloatControls({"float32": "ftz"}, "x")
    with pytest.raises(ValueError, match="unknown mode"):
        fc.FloatControls({w: "flush" for w in fc.WIDTHS}, "x")
    with pytest.raises(KeyError, match="float8"):
        fc.IEEE.mode("float8_e4m3fn")


@pytest.mark.parametrize("name", fc.WIDTHS)
def test_expected_flushes_only_the_probed_subnormal(name):
    dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    x = np.array([tiny, -tiny, 1.0], np.float64).astype(dtype)
    exact = np.array([tiny / 2, -tiny / 2, 0.5], np.float64).astype(dtype)
    result_flush = fc.parse(f"{name}=ftz")
    got = fc.expected(x, exact, result_flush, flushed_input=False)
    assert got.astype(np.float64).tolist() == [0.0, 0.0, 0.5]
    assert np.signbit(got.astype(np.float64)).tolist() == [False, True, False]
    # the subnormal is the input: a result-only (FTZ) declaration keeps it
    assert fc.expected(exact, x, result_flush, flushed_input=True) is x
    daz = fc.expected(exact, x, fc.parse(f"{name}=daz"), flushed_input=True)
    assert np.signbit(daz.astype(np.float64)).tolist() == [False, True, False]
    assert daz.astype(np.float64)[:2].tolist() == [0.0, 0.0]
    assert fc.expected(x, exact, fc.IEEE, flushed_input=False) is exact
    with pytest.raises(TypeError, match="'x'"):
        fc.expected(np.zeros(2, np.int32), np.zeros(2, np.int32), fc.IEEE, False)


def _statuses(doc):
    return {r["test_id"].rsplit("[", 1)[1].rstrip("]"): r["status"] for r in doc["results"]}


def test_jaxlib_cpu_client_computes_as_it_declares(run_suite, pytester):
    result, doc = run_suite("cpu", "-k", SELECT, devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    assert set(_statuses(doc)) == set(fc.WIDTHS), _statuses(doc)
    assert set(_statuses(doc).values()) == {"pass"}, result.stdout.str()[-3000:]
    # the report states the declaration the checks used: auto, resolved for this client
    assert doc["float_controls"] == fc.record(fc.for_platform(None, "cpu", False))
    assert doc["float_controls"]["modes"]["float32"] == "ftz+daz"
    assert doc["float_controls"]["source"] == "auto: jaxlib's built-in CPU client"
    md = (pytester.path / "report" / "report.md").read_text()
    assert "- Float controls (declared denormal handling): bfloat16 ftz+daz, float16 " \
           "preserve, float32 ftz+daz, float64 ftz+daz (auto: jaxlib's built-in CPU client)" in md


def test_declaring_preservation_fails_a_backend_that_flushes(run_suite):
    """jaxlib's CPU client flushes bfloat16/float32/float64: declared ``ieee`` it fails
    those three, and float16 (which it keeps) still passes."""
    result, doc = run_suite("cpu", "-k", SELECT, "--float-controls=ieee", devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    assert _statuses(doc) == {"bfloat16": "fail_wrong_result", "float16": "pass",
                              "float32": "fail_wrong_result", "float64": "fail_wrong_result"}
    assert any("declared float32=preserve" in f["message"] for f in doc["failures"]), \
        [f["message"][:300] for f in doc["failures"]]
    # the reproduction command carries the declaration the verdict depended on
    assert all("--float-controls=ieee" in json.dumps(f) for f in doc["failures"])
    assert doc["float_controls"] == {"modes": {w: "preserve" for w in fc.WIDTHS},
                                     "source": "ieee"}


def test_for_platform_resolves_auto_as_for_client():
    assert fc.for_platform(None, "cpu", False).modes == fc.XLA_CPU.modes
    assert fc.for_platform(None, "cpu", True).modes == fc.IEEE.modes    # a CPU plugin
    assert fc.for_platform(None, "cuda", False).modes == fc.IEEE.modes
    assert fc.for_platform(fc.XLA_CPU, "cuda", True) is fc.XLA_CPU
    assert fc.record(fc.XLA_CPU) == {"modes": dict(fc.XLA_CPU.modes), "source": "xla-cpu"}


@pytest.mark.parametrize("mutant, failing, fragment", [
    # declares FTZ+DAZ (auto: a jaxlib CPU client) but the last device keeps subnormals
    ("out-denormals-ieee-last-device", {"bfloat16", "float32", "float64"},
     "declared float32=ftz+daz"),
    # declares float16=preserve (auto) but flushes subnormal results
    ("out-flush-subnormals", {"float16"}, "declared float16=preserve"),
], ids=["ftz-on-some-devices-only", "preserve-declared-but-flushed"])
def test_check_fails_on_a_backend_not_computing_as_declared(run_suite, mutant, failing,
                                                            fragment):
    assert CATALOG[mutant].kind == "output"
    result, doc = run_suite(mutant, "-k", SELECT, devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    statuses = _statuses(doc)
    assert {k for k, v in statuses.items() if v == "fail_wrong_result"} == failing, statuses
    assert {v for k, v in statuses.items() if k not in failing} == {"pass"}, statuses
    messages = [f["message"] for f in doc["failures"]]
    assert any(fragment in m for m in messages), [m[:300] for m in messages]
    if mutant == "out-denormals-ieee-last-device":  # only the last of 2 devices is wrong
        assert all(re.search(r" on \S*1: declared", m) for m in messages), \
            [m[:300] for m in messages]


def test_a_bad_declaration_is_a_usage_error(run_suite):
    result, doc = run_suite("cpu", "-k", SELECT, "--float-controls=float32=flush", devices=2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stderr.str()[-2000:]
    assert "--float-controls" in result.stderr.str()
