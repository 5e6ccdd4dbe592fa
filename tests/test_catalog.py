"""The one op catalog and the one tolerance table hold together."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance.helpers import dtype_helpers
from conformance.helpers import ulp
from conformance.programs import catalog


@pytest.mark.parametrize("name", sorted(ulp.TOLERANCE))
def test_rtol_is_never_tighter_than_the_ulp_bound(name):
    """1 ULP of a normal x is at most eps*|x|: a value check with ``rtol`` must accept
    every result that the ULP check accepts."""
    entry = ulp.TOLERANCE[name]
    real = ml_dtypes.finfo(dtype_helpers.BY_NAME[name].dtype)
    assert entry.rtol > 0 and entry.rtol >= (entry.ulp or 0) * float(real.eps), entry


def test_tolerance_lookups():
    assert dtype_helpers.tolerance(dtype_helpers.BY_NAME["int8"]) == 0.0
    assert dtype_helpers.tolerance(dtype_helpers.BY_NAME["bool"]) == 0.0
    for dt in dtype_helpers.FLOATS + dtype_helpers.COMPLEX:
        assert dtype_helpers.tolerance(dt) == ulp.rtol(dt.name) == ulp.TOLERANCE[dt.name].rtol
    assert ulp.max_ulp("float32") == ulp.TOLERANCE["float32"].ulp
    with pytest.raises(KeyError, match="no ULP tolerance for 'complex64'; table has .*float32"):
        ulp.max_ulp("complex64")
    with pytest.raises(KeyError, match="no tolerance for 'int4'"):
        ulp.rtol("int4")


def test_areas_select_from_the_one_catalog():
    with pytest.raises(ValueError, match="argument 'area' must be one of"):
        catalog.ops("kernels")
    for area in (catalog.EXECUTE, catalog.FLOAT_KERNELS, catalog.INT_KERNELS):
        assert catalog.ops(area), area
    assert all("float" in op.kinds for op in catalog.ops(catalog.FLOAT_KERNELS))
    assert all(op.int_reference for op in catalog.ops(catalog.INT_KERNELS))
    for op in catalog.ELEMENTWISE.values():
        assert op.tolerance in (catalog.EXACT, catalog.ULP, catalog.ARGUMENT_SCALED), op.name
        assert op.domain[0] < op.domain[1] and set(op.kinds) <= {
            "bool", "int", "uint", "float", "complex"}, op.name


_NUMPY_WRAPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                "negate": np.negative, "maximum": np.maximum, "minimum": np.minimum,
                "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
                "not": np.invert}


@pytest.mark.parametrize("name", sorted(_NUMPY_WRAPS))
@pytest.mark.parametrize("dt", dtype_helpers.INTS + dtype_helpers.UINTS, ids=lambda d: d.name)
def test_integer_references_wrap_like_numpy(name, dt):
    """The Python-integer references agree with NumPy's own two's complement arithmetic
    on the extremes and random values, in dtype and shape."""
    op = catalog.ELEMENTWISE[name]
    info = np.iinfo(dt.dtype)
    rng = np.random.default_rng(0)
    pool = np.concatenate([np.array([info.min, info.max, 0, 1], dt.dtype),
                           rng.integers(info.min, info.max, 60, dt.dtype, endpoint=True)])
    args = [pool.reshape(8, 8), np.roll(pool, 5).reshape(8, 8)][:op.arity]
    with np.errstate(over="ignore"):
        want = _NUMPY_WRAPS[name](*args)
    got = op.int_reference(*args)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def test_argument_scaled_ops_scale_with_each_argument():
    """Per element: one large argument does not loosen the bound of the others."""
    sin, exp = catalog.ELEMENTWISE["sin"], catalog.ELEMENTWISE["exp"]
    x = np.array([-40.0, 3.0, 0.25], np.float32)
    assert sin.arg_scale([x]).tolist() == [40.0, 3.0, 1.0] and exp.arg_scale([x]) == 1.0
    assert sin.arg_scale([np.zeros((0, 3))]).shape == (0, 3)


def test_exactness_by_kind():
    mul, sin = catalog.ELEMENTWISE["multiply"], catalog.ELEMENTWISE["sin"]
    assert mul.exact_on("float") and mul.exact_on("int") and not mul.exact_on("complex")
    assert not sin.exact_on("float") and sin.exact_on("int")
