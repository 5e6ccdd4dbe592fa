"""Each assertion helper, strategy and gate fails when it should, with a readable message."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import shape_helpers
from conformance.helpers import strategies


def test_bitwise_equal_passes_on_identical_bits():
    x = np.array([0.0, -0.0, np.nan, np.inf], np.float32)
    assertions.assert_bitwise_equal(x.copy(), x, call="c")


@pytest.mark.parametrize("out,expected,fragment", [
    (np.array([0.0], np.float32), np.array([-0.0], np.float32), "1 of 1 elements (bitwise)"),
    (np.array([1.0], np.float64), np.array([1.0], np.float32),
     "out.dtype=float64, but should be float32 [call(x)]"),
    (np.zeros((2, 3), np.int8), np.zeros((3, 2), np.int8),
     "out.shape=(2, 3), but should be (3, 2) [call(x)]"),
    (np.array([True, False]), np.array([True, True]), "at (1,): out=np.False_"),
    (np.array([1 + 2j], np.complex64), np.array([1 + 3j], np.complex64), "1 of 1 elements"),
    (np.array(3, np.int32), np.array(4, np.int32), "at (): out=np.int32(3), expected=np.int32(4)"),
])
def test_bitwise_equal_fails_with_message(out, expected, fragment):
    with pytest.raises(AssertionError) as info:
        assertions.assert_bitwise_equal(out, expected, call="call(x)")
    assert fragment in str(info.value), str(info.value)


def test_bitwise_equal_nan_payloads():
    quiet = np.array([np.nan], np.float32)
    payload = (quiet.view(np.uint32) | np.uint32(1)).view(np.float32)
    with pytest.raises(AssertionError):
        assertions.assert_bitwise_equal(payload, quiet, call="c")
    assertions.assert_bitwise_equal(payload, quiet, call="c", nan_payloads=False)
    with pytest.raises(AssertionError):  # NaN where a number is expected still fails
        assertions.assert_bitwise_equal(quiet, np.array([1.0], np.float32), call="c",
                                        nan_payloads=False)


def test_bitwise_equal_bfloat16_and_int4():
    b = np.array([1.5, -0.0], ml_dtypes.bfloat16)
    assertions.assert_bitwise_equal(b.copy(), b, call="c")
    with pytest.raises(AssertionError):
        assertions.assert_bitwise_equal(np.array([1.5, 0.0], ml_dtypes.bfloat16), b, call="c")
    i4 = np.array([-8, 7], ml_dtypes.int4)
    with pytest.raises(AssertionError):
        assertions.assert_bitwise_equal(np.array([-8, 6], ml_dtypes.int4), i4, call="c")


def test_allclose_tolerance_nan_inf():
    want = np.array([1.0, np.nan, np.inf, 0.0], np.float32)
    assertions.assert_allclose(want + np.float32(1e-7), want, rtol=1e-6, atol=1e-6, call="c")
    for got in ([1.1, np.nan, np.inf, 0.0], [1.0, 0.0, np.inf, 0.0], [1.0, np.nan, -np.inf, 0.0]):
        with pytest.raises(AssertionError, match=r"\[c\]"):
            assertions.assert_allclose(np.array(got, np.float32), want,
                                       rtol=1e-6, atol=1e-6, call="c")


def test_allclose_complex_components():
    want = np.array([complex(np.nan, np.inf)], np.complex64)
    assertions.assert_allclose(want.copy(), want, rtol=0, atol=0, call="c")
    with pytest.raises(AssertionError):
        assertions.assert_allclose(np.array([complex(np.nan, -np.inf)], np.complex64), want, rtol=0,
                                   atol=0, call="c")


def test_exact_fails_on_integer_difference():
    with pytest.raises(AssertionError, match="1 of 3 elements"):
        assertions.assert_exact(np.array([1, 2, 3]), np.array([1, 2, 4]), call="c")


def test_strategies_validate_arguments():
    with pytest.raises(ValueError, match="min_dims"):
        strategies.shapes(min_dims=3, max_dims=1)
    with pytest.raises(ValueError, match="min_value"):
        strategies.finite_arrays(dtype_helpers.BY_NAME["float32"], (2,), min_value=2, max_value=1)
    with pytest.raises(TypeError, match="argument 'dt'"):
        strategies.bit_patterns(np.float32, (2,))
    with pytest.raises(ValueError, match="layout"):
        shape_helpers.with_layout(np.zeros(3), "diagonal")


@given(x=strategies.finite_arrays(dtype_helpers.BY_NAME["bfloat16"], (4,), min_value=-2.0,
                                  max_value=3.0))
def test_finite_arrays_respect_dtype_and_bounds(x):
    assert x.dtype == ml_dtypes.bfloat16
    assert np.all(x.astype(np.float32) >= -2.0) and np.all(x.astype(np.float32) <= 3.0)


@pytest.mark.parametrize("layout", shape_helpers.LAYOUTS)
def test_layouts_keep_values(layout):
    x = np.arange(24, dtype=np.int16).reshape(4, 6)
    y = shape_helpers.with_layout(x, layout)
    assert np.array_equal(x, y)
    if layout != "c":
        assert not y.flags.c_contiguous


def test_gate_skips_capability_but_not_core():
    with pytest.raises(pytest.skip.Exception, match="not_supported: capability bf16"):
        with capabilities.gated(dtype_helpers.BY_NAME["bfloat16"], "call"):
            raise ValueError("no bf16 here")
    with pytest.raises(ValueError):
        with capabilities.gated(dtype_helpers.BY_NAME["float32"], "call"):
            raise ValueError("core dtypes are mandatory")
    with pytest.raises(AssertionError):  # wrong results are never gated
        with capabilities.gated(dtype_helpers.BY_NAME["bfloat16"], "call"):
            raise AssertionError("wrong result")


# -- ULP ------------------------------------------------------------------------------------

def _next(x, n=1):
    """``x`` moved ``n`` representable values up (ml_dtypes implements nextafter too)."""
    for _ in range(n):
        x = np.nextafter(x, np.full_like(x, np.inf))
    return x


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
def test_ulp_distance_counts_representable_steps(dtype):
    from conformance.helpers.ulp import ulp_distance

    x = np.array([1.0, -3.5, 0.0, 1e-3], dtype)
    y = np.array([_next(x[i:i + 1], i + 1)[0] for i in range(4)], dtype)
    assert ulp_distance(x, y).tolist() == [1, 2, 3, 4]
    assert ulp_distance(np.array([0.0], dtype), np.array([-0.0], dtype)).tolist() == [0]


def test_ulp_close_passes_within_tolerance_and_on_matching_specials():
    want = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
    got = want.copy()
    got[0] = _next(np.array([1.0], np.float32), 2)[0]
    assertions.assert_ulp_close(got, want, max_ulp=2, call="c")


@pytest.mark.parametrize("got,want,kw,fragment", [
    (np.array([1.0 + 3 * 2**-23], np.float32), np.array([1.0], np.float32), dict(max_ulp=2),
     "max 3 ULP > 2 ULP"),
    (np.array([np.finfo(np.float32).max], np.float32), np.array([np.inf], np.float32),
     dict(max_ulp=4), "1 of 1 elements"),
    (np.array([0.0], np.float32), np.array([np.nan], np.float32), dict(max_ulp=4), "1 of 1"),
    (np.array([np.nan], np.float32), np.array([0.0], np.float32), dict(max_ulp=4), "1 of 1"),
    (np.array([-0.0], np.float32), np.array([0.0], np.float32),
     dict(max_ulp=0, signed_zeros=True), "signed zeros"),
    (np.array([1 + 1j], np.complex64), np.array([1 + 1.5j], np.complex64), dict(max_ulp=4),
     "1 of 1"),
    (np.array([1.0], np.float64), np.array([1.0], np.float32), dict(max_ulp=4),
     "out.dtype=float64"),
])
def test_ulp_close_fails_with_message(got, want, kw, fragment):
    with pytest.raises(AssertionError) as info:
        assertions.assert_ulp_close(got, want, call="call(x)", **kw)
    assert fragment in str(info.value) and "[call(x)]" in str(info.value), str(info.value)


def test_ulp_close_atol_admits_small_absolute_errors():
    assertions.assert_ulp_close(np.array([1e-30], np.float32), np.array([0.0], np.float32),
                                max_ulp=0, atol=1e-20, call="c")


def test_ordered_bits_rejects_integers():
    from conformance.helpers.ulp import ordered_bits

    with pytest.raises(TypeError, match="argument 'x' must be a float array, got int32"):
        ordered_bits(np.array([1], np.int32))


def test_within_bound_passes_inside_and_fails_outside_with_message():
    want = np.array([1.0, 2.0, 3.0], np.float32)
    assertions.assert_within_bound(want + np.float32(0.1), want, np.full(3, 0.2), bound_name="b",
                                   call="c")
    with pytest.raises(AssertionError, match=r"1 of 3 elements by more than the k\*eps bound "
                                             r"\(worst excess 0\.3\) \[call\(x\)\]"):
        got = want.copy()
        got[1] += np.float32(0.5)
        assertions.assert_within_bound(got, want, np.full(3, 0.2), bound_name="k*eps",
                                       call="call(x)")
    with pytest.raises(AssertionError, match="1 of 1 elements"):
        assertions.assert_within_bound(np.array([np.nan]), np.array([1.0]), np.array([1e9]),
                                       bound_name="b", call="c")
    with pytest.raises(AssertionError, match="out.dtype=float64"):
        assertions.assert_within_bound(want.astype(np.float64), want, np.ones(3), bound_name="b",
                                       call="c")


def test_residual_ratio_passes_small_and_fails_large_or_nan():
    eps = float(np.finfo(np.float32).eps)
    assertions.assert_residual_ratio(np.full((4, 4), eps), 1.0, n=4,
                                     eps=eps, what="A - LU", call="c")
    with pytest.raises(AssertionError, match=r"A - LU: residual ratio .* = 100, above LAPACK's "
                                             r"threshold 30 .*\[call\(x\)\]"):
        assertions.assert_residual_ratio(np.full((4, 4), 100 * eps), 4.0, n=1, eps=eps,
                                         what="A - LU", call="call(x)")
    with pytest.raises(AssertionError, match="nan"):
        assertions.assert_residual_ratio(
            np.full((2, 2), np.nan), 1.0, n=2, eps=eps, what="r", call="c")


def test_subnormals_are_found_and_flushed_with_their_sign():
    from conformance.helpers.ulp import flush_subnormals, is_subnormal

    fi = np.finfo(np.float32)
    x = np.array([fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, 0.0, 1.0, np.nan],
                 np.float32)
    assert is_subnormal(x).tolist() == [True, True, False, False, False, False]
    out = flush_subnormals(x)
    assert out.dtype == np.float32 and out[:2].tolist() == [0.0, 0.0]
    assert np.signbit(out[:2]).tolist() == [False, True] and np.array_equal(out[2:], x[2:],
                                                                             equal_nan=True)
    assert not is_subnormal(np.array([0, 1], np.int8)).any()


def test_within_bound_matches_nan_and_infinities_without_nan_excess():
    want = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    assertions.assert_within_bound(want.copy(), want, np.zeros(4), bound_name="b", call="c")
    for got in ([-np.inf, -np.inf, np.nan, 1.0], [np.inf, -np.inf, 1.0, 1.0],
                [np.inf, -np.inf, np.nan, np.inf], [3e38, -np.inf, np.nan, 1.0]):
        with pytest.raises(AssertionError, match="1 of 4 elements"):
            assertions.assert_within_bound(np.array(got, np.float32), want, np.full(4, 1e30),
                                           bound_name="b", call="c")
    with pytest.raises(TypeError, match="bound_name"):
        assertions.assert_within_bound(want, want, np.zeros(4), call="c")
