"""Hypothesis strategies for arrays, shapes and host values.

Built on ``hypothesis.extra.numpy``. Arguments are validated up front; errors
name the argument.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import hypothesis
import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance.helpers import dtype_helpers
from conformance.helpers import shape_helpers


def _check_dtype(dt: Any, fn: str) -> dtype_helpers.DType:
    if not isinstance(dt, dtype_helpers.DType):
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


#: Common tile, vector and block widths; sizes one below, at and one above each straddle them.
BLOCKS = (8, 16, 32, 64, 128, 256, 1024, 4096)
BOUNDARY_SIZES = tuple(b + d for b in BLOCKS for d in (-1, 0, 1))
#: Every boundary size once, as 2-d shapes of at most 37K elements (smallest with largest),
#: for tests that pin the boundary cases in every run.
BOUNDARY_PAIRS = tuple(zip(BOUNDARY_SIZES[:12], BOUNDARY_SIZES[::-1][:12]))


def profile_name() -> str:
    """Name of the active Hypothesis settings profile (``ci``, ``dev``, ``nightly``, ...)."""
    return str(getattr(hypothesis.settings, "_current_profile", None) or "default")


def element_budget(ci: int, nightly: int) -> int:
    """The element budget of one example: ``nightly`` under the ``nightly`` profile,
    ``ci`` under every other profile. Raises ValueError unless 1 <= ci <= nightly."""
    if not 1 <= ci <= nightly:
        raise ValueError(f"element_budget: need 1 <= ci <= nightly, got ci={ci}, "
                         f"nightly={nightly}")
    return nightly if profile_name() == "nightly" else ci


def axis_sizes(max_size: int, *, min_size: int = 0) -> st.SearchStrategy[int]:
    """Sizes of one axis in [min_size, max_size]: small ones, the boundary sizes
    (``BOUNDARY_SIZES``, and ``2**k - 1 .. 2**k + 1`` above them) and any size between."""
    if not 0 <= min_size <= max_size:
        raise ValueError(f"axis_sizes: need 0 <= min_size <= max_size, got {min_size}, "
                         f"{max_size}")
    above = [2**k + d for k in range(13, max(max_size, 1).bit_length() + 1) for d in (-1, 0, 1)]
    edges = [s for s in BOUNDARY_SIZES + tuple(above) if min_size <= s <= max_size]
    small = st.integers(min_size, min(max_size, max(min_size, 6)))
    return st.one_of([small] + ([st.sampled_from(edges)] if edges else [])
                     + [st.integers(min_size, max_size)])


def long_axis_shapes(budget: int, *, min_dims: int = 1, max_dims: int = 3,
                     short_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes with one long axis (``axis_sizes``) and short other axes (1..short_side),
    at most ``budget`` elements in all. Raises ValueError on bad bounds."""
    if not 1 <= min_dims <= max_dims or budget < 1 or short_side < 1:
        raise ValueError(f"long_axis_shapes: need 1 <= min_dims <= max_dims, budget >= 1, "
                         f"short_side >= 1; got {min_dims}, {max_dims}, {budget}, {short_side}")

    @st.composite
    def build(draw) -> tuple[int, ...]:
        ndim = draw(st.integers(min_dims, max_dims), label="ndim")
        shape = [draw(st.integers(1, short_side), label="short side") for _ in range(ndim)]
        long_axis = draw(st.integers(0, ndim - 1), label="long axis")
        rest = int(np.prod(shape)) // shape[long_axis]
        shape[long_axis] = draw(axis_sizes(max(budget // rest, 1)), label="long side")
        return tuple(shape)
    return build()


def seeded_arrays(dt: dtype_helpers.DType, shape: tuple[int, ...], *, min_value: float,
                  max_value: float, integral: bool = False,
                  values: tuple[float, ...] | None = None) -> st.SearchStrategy:
    """Large arrays of ``dt`` in [min_value, max_value], fast to draw at any size.

    The bulk comes from a drawn seed (uniform, complex: both parts; integer-valued
    if ``integral``; or picked from ``values``, real), and up to 8 elements, at
    drawn positions (first and last included), are drawn by ``finite_arrays`` so
    the edge values of the range appear and shrink. Every drawn number is shown with its label.
    """
    dt = _check_dtype(dt, "seeded_arrays")
    if min_value > max_value:
        raise ValueError(f"seeded_arrays: min_value={min_value} > max_value={max_value}")
    size = int(np.prod(shape))
    if dt.kind in ("int", "uint"):
        info = ml_dtypes.iinfo(dt.dtype)
        min_value, max_value = max(min_value, int(info.min)), min(max_value, int(info.max))

    @st.composite
    def build(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
        if values is not None:
            flat = rng.choice(np.asarray(values, np.float64), size)
        elif integral or dt.kind in ("int", "uint", "bool"):
            lo, hi = int(np.ceil(min_value)), int(np.floor(max_value))
            flat = rng.integers(lo, hi + 1, size,  # uint64 values past int64's range too
                                dtype=np.uint64 if hi >= 2**63 else np.int64)
        else:
            flat = rng.uniform(min_value, max_value, size)
        if flat.dtype.kind == "f":
            flat = np.clip(flat, min_value, max_value)
        if dt.kind == "complex" and values is None:
            flat = flat + 1j * rng.uniform(min_value, max_value, size)
        flat = flat.astype(dt.dtype)
        if size:
            where = draw(st.lists(st.sampled_from(sorted({0, size - 1, size // 2})) |
                                  st.integers(0, size - 1), max_size=8), label="positions")
            if where:
                edge = draw(finite_arrays(dt, (len(where),), min_value=min_value,
                                          max_value=max_value), label="edge values")
                flat[where] = edge
        return flat.reshape(shape)
    return build()


def bit_patterns(dt: dtype_helpers.DType,
                 shape: tuple[int, ...] | st.SearchStrategy) -> st.SearchStrategy:
    """Arrays of ``dt`` whose elements are arbitrary valid bit patterns.

    Floats include NaNs with payloads, both zeros, subnormals and infinities;
    bool is 0/1; 4-bit types use their 16 valid codes.
    """
    dt = _check_dtype(dt, "bit_patterns")
    if dt.kind == "bool":
        return hnp.arrays(np.bool_, shape)
    if dtype_helpers.is_subbyte(dt.dtype):
        info_lo, info_hi = (-8, 7) if dt.kind == "int" else (0, 15)
        if dt.kind == "float":
            return hnp.arrays(np.uint8, shape, elements=st.integers(0, 15)).map(
                lambda a: a.view(dt.dtype))
        return hnp.arrays(np.int8, shape, elements=st.integers(info_lo, info_hi)).map(
            lambda a: a.astype(dt.dtype))
    if dt.kind == "complex":  # (real, imag) bit pairs, viewed without arithmetic
        raw = dtype_helpers.uint_view_dtype(dtype_helpers.real_dtype(dt))
        shape_st = shape if isinstance(shape, st.SearchStrategy) else st.just(tuple(shape))
        return shape_st.flatmap(lambda s: hnp.arrays(raw, tuple(s) + (2,))).map(
            lambda a: np.ascontiguousarray(a).view(dt.dtype)[..., 0])
    raw = dtype_helpers.uint_view_dtype(dt.dtype)
    return hnp.arrays(raw, shape).map(lambda a: a.view(dt.dtype))


def grid_shapes(budget: int, *, min_dims: int = 2, max_dims: int = 3,
                min_side: int = 1) -> st.SearchStrategy[tuple[int, ...]]:
    """Non-square shapes of ``min_dims..max_dims`` axes, each axis drawn by
    ``axis_sizes`` (so one below, at and one above tile and block widths) within what
    is left of ``budget`` elements; a shape whose axes all came out equal gets one
    added to its last axis (still within the budget, or one taken from it).
    Raises ValueError on bad bounds."""
    if not 1 <= min_dims <= max_dims or min_side < 1 or budget < min_side ** max_dims + 1:
        raise ValueError(f"grid_shapes: need 1 <= min_dims <= max_dims, min_side >= 1 and "
                         f"budget > min_side**max_dims; got {min_dims}, {max_dims}, "
                         f"{min_side}, {budget}")

    @st.composite
    def build(draw) -> tuple[int, ...]:
        ndim = draw(st.integers(min_dims, max_dims), label="ndim")
        order = draw(st.permutations(range(ndim)), label="axis order")
        shape = [min_side] * ndim
        for i, axis in enumerate(order):  # the first drawn axes may take most of the budget
            rest = int(np.prod([shape[a] for a in order[i + 1:]], dtype=np.int64))
            others = int(np.prod([shape[a] for a in order[:i]], dtype=np.int64))
            shape[axis] = draw(axis_sizes(max(budget // (others * rest), min_side),
                                          min_size=min_side), label="side")
        if ndim > 1 and len(set(shape)) == 1:
            grown = shape[:-1] + [shape[-1] + 1]
            shape = grown if np.prod(grown) <= budget else shape[:-1] + [max(shape[-1] - 1,
                                                                             min_side)]
            if len(set(shape)) == 1:  # min_side**ndim: grow the last axis anyway
                shape[-1] += 1
        return tuple(shape)
    return build()


def special_bit_patterns(dt: dtype_helpers.DType) -> np.ndarray:
    """Bit patterns of ``dt`` that data movement must keep (a 1-d array of ``dt``).

    Floats (complex: as either component): both zeros, the smallest and largest
    subnormal, the smallest normal, the largest finite value and every pattern of an
    all-ones exponent with mantissa 0, 1, the top bit, the top bit plus 1 and all ones,
    of both signs (infinities, quiet and signaling NaNs with payloads, or the top binade
    where a format has no infinities). Integers: 0, 1, -1 (all ones), min and max.
    bool: False, True. 4-bit types: all 16 codes; 8-bit floats: all 256 codes.
    """
    dt = _check_dtype(dt, "special_bit_patterns")
    if dt.kind == "bool":
        return np.array([False, True])
    if dtype_helpers.is_subbyte(dt.dtype):
        return np.arange(16, dtype=np.uint8).view(dt.dtype) if dt.kind == "float" else \
            np.arange(-8 if dt.kind == "int" else 0, 8 if dt.kind == "int" else 16,
                      dtype=np.int8).astype(dt.dtype)
    if dt.kind in ("int", "uint"):
        info = ml_dtypes.iinfo(dt.dtype)
        return np.unique(np.array([0, 1, info.max, info.min] + ([-1] if dt.kind == "int"
                                                                else []), dtype=dt.dtype))
    real = dtype_helpers.real_dtype(dt)
    if real.itemsize == 1:  # fp8: all 256 codes
        return np.arange(256, dtype=np.uint8).view(dt.dtype)
    width, nmant = real.itemsize * 8, int(ml_dtypes.finfo(real).nmant)
    exp_ones = ((1 << (width - 1 - nmant)) - 1) << nmant
    top = 1 << (nmant - 1)
    low = [0, 1, (1 << nmant) - 1, 1 << nmant, exp_ones - 1]
    high = [exp_ones | m for m in (0, 1, top, top | 1, (1 << nmant) - 1)]
    bits = np.array(sorted({c for m in low + high for c in (m, m | 1 << (width - 1))}),
                    dtype=dtype_helpers.uint_view_dtype(real))
    return _complex_pairs(bits.view(real), dt.dtype) if dt.kind == "complex" else \
        bits.view(dt.dtype)


def _complex_pairs(parts: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Complex values with each of ``parts`` as the real part (imaginary: the next part)
    and as the imaginary part, bits untouched (no arithmetic)."""
    out = np.empty(2 * parts.size, dtype)
    pairs = out.view(parts.dtype).reshape(-1, 2)
    pairs[:parts.size, 0], pairs[:parts.size, 1] = parts, np.roll(parts, 1)
    pairs[parts.size:, 0], pairs[parts.size:, 1] = np.roll(parts, 2), parts
    return out


def seeded_bit_patterns(dt: dtype_helpers.DType, shape: tuple[int, ...]) -> st.SearchStrategy:
    """Arrays of ``dt`` with arbitrary valid bit patterns, fast to draw at any size.

    The bulk is random bits from a drawn seed (bool: 0/1; 4-bit types: their 16 codes;
    complex: both components), and every pattern of :func:`special_bit_patterns` (NaN
    payloads, subnormals, both zeros...) is written at drawn positions when the array
    has room (first and last element included), so no example misses them.
    """
    dt = _check_dtype(dt, "seeded_bit_patterns")
    size = int(np.prod(shape, dtype=np.int64))
    specials = special_bit_patterns(dt)

    @st.composite
    def build(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
        if dt.kind == "bool":
            flat = rng.integers(0, 2, size).astype(np.bool_)
        elif dtype_helpers.is_subbyte(dt.dtype):
            codes = rng.integers(0, 16, size).astype(np.uint8)
            flat = codes.view(dt.dtype) if dt.kind == "float" else \
                (codes.astype(np.int8) - (8 if dt.kind == "int" else 0)).astype(dt.dtype)
        else:
            flat = rng.integers(0, 256, size * dt.dtype.itemsize, dtype=np.uint8).view(dt.dtype)
        if size:
            ends = sorted({0, size - 1})
            inner = rng.choice(np.arange(1, size - 1), min(max(size - 2, 0),
                                                           specials.size - len(ends)),
                               replace=False) if size > 2 else np.zeros(0, np.int64)
            where = np.concatenate([ends, inner]).astype(np.int64)
            flat[where] = specials[rng.permutation(specials.size)[:where.size]]
        return flat.reshape(shape)
    return build()


def finite_arrays(dt: dtype_helpers.DType, shape: tuple[int, ...] | st.SearchStrategy, *,
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
        if dtype_helpers.is_subbyte(dt.dtype):
            return hnp.arrays(np.int8, shape, elements=st.integers(lo, hi)).map(
                lambda a: a.astype(dt.dtype))
        return hnp.arrays(dt.dtype, shape, elements=st.integers(lo, hi))
    lo = -1e3 if min_value is None else min_value
    hi = 1e3 if max_value is None else max_value
    real = dtype_helpers.real_dtype(dt)
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
    return st.sampled_from(shape_helpers.LAYOUTS)
