"""error_bounds: the bounds accept what a healthy backend returns (flushed subnormals,
subnormal partial products, honest overflows) and reject results a few ULP off, wrong
infinities and wrong zeros."""

import ml_dtypes
import numpy as np
import pytest

from conformance.helpers import assertions
from conformance.helpers import float_control_modes

#: The flushing declaration (XLA:CPU's): the bounds below accept flushed subnormals
#: under it; tests/test_float_controls.py shows an IEEE declaration rejects them.
FLUSHING = float_control_modes.XLA_CPU


def _prod_check(x, out, axes=(0,), controls=FLUSHING):
    from conformance.helpers.error_bounds import product_bound

    with np.errstate(over="ignore"):
        wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
        expected = np.asarray(np.prod(wide, axis=axes)).astype(x.dtype)
    assertions.assert_within_bound(np.asarray(out, x.dtype).reshape(expected.shape), expected,
                                   product_bound(x, axes, controls=controls), call="c")


def test_product_bound_accepts_flushed_and_subnormal_partial_products():
    bf = ml_dtypes.bfloat16
    tiny = float(ml_dtypes.finfo(bf).tiny)
    x = np.array([tiny, 0.5, 1, 1, 1], bf)  # tiny/2 is subnormal: FTZ gives 0
    _prod_check(x, [0.0])
    _prod_check(x, [tiny / 2])
    # float64: 2.2e-308 * 0.3 rounds to the subnormal grid (relative error ~1e-16 * 1e8)
    x64 = np.array([2.2250738585072014e-308, 0.3, 0.7], np.float64)
    sequential = np.float64(np.float64(x64[0] * x64[1]) * x64[2])
    _prod_check(x64, [sequential])
    _prod_check(x64, [0.0])


def test_product_bound_accepts_matching_and_honest_infinities():
    f16 = np.array([300.0, 300.0, 1.0], np.float16)  # exact 90000 > max: expected inf
    _prod_check(f16, [np.inf])
    # [2]*17 + [1/4]: sequential float16 overflows at 2**16, exact product 2**15 is finite
    seq = np.array([2.0] * 17 + [0.25], np.float16)
    _prod_check(seq, [np.inf])
    _prod_check(seq, [2.0**15])
    zero = np.array([2.0] * 17 + [0.0], np.float16)  # inf * 0 after an honest overflow
    _prod_check(zero, [np.nan])
    _prod_check(zero, [0.0])


@pytest.mark.parametrize("x,out", [
    (np.array([1.5, 1.25, 3.0], np.float32), 5.625 * (1 + 16 * 2**-23)),  # 16 ULP off
    (np.array([0.5, 0.25], np.float32), 0.0),             # a wrong zero: no underflow possible
    (np.array([2.0, 3.0], np.float16), np.inf),           # a wrong inf: no overflow possible
    (np.array([300.0, 300.0], np.float16), -np.inf),      # the wrong infinity
    (np.array([300.0, 300.0], np.float16), 65504.0),      # finite far from the exact 90000
    (np.array([2.0, 3.0], np.float16), np.nan),           # NaN without an overflow
    (np.array([2.0] * 17 + [0.25], np.float16), -np.inf),  # overflow keeps the sign
])
def test_product_bound_rejects_wrong_values(x, out):
    with pytest.raises(AssertionError, match=r"by more than the \(n\+1\)\*eps\*prod"):
        _prod_check(x, [out])


def test_rounding_bound_allows_flushed_subnormal_outputs_but_not_wrong_zeros():
    from conformance.helpers.error_bounds import rounding_bound

    tiny32 = float(np.finfo(np.float32).tiny)
    x = np.array([3 * tiny32, -2.5 * tiny32, 0.75 * tiny32], np.float32)  # rfft-like sums
    exact = np.array([x.astype(np.float64).sum()]).astype(np.float32)  # 1.25 tiny: normal
    half = np.array([x[:2].astype(np.float64).sum()]).astype(np.float32)  # 0.5 tiny: subnormal
    mag = np.abs(x.astype(np.float64)).sum(keepdims=True)
    bound = rounding_bound(np.float32, mag, roundings=3, name="3*eps*sum|x| + 3*tiny",
                           controls=FLUSHING)
    assertions.assert_within_bound(np.zeros(1, np.float32), half, bound, call="c")  # flushed
    assertions.assert_within_bound(exact.copy(), exact, bound, call="c")
    big = rounding_bound(np.float32, np.array([3.0]), roundings=3, name="b", controls=FLUSHING)
    with pytest.raises(AssertionError, match="worst excess"):
        assertions.assert_within_bound(np.zeros(1, np.float32),
                                       np.ones(1, np.float32), big, call="c")
    one_off = np.array([1.0 + 2**-23 * 64], np.float32)  # 64 ULP: beyond 3*eps*3
    with pytest.raises(AssertionError, match="worst excess"):
        assertions.assert_within_bound(one_off, np.ones(1, np.float32), big, call="c")


def test_error_bound_helpers_validate_arguments():
    from conformance.helpers.error_bounds import float_limits, product_bound, rounding_bound

    with pytest.raises(TypeError, match="argument 'dtype'"):
        float_limits(np.int32)
    with pytest.raises(ValueError, match="'roundings'"):
        rounding_bound(np.float32, 1.0, roundings=-1, name="b", controls=FLUSHING)
    with pytest.raises(TypeError, match="argument 'x'"):
        product_bound(np.ones(3, np.int32), (0,), controls=FLUSHING)
    with pytest.raises(ValueError, match="argument 'axes'"):
        product_bound(np.ones(3, np.float32), (1,), controls=FLUSHING)
    with pytest.raises(TypeError, match="controls"):   # the declaration is never assumed
        rounding_bound(np.float32, 1.0, roundings=1, name="b")


def test_product_bound_complex_overflow_may_give_any_non_finite_value():
    z = np.array([1 + 1.9j] * 200, np.complex64)  # |z|**200 overflows complex64
    _prod_check(z, [complex(np.nan, -np.inf)])
    with pytest.raises(AssertionError, match="non-finite"):  # no overflow possible
        _prod_check(np.array([1 + 1j, 2 - 1j], np.complex64), [complex(np.nan, -np.inf)])
