"""The constants of a float format that the running error bounds are taken at.

One helper for every program dtype (float32, bfloat16, float16), from
``ml_dtypes.finfo`` (NumPy's ``finfo`` for the NumPy types), so that the bounds of
:mod:`conformance.programs.dag_bounds` hold no per-dtype copy of a constant:

- ``eps``: machine epsilon, 1 ULP of 1.0, twice the unit roundoff. The bounds charge
  ``eps`` (not ``eps/2``) per rounding: that covers fused multiply-adds, wider
  accumulators, and the double rounding of a backend that computes a narrow op in a
  wider type and rounds the result (XLA:CPU computes bfloat16 and float16 ops in float32);
- ``tiny`` (smallest normal), ``denorm_min`` (smallest subnormal), ``max`` (largest
  finite): the underflow allowance of one rounding (``tiny`` where the backend flushes
  the dtype's subnormal results, else ``denorm_min / 2``) and the overflow threshold;
- ``ulp``: the ULP budget of a transcendental op in the dtype (the tolerance table's
  :func:`conformance.helpers.tolerances.ulp_bound`);
- :meth:`FloatFormat.growth`: the relative error factor of ``n`` roundings,
  ``max(n eps, (1 + eps/2)**n - 1)``: ``n eps`` while ``n eps/2 <= 1`` (every float32
  program of the suite), the exact worst case ``(1 + u)**n - 1`` past it (long bfloat16
  sums, where the bound is then as weak as a bfloat16 accumulator is).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import ml_dtypes
import numpy as np

from conformance.helpers import tolerances

#: Float formats a generated program computes in.
NAMES = ("float32", "bfloat16", "float16")


@dataclasses.dataclass(frozen=True)
class FloatFormat:
    """``name``'s constants (see the module docstring)."""

    name: str
    eps: float
    tiny: float
    denorm_min: float
    max: float
    ulp: int

    def under(self, ftz: bool) -> float:
        """The absolute underflow allowance of one rounding: ``tiny`` where subnormal
        results may flush to zero, else half the smallest subnormal."""
        return self.tiny if ftz else self.denorm_min / 2

    def growth(self, n: int) -> float:
        """The relative error factor of ``n`` roundings, each within ``eps/2`` (or ``eps``
        for the fused and double-rounded cases): ``max(n eps, (1 + eps/2)**n - 1)``."""
        return max(n * self.eps, math.expm1(n * math.log1p(self.eps / 2)))

    def round(self, v: np.ndarray) -> np.ndarray:
        """``v`` rounded to the format (nearest, ties to even), as float64."""
        with np.errstate(over="ignore"):
            return np.asarray(v, np.float64).astype(self.dtype).astype(np.float64)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(getattr(ml_dtypes, self.name, None) or self.name)


@functools.lru_cache(maxsize=None)
def of(dtype_name: str) -> FloatFormat:
    """The :class:`FloatFormat` of ``dtype_name`` (one of :data:`NAMES`). Raises ValueError
    naming the formats for another dtype."""
    if dtype_name not in NAMES:
        raise ValueError(f"float_format.of: argument 'dtype_name' must be one of {NAMES}, "
                         f"got {dtype_name!r}")
    dt = np.dtype(getattr(ml_dtypes, dtype_name, None) or dtype_name)
    info = ml_dtypes.finfo(dt)
    return FloatFormat(dtype_name, float(info.eps), float(info.tiny),
                       float(info.smallest_subnormal), float(info.max),
                       tolerances.ulp_bound(None, dtype_name))
