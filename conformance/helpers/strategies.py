"""Hypothesis strategies for arrays, shapes and host values (alias ``hh``).

Built on ``hypothesis.extra.numpy``. Arguments are validated up front; errors
name the argument.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.helpers import dtype_helpers as dh
from conformance.helpers import shape_helpers as sh


def _check_dtype(dt: Any, fn: str) -> dh.DType:
    if not isinstance(dt, dh.DType):
        raise TypeError(f"{fn}: argument 'dt' must be a dtype_helpers.DType, got {dt!r}")
    return dt


def shapes(*, min_dims: int = 0, max_dims: int = 4, min_side: int = 0,
           max_side: int = 6) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, 0-d and zero-size included by default."""
    if not 0 <= min_dims <= max_dims:
        raise ValueError(f"shapes: need 0 <= min_dims <= max_dims, got {min_dims}, {max_dims}")
    if not 0 <= min_side <= max_side:
        raise ValueError(f"shapes: need 0 <= min_side <= max_side, got {min_side}, {max_side}")
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def bit_patterns(dt: dh.DType, shape: tuple[int, ...] | st.SearchStrategy) -> st.SearchStrategy:
    """Arrays of ``dt`` whose elements are arbitrary valid bit patterns.

    Floats include NaNs with payloads, both zeros, subnormals and infinities;
    bool is 0/1; 4-bit types use their 16 valid codes.
    """
    dt = _check_dtype(dt, "bit_patterns")
    if dt.kind == "bool":
        return hnp.arrays(np.bool_, shape)
    if dh.is_subbyte(dt.dtype):
        info_lo, info_hi = (-8, 7) if dt.kind == "int" else (0, 15)
        if dt.kind == "float":
            return hnp.arrays(np.uint8, shape, elements=st.integers(0, 15)).map(
                lambda a: a.view(dt.dtype))
        return hnp.arrays(np.int8, shape, elements=st.integers(info_lo, info_hi)).map(
            lambda a: a.astype(dt.dtype))
    if dt.kind == "complex":  # (real, imag) bit pairs, viewed without arithmetic
        raw = dh.uint_view_dtype(dh.real_dtype(dt))
        shape_st = shape if isinstance(shape, st.SearchStrategy) else st.just(tuple(shape))
        return shape_st.flatmap(lambda s: hnp.arrays(raw, tuple(s) + (2,))).map(
            lambda a: np.ascontiguousarray(a).view(dt.dtype)[..., 0])
    raw = dh.uint_view_dtype(dt.dtype)
    return hnp.arrays(raw, shape).map(lambda a: a.view(dt.dtype))


def finite_arrays(dt: dh.DType, shape: tuple[int, ...] | st.SearchStrategy, *,
                  min_value: float | None = None,
                  max_value: float | None = None) -> st.SearchStrategy:
    """Arrays of ``dt`` with finite values in [min_value, max_value].

    Integer bounds default to the dtype's range; float bounds to +-1e3 (complex:
    both components). Values of narrow floats (bfloat16, float16) are drawn as
    float32 and rounded to ``dt``.
    """
    dt = _check_dtype(dt, "finite_arrays")
    if min_value is not None and max_value is not None and min_value > max_value:
        raise ValueError(f"finite_arrays: min_value={min_value} > max_value={max_value}")
    if dt.kind == "bool":
        return hnp.arrays(np.bool_, shape)
    if dt.kind in ("int", "uint"):
        info = ml_dtypes.iinfo(dt.dtype)
        lo = info.min if min_value is None else max(int(min_value), int(info.min))
        hi = info.max if max_value is None else min(int(max_value), int(info.max))
        if dh.is_subbyte(dt.dtype):
            return hnp.arrays(np.int8, shape, elements=st.integers(lo, hi)).map(
                lambda a: a.astype(dt.dtype))
        return hnp.arrays(dt.dtype, shape, elements=st.integers(lo, hi))
    lo = -1e3 if min_value is None else min_value
    hi = 1e3 if max_value is None else max_value
    real = dh.real_dtype(dt)
    width = 32 if real.itemsize < 4 or real == np.dtype(np.float32) else 64
    if width == 32:  # bounds must be float32 values inside [lo, hi]
        lo32, hi32 = np.float32(lo), np.float32(hi)
        lo = float(lo32 if lo32 >= lo else np.nextafter(lo32, np.float32(np.inf)))
        hi = float(hi32 if hi32 <= hi else np.nextafter(hi32, np.float32(-np.inf)))
    floats = st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False,
                       allow_subnormal=False)
    if dt.kind == "complex":
        return hnp.arrays(dt.dtype, shape, elements=st.builds(complex, floats, floats))
    draw_dtype = np.float32 if width == 32 else np.float64
    lo_t, hi_t = np.asarray(lo).astype(dt.dtype), np.asarray(hi).astype(dt.dtype)

    def narrow(a: np.ndarray) -> np.ndarray:  # rounding may leave [lo, hi]: clamp after
        out = a.astype(dt.dtype)
        out[out < lo_t] = lo_t
        out[out > hi_t] = hi_t
        return out
    return hnp.arrays(draw_dtype, shape, elements=floats).map(narrow)


class PythonValue(NamedTuple):
    """A Python scalar or nested list and the numpy array it denotes."""

    value: Any
    expected: np.ndarray


def python_values() -> st.SearchStrategy[PythonValue]:
    """Python bools, ints (int64 range), floats, complex numbers and flat/nested lists."""
    ints = st.integers(-(2**63), 2**63 - 1)
    floats = st.floats(allow_nan=False, width=64)
    scalars = st.one_of(st.booleans(), ints, floats,
                        st.builds(complex, floats, floats))
    lists = st.one_of(st.lists(ints, max_size=8), st.lists(floats, max_size=8),
                      st.lists(st.lists(floats, min_size=3, max_size=3), min_size=1,
                               max_size=4))
    return st.one_of(scalars, lists).map(lambda v: PythonValue(v, np.asarray(v)))


def layouts() -> st.SearchStrategy[str]:
    """Host memory layouts of ``shape_helpers.LAYOUTS``."""
    return st.sampled_from(sh.LAYOUTS)
