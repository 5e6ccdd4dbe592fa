"""Units in the last place (ULP) between floating-point arrays, and the per-dtype view of
the one tolerance table (:mod:`conformance.helpers.tolerances` holds it, with sources).

The distance between two floats of one dtype is the number of representable
values between them: both bit patterns are mapped to integers that order like
the values (sign-magnitude -> two's complement), so ``+0`` and ``-0`` are 0 ULP
apart and the largest finite value is 1 ULP from infinity. Works for every
IEEE-like dtype numpy and ml_dtypes define (float16/32/64, bfloat16, fp8).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from conformance.helpers import tolerances


#: The per-dtype view of the one tolerance table: both live in
#: :mod:`conformance.helpers.tolerances` (:class:`~conformance.helpers.tolerances.
#: DtypeTolerance`, :data:`~conformance.helpers.tolerances.DTYPE_TOLERANCE`), named here
#: for the checks that read them through this module. Tests get their bounds from
#: :func:`conformance.helpers.tolerances.bound`.
Tolerance = tolerances.DtypeTolerance
TOLERANCE = tolerances.DTYPE_TOLERANCE


def tolerance(dtype_name: str) -> Tolerance:
    """The table's entry for ``dtype_name`` (KeyError names the table's dtypes)."""
    return tolerances.dtype_tolerance(dtype_name)


def max_ulp(dtype_name: str) -> int:
    """The ULP tolerance of ``dtype_name``; KeyError when the table has no ULP bound
    for it (the message names the dtypes that have one)."""
    bound = TOLERANCE[dtype_name].ulp if dtype_name in TOLERANCE else None
    if bound is None:
        raise KeyError(f"no ULP tolerance for {dtype_name!r}; table has "
                       f"{sorted(k for k, v in TOLERANCE.items() if v.ulp is not None)}")
    return bound


def rtol(dtype_name: str) -> float:
    """The relative tolerance of ``dtype_name`` (KeyError names the table's dtypes)."""
    return tolerance(dtype_name).rtol


_ML_FLOATS = {np.dtype(getattr(ml_dtypes, n)).type for n in dir(ml_dtypes)
              if n.startswith(("float8", "bfloat16", "float6", "float4"))}


def ordered_bits(x: np.ndarray) -> np.ndarray:
    """int64 keys that order like the float values of ``x`` (NaN keys are meaningless).

    Raises TypeError for a non-float dtype.
    """
    x = np.asarray(x)
    if x.dtype.kind != "f" and x.dtype.type not in _ML_FLOATS:
        raise TypeError(f"ordered_bits: argument 'x' must be a float array, got {x.dtype}")
    bits = x.view(f"u{x.dtype.itemsize}").astype(np.int64)
    sign = np.int64(1) << (8 * x.dtype.itemsize - 1)
    if x.dtype.itemsize == 8:  # the top bit does not fit a positive int64 shift
        raw = x.view(np.int64)
        return np.where(raw < 0, -(raw & np.int64(0x7FFFFFFFFFFFFFFF)), raw)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def is_subnormal(x: np.ndarray) -> np.ndarray:
    """True where a real float value is nonzero and below the smallest normal (False for
    bool and integer arrays): the values FTZ/DAZ turn into zeros of the same sign."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        return np.zeros(x.shape, bool)
    w = np.abs(x.astype(np.float64))
    return (w != 0) & (w < float(ml_dtypes.finfo(x.dtype).tiny))


def flush_subnormals(x: np.ndarray) -> np.ndarray:
    """``x`` with subnormals replaced by zeros of the same sign (what FTZ/DAZ gives)."""
    x = np.asarray(x)
    return np.where(is_subnormal(x), np.copysign(np.zeros_like(x), x), x).astype(x.dtype)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|ULP distance| between ``a`` and ``b`` of the same float dtype (uint64).

    NaN against anything gives the maximum uint64; callers check NaN positions
    first. Raises TypeError on differing dtypes.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise TypeError(f"ulp_distance: dtypes differ: {a.dtype} vs {b.dtype}")
    ka, kb = ordered_bits(a), ordered_bits(b)
    dist = np.abs(ka - kb).astype(np.uint64)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(a.astype(np.float64)) | np.isnan(b.astype(np.float64))
    return np.where(nan, np.iinfo(np.uint64).max, dist)
