"""Correctly rounded references for transcendental elementwise ops, from mpmath.

NumPy's float64 ``exp``/``log``/``sin``... come from the platform libm, which is
accurate to about 1 ULP but not correctly rounded, so a ULP bound checked against
it is off by up to one libm error. This module evaluates the op in arbitrary
precision (:data:`WORKING_BITS`) and rounds the exact value once, to nearest,
to the target format: the reference is then within 0.5 ULP of the true result
(up to the astronomically rare hard cases of the table-maker's dilemma, which
need more than ``WORKING_BITS`` bits to decide).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import mpmath
import numpy as np

#: Bits of working precision: more than twice float64's 53, so the final rounding to a
#: float64 is correct except on inputs within 2**-(WORKING_BITS-53) of a rounding tie.
WORKING_BITS = 192

_MP: dict[str, Callable[..., Any]] = {
    "exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log, "log1p": mpmath.log1p,
    "tanh": mpmath.tanh, "logistic": lambda x: 1 / (1 + mpmath.exp(-x)),
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "rsqrt": lambda x: 1 / mpmath.sqrt(x), "sqrt": mpmath.sqrt,
    "cbrt": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)),  # the real root
    "atan2": mpmath.atan2, "power": mpmath.power,
}

#: NumPy forms, for inputs mpmath has no IEEE meaning for: signed zeros and infinities
#: (atan2(+0, -0) is pi, exp(-inf) is 0; the C99 Annex F special cases NumPy's libm follows).
_NP: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "cbrt": np.cbrt,
    "atan2": np.arctan2, "power": np.power,
}

#: Op names this module has a reference for.
OPS = tuple(sorted(_MP))


def _round(value: Any, dtype: np.dtype) -> float:
    """``value`` (mpf) rounded once, to nearest even, to ``dtype``'s precision and
    exponent range (subnormals keep fewer bits; beyond ``max`` gives an infinity)."""
    fi = ml_dtypes.finfo(dtype)
    if not mpmath.isfinite(value):
        return float(value)
    if value == 0:
        return 0.0
    # the spacing of dtype's values around |value|: 2**(exponent - mantissa bits),
    # never below the smallest subnormal
    exponent = max(int(mpmath.frexp(value)[1]) - 1, int(fi.minexp))
    quantum = mpmath.ldexp(1, exponent - int(fi.nmant))
    with mpmath.workprec(WORKING_BITS):
        steps = value / quantum
        nearest = mpmath.nint(steps)  # round half to even
    rounded = float(mpmath.ldexp(nearest, exponent - int(fi.nmant)))
    return rounded if abs(rounded) <= float(fi.max) else float(np.copysign(np.inf, rounded))


def correctly_rounded(op: str, args: list[np.ndarray], dtype: Any) -> np.ndarray:
    """``op`` on ``args`` (same-shape float arrays) evaluated exactly and rounded once to
    ``dtype`` (float16/bfloat16/float32/float64): an array of ``dtype``, the shape of
    ``args[0]``.

    NaN inputs and results outside the op's real domain give NaN; where an input is a
    zero or an infinity the result is NumPy's (IEEE signed zeros, C99 Annex F limits).
    Each distinct tuple of input bit patterns is evaluated once (Hypothesis' arrays
    repeat a fill value: most elements of a large drawn array share a few values).
    Raises KeyError naming :data:`OPS` for an op without a reference, and ValueError
    when ``args`` differ in shape.
    """
    if op not in _MP:
        raise KeyError(f"correctly_rounded: argument 'op' {op!r} has no mpmath reference; "
                       f"have {list(OPS)}")
    arrays = [np.asarray(a) for a in args]
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError(f"correctly_rounded: argument 'args' shapes differ: "
                         f"{[a.shape for a in arrays]}")
    dtype = np.dtype(dtype)
    fn = _MP[op]
    wide = np.stack([a.astype(np.float64).ravel() for a in arrays], axis=1)
    # distinct rows by bit pattern (-0.0 is not 0.0; NaNs are NaN whatever their payload)
    _, first, inverse = np.unique(wide.view(np.uint64), axis=0, return_index=True,
                                  return_inverse=True)
    flat = list(wide[first].T)
    out = np.empty(first.shape, np.float64)
    with mpmath.workprec(WORKING_BITS):
        for i, values in enumerate(zip(*flat)):
            if any(np.isnan(v) for v in values):
                out[i] = np.nan
                continue
            if any(v == 0 or np.isinf(v) for v in values):
                with np.errstate(all="ignore"):
                    out[i] = np.asarray(_NP[op](*(np.float64(v) for v in values))
                                        ).astype(dtype)
                continue
            try:
                value = fn(*(mpmath.mpf(float(v)) for v in values))
            except (ValueError, ZeroDivisionError):
                out[i] = np.nan
                continue
            if isinstance(value, mpmath.mpc):
                out[i] = np.nan if value.imag != 0 else _round(value.real, dtype)
            else:
                out[i] = _round(value, dtype)
    return out[inverse.reshape(-1)].astype(dtype).reshape(arrays[0].shape)
