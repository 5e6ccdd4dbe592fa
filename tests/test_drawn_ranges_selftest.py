"""Issue 33 items 6 and 7: the new draws and checks fail on a broken backend.

Each check of the value ranges the suite did not draw before is fed what a broken
backend returns (monkeypatched in-process, or computed the broken way) and must fail,
and fed the right answer must pass:

- unsigned max/min compared as signed (``test_unsigned_max_min_over_the_whole_range``);
- int64/uint64 -> narrow float rounded twice (``test_convert_wide_integers_rounds_once``);
- complex divide without scaling (``test_complex_divide_by_huge_and_tiny_divisors``);
- DONATE_INPUT treated as ALWAYS_COPY (``live_arrays`` observations of test_copy_semantics);
- rng UNIFORM returning b, and a spec-property failure that passes on its re-run staying
  ``fail_wrong_result`` (never ``flaky``).
"""

import json
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import test_copy_semantics
from conformance import test_kernels_convert
from conformance import test_kernels_elementwise
from conformance import test_kernels_reduce
from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import error_bounds
from conformance.helpers import float_control_modes
from conformance.processes import isolation
from conformance.programs import rng_and_ids
from conformance.session import backend, outcomes
from tests.mutants.runner import pytester_run

_ARGS = ["--platform=cpu", "--cpu-devices=1", "--profile=none", "-p", "no:cacheprovider",
         "-n", "1"]


# -- unsigned max/min ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_signed_compare_of_unsigned_values_fails_the_reduce_check(name, dtype):
    dt = dtype_helpers.BY_NAME[dtype]
    half = int(np.iinfo(dt.dtype).max) // 2 + 1
    x = np.array([[3, half + 5, 7], [half, 1, half + 1]], dt.dtype)  # rows mix both halves
    signed = x.view(f"i{dt.dtype.itemsize}")
    broken = (signed.max(axis=1) if name == "max" else signed.min(axis=1)).view(dt.dtype)
    with pytest.raises(AssertionError):
        test_kernels_reduce._check(name, broken, x, (1,), dt,
                                   "signed compare", float_control_modes.IEEE)
    right = x.max(axis=1) if name == "max" else x.min(axis=1)
    test_kernels_reduce._check(name, right, x, (1,), dt,
                               "unsigned compare", float_control_modes.IEEE)


# -- int64/uint64 -> narrow float --------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(v=st.integers(-(2**63), 2**64 - 1))
def test_round_int_to_float_is_the_correctly_rounded_value(v):
    """Against an independent rounding: the nearest of the two neighbours by Fraction
    distance, ties to the even significand."""
    for dtype in (np.float32, ml_dtypes.bfloat16, np.float16):
        got = test_kernels_convert.round_int_to_float(v, np.dtype(dtype))
        with np.errstate(over="ignore"):  # candidates: v rounded down/up at dtype's precision
            nmant = int(ml_dtypes.finfo(dtype).nmant)
        shift = max(abs(v).bit_length() - 1 - nmant, 0)
        lo = (abs(v) >> shift) << shift
        hi = lo + (1 << shift)
        dlo, dhi = Fraction(abs(v) - lo), Fraction(hi - abs(v))
        pick = lo if dlo < dhi or (dlo == dhi and not (lo >> shift) & 1) else hi
        big = float(ml_dtypes.finfo(dtype).max)
        expect = np.inf if pick >= 2 ** int(ml_dtypes.finfo(dtype).maxexp) else float(pick)
        assert pick <= big or expect == np.inf
        assert got == (-expect if v < 0 else expect), (v, dtype, got, expect)


@pytest.mark.parametrize("src", ["int64", "uint64"])
@pytest.mark.parametrize("dst,via", [("float32", np.float64), ("bfloat16", np.float64),
                                     ("bfloat16", np.float32)])
def test_double_rounding_fails_the_wide_integer_check(src, dst, via):
    """A backend rounding through ``via`` first gives another value for some near-ties
    that :func:`near_ties` draws; found within 200 draws, and the check then fails."""
    s, d = dtype_helpers.BY_NAME[src], dtype_helpers.BY_NAME[dst]
    found = []

    @settings(max_examples=200, deadline=None, database=None)
    @given(v=test_kernels_convert.near_ties(s, d))
    def search(v):
        right = test_kernels_convert.round_int_to_float(v, d.dtype)
        twice = float(np.array(float(np.array(v, s.dtype).astype(via)), np.float64)
                      .astype(d.dtype).astype(np.float64))
        if twice != right:
            found.append((v, twice, right))
    search()
    assert found, f"no double-rounding witness among the draws of near_ties({src}, {dst})"
    v, twice, right = found[0]
    with pytest.raises(AssertionError):
        assertions.assert_ulp_close(np.array([twice], np.float64).astype(d.dtype),
                                    np.array([right], np.float64).astype(d.dtype), max_ulp=0,
                                    call="double rounding")


# -- complex divide ---------------------------------------------------------------------------

def _naive_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * conj(b) / |b|**2`` in ``a``'s precision (no scaling)."""
    with np.errstate(all="ignore"):
        den = b.real * b.real + b.imag * b.imag
        out = np.empty(a.shape, a.dtype)
        out.real = (a.real * b.real + a.imag * b.imag) / den
        out.imag = (a.imag * b.real - a.real * b.imag) / den
    return out


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("huge", [True, False])
def test_unscaled_complex_divide_fails_the_bound(dtype, huge):
    dt = dtype_helpers.BY_NAME[dtype]
    fi = ml_dtypes.finfo(dtype_helpers.real_dtype(dt))
    rng = np.random.default_rng(1)
    e = np.full(64, int(fi.maxexp) - 4 if huge else int(fi.minexp) + 30)
    b = test_kernels_elementwise._scaled_complex(rng, dt.dtype, e)
    a = test_kernels_elementwise._scaled_complex(rng, dt.dtype, e + 1)
    exact = test_kernels_elementwise.exact_quotient(a, b)
    bound = error_bounds.rounding_bound(dt.dtype, np.abs(exact),
                                        roundings=test_kernels_elementwise.COMPLEX_DIVIDE_ROUNDINGS,
                                        underflows=2, name="test",
                                        controls=float_control_modes.XLA_CPU)
    with pytest.raises(AssertionError):
        assertions.assert_within_bound(_naive_divide(a, b), exact.astype(dt.dtype), bound,
                                       call="naive")
    with np.errstate(all="ignore"):  # NumPy's division scales (Smith): within the bound
        assertions.assert_within_bound(a / b, exact.astype(dt.dtype), bound, call="numpy")


# -- donation observed through live_arrays() ---------------------------------------------------

def _run(snippet: str) -> str:
    return isolation.run_snippet(snippet, spec=backend.BackendSpec("cpu", cpu_devices=2),
                                 device_index=0, call="selftest")


def test_live_arrays_observation_fails_when_execution_copies_instead_of_donating():
    snippet, line, _ = test_copy_semantics._ALIASING_OBSERVATIONS["aliased_live_arrays"]
    donated = _run(test_copy_semantics._ALIASING + snippet)
    assert line in donated, donated
    copied = _run(test_copy_semantics._ALIASING.replace(
        "donate=(0,)", "donate=()") + snippet)  # ALWAYS_COPY
    assert line not in copied and "INPUT_LIVE True" in copied, copied


# -- rng UNIFORM's [a, b) and spec-property failures --------------------------------------------

def test_uniform_interval_check():
    a, b = 2.0**24 - 2, 2.0**24
    rng_and_ids.check_uniform_interval(np.array([a, a + 1], np.float32), a, b, call="ok")
    with pytest.raises(assertions.SpecPropertyViolation, match="1 equal b"):
        rng_and_ids.check_uniform_interval(np.array([a, b], np.float32), a, b, call="b")
    with pytest.raises(assertions.SpecPropertyViolation):  # the sample check raises it too
        rng_and_ids.check_rng_sample(np.full((4,), b, np.float32), "UNIFORM", a, b, (4,),
                                     np.float32, call="b")


def test_spec_property_is_recorded_in_the_outcome():
    err = assertions.SpecPropertyViolation("outside")
    assert outcomes.spec_property(err)
    assert outcomes.spec_property(ExceptionGroup("g", [AssertionError("x"), err]))
    assert not outcomes.spec_property(AssertionError("x"))
    assert outcomes.status(err, when="call", outcome="failed") == "fail_wrong_result"


def test_spec_property_failure_passing_on_rerun_is_a_wrong_result(pytester, monkeypatch):
    monkeypatch.setenv("PJRT_TEST_MARK", str(pytester.path / "mark"))
    pytester.makepyfile(test_mix="""
        import os, pathlib
        from conformance.helpers import assertions
        def _first(name):
            mark = pathlib.Path(os.environ["PJRT_TEST_MARK"] + name)
            if mark.exists():
                return False
            mark.write_text("failed once")
            return True
        def test_spec():
            if _first("spec"):
                raise assertions.SpecPropertyViolation("value b outside [a, b)")
        def test_statistic():
            if _first("stat"):
                assert False, "sample mean off by 7 sigma"
    """)
    out = pytester.path / "out"
    result = pytester_run(pytester, *_ARGS, "--reruns=1", f"--report-dir={out}")
    doc = json.loads((out / "report.json").read_text())
    statuses = {r["nodeid"].split("::")[-1]: r["status"] for r in doc["results"]}
    assert statuses == {"test_spec": "fail_wrong_result", "test_statistic": "flaky"}, \
        result.stdout.str()[-3000:]
    (failure,) = [f for f in doc["failures"] if f["nodeid"].endswith("test_spec")]
    assert "broke a spec property, then passed on its re-run" in failure["message"]
    assert "value b outside [a, b)" in failure["message"]
