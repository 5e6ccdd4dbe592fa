"""Self-tests of the one tolerance table (issue 27 item 4): every tolerance class fails a
result one representable value past its bound and passes the result at its bound.

Classes: exact (IEEE 754 ops, 0 ULP), per-op ULP budgets (elementwise accuracy area,
against mpmath's correctly rounded result), per-op value rtol (execute area, float64),
the dtype rtol (the other value checks), and the derived forward-error bounds of the
composite ops (stablehlo_ops: batch_norm, convolution, cholesky, ...).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import mpmath_reference, tolerances, ulp
from conformance.programs import catalog
from conformance.programs import stablehlo_catalog
from conformance.programs import stablehlo_compare


def _at_bound(want: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(inside, past): copies of ``want`` (float32/float64) whose first element is the
    largest value with ``|v - want| <= bound`` there, and the next value above it."""
    want = np.asarray(want)
    b = float(np.broadcast_to(bound, want.shape).flat[0])
    w = want.flat[0]
    v = want.dtype.type(float(w) + b)
    while float(v) - float(w) > b:  # rounded up past the bound: step back
        v = np.nextafter(v, want.dtype.type(-np.inf))
    while float(np.nextafter(v, want.dtype.type(np.inf))) - float(w) <= b:
        v = np.nextafter(v, want.dtype.type(np.inf))
    inside, past = want.copy(), want.copy()
    inside.flat[0], past.flat[0] = v, np.nextafter(v, want.dtype.type(np.inf))
    return inside, past


# -- the table ------------------------------------------------------------------------------

def test_every_entry_names_its_source():
    entries = [*tolerances.FLOAT64_OPS.values(), *tolerances.DTYPE_ULP.values()]
    assert entries and all(any(s in e.source for s in (
        tolerances.IEEE, tolerances.XLA, tolerances.JAX, tolerances.DERIVED,
        tolerances.LEGACY)) for e in entries)


def test_float64_budgets_are_the_tighter_source_within_16_ulp():
    """jax's 1e-15 is 4.5 eps, at most 9 ULP; no float64 op is allowed more, and each
    op's budget is within 16 ULP of the XLA spec it quotes (or of jax's, when tighter)."""
    jax_ulp = int(np.floor(2 * tolerances.JAX_DEFAULT_RTOL["float64"]
                           / float(np.finfo(np.float64).eps)))
    assert jax_ulp == 9
    for name, entry in tolerances.FLOAT64_OPS.items():
        assert 1 <= entry.ulp <= jax_ulp, (name, entry)
    assert tolerances.ulp_bound("expm1", "float64") == 2  # XLA CPU distance 1 + libm's 1
    assert tolerances.ulp_bound("sin", "float64") == 4  # XLA rel_err 2 eps


def test_float64_value_rtol_is_far_below_the_old_1e12():
    for name in tolerances.FLOAT64_OPS:
        r = tolerances.value_rtol(name, "float64")
        assert r <= 11 * float(np.finfo(np.float64).eps) < 1e-12 / 400, name
    assert ulp.rtol("float64") == tolerances.value_rtol(None, "float64")


def test_bad_names_raise_naming_the_table():
    with pytest.raises(KeyError, match="float64 ULP budget for op 'erf'"):
        tolerances.ulp_bound("erf", "float64")
    with pytest.raises(KeyError, match="no ULP budget for 'int8'"):
        tolerances.ulp_bound(None, "int8")
    with pytest.raises(ValueError, match="'roundings' must be >= 0"):
        tolerances.derived_rtol(-1, "float32")


# -- the one entry point: tolerances.bound ---------------------------------------------------

def test_bound_dispatches_to_the_table_with_the_numbers_of_before():
    """Every kind gives the number its check used before routing (issue 34 item 6): the
    table's budgets, and the literals that lived in test files, unchanged."""
    for op in tolerances.FLOAT64_OPS:
        b = tolerances.bound("ulp", np.float64, op=op)
        assert b.max_ulp == tolerances.ulp_bound(op, "float64") and b.atol == np.finfo(
            np.float64).tiny
        numpy_ref = tolerances.bound("ulp", np.float64, op=op, reference="numpy")
        assert numpy_ref.max_ulp == tolerances.ulp_bound(op, "float64") + 2
        assert tolerances.bound("value", np.float64, op=op).rtol == \
            tolerances.value_rtol(op, "float64")
    sin = tolerances.bound("ulp", np.float32, op="sin", scale=3.0)
    assert sin.max_ulp == 4 and sin.atol == np.finfo(np.float32).eps * 3.0
    for name in ("bfloat16", "float16", "float32", "complex64", "complex128"):
        dt = dtype_helpers.BY_NAME[name]
        assert tolerances.bound("value", dt.dtype, op="exp").rtol == dtype_helpers.tolerance(dt)
    value = tolerances.bound("value", np.float32, op="add", scale=4.0)
    assert value.atol == ulp.rtol("float32") * 4.0
    assert tolerances.bound("value", np.int32).rtol == 0.0
    exe = tolerances.bound("fixed", np.float32, check="executable_round_trip")
    assert (exe.rtol, exe.atol) == (1e-5, 1e-5)
    chol = tolerances.bound("fixed", np.float32, check="custom_call_cholesky")
    assert (chol.rtol, chol.atol) == (1e-4, 1e-4)
    res = tolerances.bound("residual", np.complex64)
    assert (res.threshold, res.atol, res.eps) == (30.0, 1e-30, float(np.finfo(np.float32).eps))
    assert tolerances.bound("pivot", np.float32).threshold == 1 + 1e-6
    assert tolerances.bound("pivot", np.complex64).threshold == np.sqrt(2) + 1e-6
    exact = tolerances.bound("exact", np.float32)
    assert (exact.max_ulp, exact.atol, exact.rtol) == (0, 0.0, 0.0)


def test_bound_running_error_kinds_are_error_bounds():
    x = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, 4.0]], np.float32)
    from conformance.helpers import error_bounds
    got = tolerances.bound("summation", x.dtype, x=x, axes=(1,),
                           controls=float_control_modes.XLA_CPU).error
    want = error_bounds.summation_bound(x, (1,), controls=float_control_modes.XLA_CPU)
    assert np.array_equal(got.abs, want.abs) and got.name == want.name
    got = tolerances.bound("product", x.dtype, x=x, axes=(1,),
                           controls=float_control_modes.XLA_CPU).error
    assert np.array_equal(got.abs, error_bounds.product_bound(
        x, (1,), controls=float_control_modes.XLA_CPU).abs)
    mag = np.abs(x).sum(axis=1)
    got = tolerances.bound("rounding", np.float32, magnitude=mag, roundings=4, name="r",
                           controls=float_control_modes.XLA_CPU)
    eps, tiny = float(np.finfo(np.float32).eps), float(np.finfo(np.float32).tiny)
    assert np.array_equal(got.error.abs, 4 * eps * mag + 4 * tiny)
    assertions.assert_within_bound(x.sum(axis=1), x.sum(axis=1), got, call="a Bound is accepted")
    with pytest.raises(TypeError, match="has no running error bound"):
        assertions.assert_within_bound(x, x, tolerances.bound("pivot", np.float32), call="c")


def test_bound_refuses_unknown_kinds_and_missing_declarations():
    with pytest.raises(ValueError, match="unknown kind 'ulps'; kinds: "):
        tolerances.bound("ulps", np.float32)
    with pytest.raises(TypeError, match="bound\\('exact'\\).*'op'"):
        tolerances.bound("exact", np.float32, op="exp")
    with pytest.raises(TypeError, match="bound\\('rounding'\\).*'controls'"):
        tolerances.bound("rounding", np.float32, magnitude=1.0, roundings=1, name="r")
    with pytest.raises(TypeError, match="'rtol'"):
        tolerances.bound("value", np.float32, rtol=1.0)
    with pytest.raises(KeyError, match="no fixed tolerance for 'x'"):
        tolerances.bound("fixed", np.float32, check="x")
    with pytest.raises(TypeError, match="not x's"):
        tolerances.bound("summation", np.float64, x=np.ones(2, np.float32), axes=(0,),
                         controls=float_control_modes.IEEE)


# -- the mpmath reference -------------------------------------------------------------------

def test_mpmath_reference_is_correctly_rounded():
    x = np.array([1.0, 0.5, 60.0, -3.0])
    # Python's float(decimal) of the exact constants is correctly rounded
    assert mpmath_reference.correctly_rounded("exp", [x[:1]], np.float64)[0] == math.e
    assert mpmath_reference.correctly_rounded("log", [np.array([2.0])], np.float64)[0] == \
        float("0.693147180559945309417232121458176568")
    assert mpmath_reference.correctly_rounded("cbrt", [x[3:]], np.float64)[0] == \
        float("-1.442249570307408382321638310780109588")
    # float32 rounds once from the exact value (not via float64)
    got = mpmath_reference.correctly_rounded("exp", [x], np.float32)
    exact64 = mpmath_reference.correctly_rounded("exp", [x], np.float64)
    assert got.dtype == np.float32 and np.all(ulp.ulp_distance(got, exact64.astype(np.float32))
                                              <= 1)
    assert np.isinf(mpmath_reference.correctly_rounded("exp", [np.array([800.0])], np.float64)[0])


def test_mpmath_reference_keeps_ieee_special_cases():
    out = mpmath_reference.correctly_rounded(
        "atan2", [np.array([0.0, -0.0, 1.0]), np.array([-0.0, 1.0, -np.inf])], np.float64)
    assert out[0] == np.pi and np.signbit(out[1]) and out[2] == np.pi
    assert np.isnan(mpmath_reference.correctly_rounded("log", [np.array([-1.0])], np.float64)[0])


def test_mpmath_reference_rejects_bad_arguments():
    with pytest.raises(KeyError, match="'erf' has no mpmath reference"):
        mpmath_reference.correctly_rounded("erf", [np.zeros(2)], np.float64)
    with pytest.raises(ValueError, match="shapes differ"):
        mpmath_reference.correctly_rounded("atan2", [np.zeros(2), np.zeros(3)], np.float64)


# -- just inside passes, just past fails: every class ----------------------------------------

def test_exact_class_allows_zero_ulp():
    want = np.array([1.5, -0.0, 3.0], np.float32)
    inside, past = _at_bound(want, 0.0)
    assertions.assert_ulp_close(inside, want, max_ulp=0, signed_zeros=True, call="exact")
    with pytest.raises(AssertionError, match="ULP"):
        assertions.assert_ulp_close(past, want, max_ulp=0, signed_zeros=True, call="exact")


@pytest.mark.parametrize("op", sorted(tolerances.FLOAT64_OPS))
def test_float64_ulp_budget_just_inside_and_just_past(op):
    """The accuracy area's check: ``ulp_bound(op)`` ULP from the mpmath result passes, one
    more fails."""
    arity = catalog.ELEMENTWISE[op].arity
    args = [np.array([0.7, 1.3]), np.array([0.4, 2.0])][:arity]
    want = mpmath_reference.correctly_rounded(op, args, np.float64)
    k = tolerances.ulp_bound(op, "float64")
    inside, past = want.copy(), want.copy()
    for _ in range(k):
        inside[0] = np.nextafter(inside[0], np.inf)
    past[0] = np.nextafter(inside[0], np.inf)
    tiny = float(np.finfo(np.float64).tiny)
    assertions.assert_ulp_close(inside, want, max_ulp=k, atol=tiny, call=op)
    with pytest.raises(AssertionError, match=f"{k + 1} ULP > {k} ULP"):
        assertions.assert_ulp_close(past, want, max_ulp=k, atol=tiny, call=op)


@pytest.mark.parametrize("op", sorted(tolerances.FLOAT64_OPS))
def test_float64_value_rtol_just_inside_and_just_past(op):
    """The execute area's float64 check: ``atol = rtol``, ``rtol = value_rtol(op)``."""
    rtol = tolerances.value_rtol(op, "float64")
    want = np.array([0.75, 2.0, -3.0])
    inside, past = _at_bound(want, rtol + rtol * np.abs(want))
    assertions.assert_allclose(inside, want, rtol=rtol, atol=rtol, call=op)
    with pytest.raises(AssertionError, match="max abs error"):
        assertions.assert_allclose(past, want, rtol=rtol, atol=rtol, call=op)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_dtype_rtol_just_inside_and_just_past(name):
    rtol = ulp.rtol(name)
    want = np.array([1.25, -7.0], name)
    inside, past = _at_bound(want, rtol * np.abs(want.astype(np.float64)))
    assertions.assert_allclose(inside, want, rtol=rtol, atol=0.0, call=name)
    with pytest.raises(AssertionError, match="in 1 of 2 elements"):
        assertions.assert_allclose(past, want, rtol=rtol, atol=0.0, call=name)


BOUNDED = [c for c in stablehlo_catalog.CASES
           if c.tolerance == stablehlo_catalog.APPROX and c.bound is not None]


@pytest.mark.parametrize("case", BOUNDED, ids=lambda c: c.id)
@pytest.mark.parametrize("name", ["float32", "float64"])
@settings(max_examples=5, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_derived_bound_just_inside_and_just_past(case, name, data):
    """A result at the derived bound of the case's first output passes the area's own
    comparison; one representable value further fails it."""
    if name not in case.dtypes:
        return
    dt = dtype_helpers.BY_NAME[name]
    args = case.inputs(data, dt)
    expected = case.reference(args)
    compare = stablehlo_compare.comparison(
        case, dt, args, expected, controls=float_control_modes.XLA_CPU)
    roundings, magnitude, *growth = case.bound(args)[0]
    want = case.view(expected[0])
    eps, tiny = float(ml_dtypes.finfo(dt.dtype).eps), float(ml_dtypes.finfo(dt.dtype).tiny)
    bound = (roundings + 1) * eps * np.asarray(magnitude, np.float64) + (roundings + 1) * tiny \
        * np.asarray(growth[0] if growth else 1.0, np.float64)
    inside, past = _at_bound(want, bound)
    compare(inside, expected[0], "inside")
    with pytest.raises(AssertionError, match=r"in 1 of \d+ elements by more than the"):
        probe = expected[0].copy()
        probe.flat[0] = past.flat[0]
        compare(probe, expected[0], "past")


def test_batch_norm_bound_allows_a_flushed_subnormal_mean_moved_by_the_normalisation():
    """Random-seed run 3303 (jaxlib 0.10.2): x of float64's smallest normals (one 0) has
    a subnormal mean, which XLA:CPU's declared FTZ flushes; the normalisation (1/sigma =
    31.6 at variance 0) moves that into y. Allowed (the bound's growth); a result 50x
    further off is not."""
    case = next(c for c in BOUNDED if c.op == "batch_norm_training")
    dt, tiny = dtype_helpers.BY_NAME["float64"], float(np.finfo(np.float64).tiny)
    x = np.full((4, 3), tiny)
    x[0, 0] = 0.0
    args = [x, np.ones(3), np.zeros(3)]
    expected = case.reference(args)
    compare = stablehlo_compare.comparison(
        case, dt, args, expected, controls=float_control_modes.XLA_CPU)
    flushed = x / np.sqrt(0.0 + 1e-3)           # mean and variance flushed to zero
    compare(flushed, expected[0], "flushed mean")
    with pytest.raises(AssertionError, match="by more than the"):
        compare(expected[0] + 50 * (flushed - expected[0]), expected[0], "far off")


def test_batch_norm_grad_bounds_allow_a_flushed_subnormal_mean():
    """batch_norm_grad with a subnormal mean input (float64 tiny/2) and x of smallest
    normals: a DAZ backend reads the mean as 0, so x - mean is off by tiny/2 and
    d_scale = sum(dy * xhat) by n * tiny/2 / sigma (1/sigma = 31.6 at variance 0).
    Every output of that computation is allowed (the bounds' growth); d_scale 50x further
    off is not."""
    case = next(c for c in BOUNDED if c.op == "batch_norm_grad")
    dt, tiny = dtype_helpers.BY_NAME["float64"], float(np.finfo(np.float64).tiny)
    x, dy = np.full((4, 3), tiny), np.ones((4, 3))
    args = [x, np.ones(3), np.full(3, tiny / 2), np.zeros(3), dy]
    expected = case.reference(args)
    flushed = case.reference([x, np.ones(3), np.zeros(3), np.zeros(3), dy])
    compare = stablehlo_compare.comparison(
        case, dt, args, expected, controls=float_control_modes.XLA_CPU)
    assert not np.array_equal(flushed[1], expected[1])  # the flush is visible in d_scale
    for got, want, name in zip(flushed, expected, ("dx", "d_scale", "d_offset")):
        compare(got, want, f"flushed mean: {name}")
    with pytest.raises(AssertionError, match="by more than the"):
        compare(expected[1] + 50 * (flushed[1] - expected[1]), expected[1], "far off")


def test_comparison_needs_the_inputs_of_a_derived_bound():
    case = next(c for c in BOUNDED if c.op == "batch_norm_inference")
    with pytest.raises(ValueError, match="derived bound; pass 'args' and 'expected'"):
        stablehlo_compare.comparison(
            case, dtype_helpers.BY_NAME["float32"], controls=float_control_modes.XLA_CPU)


def test_no_multiplier_is_left():
    assert not any(hasattr(c, "rtol_factor") for c in stablehlo_catalog.CASES)
    assert {c.op for c in BOUNDED} >= {"batch_norm_inference", "batch_norm_training",
                                       "batch_norm_grad", "dynamic_conv", "composite",
                                       "cholesky", "triangular_solve"}


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize("kind", ["inference", "training", "grad"])
def test_batch_norm_bound_rejects_zero_and_negated_outputs(kind, name):
    """The old x64 multiplier let an all-zero or negated bfloat16 output pass; the derived
    bound does not (inputs with a healthy variance)."""
    case = next(c for c in BOUNDED if c.op == f"batch_norm_{kind}")
    dt = dtype_helpers.BY_NAME[name]
    x = np.array([[-3.0, 1.0, 2.5], [1.0, -2.0, 0.5], [2.0, 3.0, -1.5], [-1.0, 0.25, 3.0]])
    scale, offset = np.array([1.5, -1.0, 0.75]), np.array([0.25, 0.5, -0.5])
    mean, var = x.mean(axis=0), x.var(axis=0)
    dy = np.array([[1.0, -0.5, 0.25], [-1.0, 2.0, 0.5], [0.5, 0.5, -2.0], [1.5, -1.0, 1.0]])
    args = {"inference": [x, scale, offset, mean, var], "training": [x, scale, offset],
            "grad": [x, scale, mean, var, dy]}[kind]
    args = [a.astype(dt.dtype) for a in args]
    expected = case.reference(args)
    compare = stablehlo_compare.comparison(
        case, dt, args, expected, controls=float_control_modes.XLA_CPU)
    compare(expected[0].copy(), expected[0], "reference itself")
    for wrong in (np.zeros_like(expected[0]), -expected[0]):
        with pytest.raises(AssertionError, match="by more than the"):
            compare(wrong, expected[0], "wrong")


def test_accuracy_survey_reports_every_op_against_its_budget(capsys):
    from conformance.programs import accuracy_survey
    rows = accuracy_survey.survey(seed=1, n=8)
    assert {r["op"] for r in rows} == set(tolerances.FLOAT64_OPS)
    assert all(r["budget"] == tolerances.ulp_bound(r["op"], r["dtype"]) for r in rows)
    with pytest.raises(ValueError, match="'n' must be >= 1"):
        accuracy_survey.survey(n=0)
