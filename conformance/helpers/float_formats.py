"""``reduce_precision`` in NumPy by bit manipulation: the StableHLO spec's formal rule.

The spec rounds the mantissa to ``mantissa_bits`` (ties to even) in the original type,
then overflows values whose exponent exceeds the ``exponent_bits`` range to infinity
and *underflows values below its smallest normal exponent to zero* (both with the
sign kept). A conversion to a real narrow type (``x.astype(float16)``) keeps that
type's subnormals instead, so it is not a reference for this op.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """``x`` (float16, bfloat16, float32 or float64 array) rounded to a float format of
    ``exponent_bits`` (>= 1) and ``mantissa_bits`` (>= 0) and back, as the spec defines;
    NaN and infinities pass through. Same dtype and shape as ``x``.

    Raises TypeError for another dtype, ValueError for widths out of range."""
    x = np.asarray(x)
    if x.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError(f"reduce_precision: argument 'x' must be float16, bfloat16, float32 "
                        f"or float64, got {x.dtype.name}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: need exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits}, {mantissa_bits}")
    info = ml_dtypes.finfo(x.dtype)
    width, nmant = x.dtype.itemsize * 8, int(info.nmant)
    nexp = width - 1 - nmant
    uint = np.dtype(f"u{x.dtype.itemsize}")
    u = x.view(uint).astype(np.uint64)
    one = np.uint64(1)
    if mantissa_bits < nmant:
        shift = np.uint64(nmant - mantissa_bits)
        odd = (u >> shift) & one  # ties to even: round up from half when the kept lsb is 1
        u = (u + (one << (shift - one)) - one + odd) & ~((one << shift) - one)
    if exponent_bits < nexp:
        sign = u & (one << np.uint64(width - 1))
        field = ((u >> np.uint64(nmant)) & np.uint64((1 << nexp) - 1)).astype(np.int64)
        unbiased = field - ((1 << (nexp - 1)) - 1)
        top = (1 << (exponent_bits - 1)) - 1
        inf = sign | (np.uint64((1 << nexp) - 1) << np.uint64(nmant))
        u = np.where(unbiased > top, inf, np.where(unbiased < 1 - top, sign, u))
    out = u.astype(uint).view(x.dtype)
    return np.where(np.isfinite(x), out, x).astype(x.dtype)


def exact_ties(x: np.ndarray, mantissa_bits: int, odd: np.ndarray) -> np.ndarray:
    """``x`` (float16, bfloat16, float32 or float64) with every element made an exact
    rounding tie for ``mantissa_bits``: the dropped mantissa bits become ``10...0``
    (exactly halfway between two values with ``mantissa_bits`` bits), and the lowest kept
    bit is 1 where ``odd`` (a bool array broadcastable to ``x``: ties to even round up
    there) and 0 elsewhere (they round down). Sign and exponent are kept; NaN and
    infinities pass through. Raises TypeError for another dtype, ValueError unless
    0 <= mantissa_bits < the dtype's mantissa width (no tie exists otherwise)."""
    x = np.asarray(x)
    if x.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError(f"exact_ties: argument 'x' must be float16, bfloat16, float32 or "
                        f"float64, got {x.dtype.name}")
    nmant = int(ml_dtypes.finfo(x.dtype).nmant)
    if not 0 <= mantissa_bits < nmant:
        raise ValueError(f"exact_ties: need 0 <= mantissa_bits < {nmant} for {x.dtype.name}, "
                         f"got {mantissa_bits}")
    uint = np.dtype(f"u{x.dtype.itemsize}")
    u = np.ascontiguousarray(x).view(uint).astype(np.uint64)
    one, shift = np.uint64(1), np.uint64(nmant - mantissa_bits)
    lsb = (one << shift) if mantissa_bits else np.uint64(0)  # no kept bit: only the even case
    dropped = (one << shift) - one
    u = (u & ~(dropped | lsb)) | (one << (shift - one))
    u = np.where(np.asarray(odd, bool), u | lsb, u)
    out = u.astype(uint).view(x.dtype)
    return np.where(np.isfinite(x), out, x).astype(x.dtype)
