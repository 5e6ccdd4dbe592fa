"""Forward error bounds of floating-point kernels, with underflow and overflow allowances.

One place decides what a healthy backend may return for a computation whose
result IEEE 754 leaves to the order of operations (sums, products, dot
products, FFTs). Every bound is an :class:`ErrorBound`, built by
:func:`rounding_bound` (or :func:`product_bound` on top of it), and checked by
``assertions.assert_within_bound``:

- normal range: ``roundings * eps * magnitude`` (``magnitude`` bounds the sum of
  the absolute values of the terms, e.g. ``sum|x|`` or ``|A| @ |B|``);
- subnormal intermediates: each rounding whose result is below the smallest
  normal ``tiny`` may lose up to ``tiny`` absolutely where the backend's declared
  float controls flush (FTZ/DAZ), at most half the smallest subnormal where they
  keep subnormals (IEEE 754 gradual underflow), amplified by what the later steps
  multiply it with (``growth``): ``underflows * loss * growth``, ``loss`` from
  :func:`conformance.helpers.float_control_modes.underflow_loss` of the declaration the
  caller passes (``controls``: resolved once for the session, never here);
- infinities: where an intermediate may exceed the largest finite value
  (``peak * (1 + roundings * eps) >= max``) the result may be an infinity of the
  expected sign (or NaN where ``nan`` says so), and an expected infinity may
  come back as a value near ``+-max``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from conformance.helpers import float_control_modes


class ErrorBound(NamedTuple):
    """Allowed error of one result array.

    ``abs``: allowed ``|out - expected|`` per element (float64, broadcastable to
    the result; complex results: modulus of the difference). ``name``: the
    formula, for messages. ``overflow``: True where an intermediate may overflow,
    so ``out`` may be an infinity of ``expected``'s sign. ``nan``: True where an
    overflowed intermediate may meet a zero or an infinity of the other sign, so
    ``out`` may be NaN. ``near_max``: True where the exact result rounds to an
    infinity but lies within ``abs`` of the largest finite value, so ``out`` may
    be finite there (within ``abs`` of ``+-max``).
    """

    abs: np.ndarray
    name: str
    overflow: np.ndarray | bool = False
    nan: np.ndarray | bool = False
    near_max: np.ndarray | bool = False


def float_limits(dtype: Any) -> tuple[float, float, float]:
    """(eps, tiny, max) of a float or complex dtype's components (TypeError otherwise)."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    try:
        fi = ml_dtypes.finfo(dt)
    except (TypeError, ValueError) as err:
        raise TypeError(f"float_limits: argument 'dtype' must be a float or complex dtype, "
                        f"got {dt}") from err
    return float(fi.eps), float(fi.tiny), float(fi.max)


def rounding_bound(dtype: Any, magnitude: Any, *, roundings: float, name: str,
                   controls: float_control_modes.FloatControls,
                   underflows: float | None = None, growth: Any = 1.0,
                   peak: Any = None, exact: Any = None, integral: Any = False) -> ErrorBound:
    """Bound of a result computed with ``roundings`` roundings in ``dtype`` (any order).

    ``magnitude``: non-negative array, e.g. ``sum|x|`` per output. ``underflows``:
    how many of the roundings may land below ``tiny`` (default ``roundings``), each
    losing :func:`~conformance.helpers.float_control_modes.underflow_loss` of ``controls``
    (the declared float controls: ``tiny`` where they flush, half the smallest subnormal
    where they keep subnormals);
    ``growth``: factor by which later steps may amplify such an absolute error
    (1 for sums, the largest product of later factors for products). ``peak``:
    bound on every intermediate's magnitude (default ``magnitude``), which decides
    where overflow is possible. ``exact``: ``|exact result|`` (float64), which
    decides where an exact result beyond ``max`` may still come back finite
    (default: ``magnitude``). ``integral``: True where every term is an integer
    (sums of integer-valued terms or products): there the result is exact (bound
    0) wherever ``magnitude``, which bounds every partial sum, is below
    ``2**digits``. Raises ValueError for negative counts.
    """
    if roundings < 0 or (underflows is not None and underflows < 0):
        raise ValueError(f"rounding_bound: 'roundings'={roundings} and 'underflows'="
                         f"{underflows} must be >= 0")
    eps, _, fmax = float_limits(dtype)
    loss = float_control_modes.underflow_loss(controls, dtype)
    mag = np.asarray(magnitude, np.float64)
    under = roundings if underflows is None else underflows
    with np.errstate(over="ignore", invalid="ignore"):
        allowed = roundings * eps * mag + under * loss * np.asarray(growth, np.float64)
        top = mag if peak is None else np.asarray(peak, np.float64)
        overflow = top * (1 + roundings * eps) >= fmax
        near = (mag if exact is None else np.asarray(exact, np.float64)) - allowed <= fmax
        allowed = np.where(np.asarray(integral, bool) & (mag < 2.0 / eps), 0.0, allowed)
    return ErrorBound(allowed, name, overflow, overflow, overflow & near)


def product_bound(x: np.ndarray, axes: tuple[int, ...], *,
                  controls: float_control_modes.FloatControls) -> ErrorBound:
    """Bound of ``prod(x, axis=axes)`` computed in ``x.dtype`` in any order.

    Relative ``(n + 1) * eps * prod|x|`` (complex: twice that). Underflow is
    possible only where the product of the factors below 1 in magnitude (the
    smallest any partial product can get) is below ``tiny``; an absolute error
    of up to the declared underflow loss per step (``controls``, see
    :func:`rounding_bound`) may then be amplified by the factors above 1.
    Overflow is possible where the product of the factors above 1 reaches
    ``max``; NaN then too where a zero factor exists (``inf * 0``) or the values
    are complex. A subnormal input counts as a factor below ``tiny`` (DAZ).
    """
    x = np.asarray(x)
    if x.dtype.kind in "biuSUO":
        raise TypeError(f"product_bound: argument 'x' must be a float or complex array, "
                        f"got {x.dtype}")
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"product_bound: argument 'axes' {axes} out of range for "
                             f"{x.ndim}-d x")
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    eps, tiny, _ = float_limits(x.dtype)
    complex_ = x.dtype.kind == "c"
    w = np.abs(x.astype(np.complex128 if complex_ else np.float64))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        exact = np.prod(w, axis=axes)
        small = np.prod(np.where((w < 1) & (w > 0), w, 1.0), axis=axes)
        big = np.prod(np.maximum(w, 1.0), axis=axes)
        has_zero = np.any(w == 0, axis=axes)
    rel = (2 if complex_ else 1) * (n + 1)
    may_underflow = small * (1 - min(rel * eps, 1.0)) < tiny
    bound = rounding_bound(x.dtype, exact, roundings=rel, underflows=n,
                           growth=np.where(may_underflow, big * (1 + rel * eps), 0.0),
                           peak=big, exact=exact, controls=controls,
                           name="(n+1)*eps*prod|x| + n*tiny*prod(max(|x|,1))")
    return bound._replace(nan=bound.overflow & (has_zero | complex_))


def summation_bound(x: np.ndarray, axes: tuple[int, ...], *,
                    controls: float_control_modes.FloatControls) -> ErrorBound:
    """Bound of ``sum(x, axis=axes)`` computed in ``x.dtype`` (or wider) in any order.

    ``max(n, 2) * eps * sum|x| + n * loss`` per output (``n`` terms: ``n - 1``
    roundings of partial sums and the final one; ``loss`` the declared underflow loss of
    ``controls``, see :func:`rounding_bound`), and 0 where every term is an
    integer and ``sum|x|`` is below ``2**digits``: every partial sum is then
    exactly representable, so any order gives the exact sum.
    """
    x = np.asarray(x)
    complex_ = x.dtype.kind == "c"
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    wide = x.astype(np.complex128 if complex_ else np.float64)
    return rounding_bound(x.dtype, np.sum(np.abs(wide), axis=axes),
                          roundings=max(n, 2), underflows=n, integral=integral_terms(x, axes),
                          controls=controls,
                          name="n*eps*sum|x| + n*tiny (0 for integers below 2**digits)")


def integral_terms(x: np.ndarray, axes: tuple[int, ...] | None = None) -> np.ndarray:
    """True where every element of ``x`` over ``axes`` (default all) is integer-valued
    (complex: both parts)."""
    wide = np.asarray(x).astype(np.complex128)
    parts = np.stack([wide.real, wide.imag])
    reduce = (0,) + tuple(a + 1 for a in (range(wide.ndim) if axes is None else axes))
    with np.errstate(invalid="ignore"):
        return np.all(parts == np.round(parts), axis=reduce)
