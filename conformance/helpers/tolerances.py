"""The one tolerance table: how far a healthy backend may be from the reference, and why.

Every bound the suite applies to a floating-point result comes from here, each
entry with its source (docs/tolerances.md lists them). Tests get their allowed error
from one entry point, :func:`bound` (``bound(kind, dtype, ...)`` -> :class:`Bound`),
which dispatches to the tables below and to the running-error bounds of
:mod:`conformance.helpers.error_bounds`; no test file holds a literal tolerance
(``tests/test_tolerance_literals.py`` checks it). A bound that may accept a flushed
subnormal takes the session's resolved float-controls declaration as ``controls``
(:mod:`conformance.helpers.float_control_modes`): under an IEEE declaration it accepts none.

- ``IEEE``: IEEE 754-2019 §5.4 and §9 define ``+ - * /``, ``sqrt``, conversions,
  comparisons and selections as correctly rounded: 0 ULP from the correctly
  rounded reference (NumPy computes these correctly rounded).
- ``XLA``: the per-op, per-backend error specs XLA holds its own CPU backend to in
  ``xla/tests/exhaustive/exhaustive_{unary,binary}_test_functions.cc`` (openxla/xla,
  commit 430d0342, 2026): ``rel_err = k * eps`` (default ``kDefaultRelativeTolerance
  SlackFactor = 20`` for float32/float64, 5 for float16, 2 for bfloat16) or
  ``distance_err = d`` ULP from the host libm result.
- ``JAX``: jax's test default ``jax._src.public_test_util.default_tolerance``
  (float64 1e-15, float32 1e-6, float16 1e-3, bfloat16 1e-2, complex128 1e-15,
  complex64 1e-6), the tolerance jax's own suite holds XLA's kernels to.
- ``DERIVED``: composite ops (sums, dot products, convolutions, batch_norm) get an
  ``n * eps * magnitude`` forward-error bound from :mod:`error_bounds`, ``n`` the
  number of roundings on the longest path.

Unit conversions (``eps`` is the dtype's machine epsilon, 1 ULP of 1.0): a
relative error of ``k * eps`` is at most ``2k`` ULP (1 ULP of ``x`` is between
``eps*|x|/2`` and ``eps*|x|``); an error of ``u`` ULP is at most ``u * eps``
relative. A ``distance_err`` against the host libm allows the libm's own error
too (glibc: at most 1 ULP for these functions in float32/float64), so ``d + 1``
ULP against a correctly rounded reference.

The transcendental ULP bound of an op in float64 is the tightest of XLA's CPU
spec and jax's default (``1e-15`` is ``4.5 eps``, at most 9 ULP), both converted
to ULP against the correctly rounded mpmath reference
(:mod:`conformance.helpers.mpmath_reference`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from conformance.helpers import error_bounds
from conformance.helpers import float_control_modes

IEEE, XLA, JAX, DERIVED, LEGACY = "IEEE 754", "XLA exhaustive CPU spec", "jax default", \
    "derived", "suite table (tighter than XLA and jax)"

#: jax._src.public_test_util.default_tolerance, per dtype name.
JAX_DEFAULT_RTOL = {"float64": 1e-15, "float32": 1e-6, "float16": 1e-3, "bfloat16": 1e-2,
                    "complex128": 1e-15, "complex64": 1e-6}

#: The host libm's error that XLA's distance_err budgets ride on (glibc manual, "Known
#: Maximum Errors in Math Functions": exp, expm1, log, atan2, pow, sin, cos... <= 1 ULP
#: on x86_64 in float and double).
LIBM_ULP = 1


@dataclasses.dataclass(frozen=True)
class Budget:
    """One entry: ``ulp`` (maximum ULP distance from the correctly rounded result) and
    ``source`` (where the number comes from: one of the module's source names and the
    spec it quotes)."""

    ulp: int
    source: str


def _xla_rel(k: float) -> int:
    """ULP bound of XLA's ``rel_err = k * eps``: at most ``2k`` ULP."""
    return int(np.floor(2 * k))


_JAX64 = _xla_rel(JAX_DEFAULT_RTOL["float64"] / float(np.finfo(np.float64).eps))  # 9


def _f64(name: str, xla_ulp: int, xla_spec: str) -> Budget:
    bound = min(xla_ulp, _JAX64)
    which = (f"{XLA}: {xla_spec}" if xla_ulp <= _JAX64
             else f"{JAX}: 1e-15 = 4.5 eps (XLA: {xla_spec})")
    return Budget(bound, f"{name} float64: {bound} ULP, {which}")


#: float64 ULP budget per transcendental op (class ``ULP``/``ARGUMENT_SCALED``), against
#: the correctly rounded result.
FLOAT64_OPS: dict[str, Budget] = {
    "exp": _f64("exp", _xla_rel(20), "default rel_err 20 eps"),
    "expm1": _f64("expm1", 1 + LIBM_ULP, "CpuError distance_err 1 from std::expm1"),
    "log": _f64("log", _xla_rel(20), "default rel_err 20 eps"),
    "log1p": _f64("log1p", _xla_rel(20), "default rel_err 20 eps"),
    "tanh": _f64("tanh", _xla_rel(20), "default rel_err 20 eps"),
    "logistic": _f64("logistic", _xla_rel(20), "default rel_err 20 eps"),
    "sin": _f64("sin", _xla_rel(2), "rel_err 2 eps"),
    "cos": _f64("cos", _xla_rel(2), "rel_err 2 eps"),
    "tan": _f64("tan", _xla_rel(4), "rel_err 4 eps"),
    "rsqrt": _f64("rsqrt", _xla_rel(2), "rel_err 2 eps"),
    "cbrt": _f64("cbrt", _xla_rel(70), "CpuError rel_err 70 eps"),
    "atan2": _f64("atan2", 0 + LIBM_ULP, "CpuError exact vs std::atan2 (abs_err only "
                  "for subnormal results)"),
    "power": _f64("power", 0 + LIBM_ULP, "CpuError exact vs std::pow"),
}

#: Per-dtype ULP budget of every transcendental op in the narrower floats (float32 and
#: below are checked against float64 references rounded once: within 0.5 ULP of exact).
#: These are the suite's earlier numbers, tighter than both sources (XLA: rel_err 20 eps
#: float32, 5 eps float16, 2 eps bfloat16, i.e. 40/10/4 ULP; jax: 1e-6 = 8.4 eps, 1e-3
#: = 1 eps, 1e-2 = 1.3 eps): XLA:CPU computes float16/bfloat16 in float32 and rounds once.
DTYPE_ULP: dict[str, Budget] = {
    "float32": Budget(4, f"{LEGACY}; measured max 4 ULP (expm1) on jaxlib 0.10.2"),
    "float16": Budget(2, f"{LEGACY}: one float32 evaluation rounded to float16"),
    "bfloat16": Budget(2, f"{LEGACY}: one float32 evaluation rounded to bfloat16"),
    "float8_e4m3fn": Budget(1, f"{XLA}: distance_err 1 (fp8)"),
    "float8_e5m2": Budget(1, f"{XLA}: distance_err 1 (fp8)"),
}

#: ULP error of the references the value checks compare against: NumPy's float64 libm
#: (measured <= 2 ULP against mpmath for the catalog's ops, logistic's ``1/(1+exp(-x))``
#: included), or a float64 value rounded once to a narrower dtype (<= 1 ULP with the
#: double rounding).
REFERENCE_ULP = {"float64": 2, "complex128": 2}


def ulp_bound(op: str | None, dtype_name: str) -> int:
    """ULP budget of transcendental ``op`` (None: the dtype's default) in ``dtype_name``,
    against the correctly rounded result. KeyError names the dtypes (and ops) the
    table has."""
    if dtype_name == "float64":
        if op is None:
            return max(b.ulp for b in FLOAT64_OPS.values())
        try:
            return FLOAT64_OPS[op].ulp
        except KeyError:
            raise KeyError(f"no float64 ULP budget for op {op!r}; table has "
                           f"{sorted(FLOAT64_OPS)}") from None
    try:
        return DTYPE_ULP[dtype_name].ulp
    except KeyError:
        raise KeyError(f"no ULP budget for {dtype_name!r}; table has "
                       f"{sorted(DTYPE_ULP) + ['float64']}") from None


def _eps(dtype_name: str) -> float:
    dt = np.dtype(getattr(ml_dtypes, dtype_name, None) or dtype_name)
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    return float(ml_dtypes.finfo(dt).eps)


def _real(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    return np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt


def value_rtol(op: str | None, dtype_name: str) -> float:
    """Relative tolerance for a value comparison of ``op`` (None: any transcendental op)
    in ``dtype_name`` against a NumPy float64 reference rounded to the dtype:
    ``(ulp_bound + reference error) * eps``. Complex dtypes: jax's default (the
    products and quotients of ``multiply``/``divide``/``abs`` in norm). KeyError for a
    dtype the table lacks."""
    if dtype_name in ("complex64", "complex128"):
        return JAX_DEFAULT_RTOL[dtype_name]
    ref = REFERENCE_ULP.get(dtype_name, 1)
    return (ulp_bound(op, dtype_name) + ref) * _eps(dtype_name)


def derived_rtol(roundings: int, dtype_name: str) -> float:
    """``(roundings + 1) * eps`` of ``dtype_name``: the relative forward error of a
    composite op with ``roundings`` correctly rounded steps on its longest path, each
    relative error <= eps/2 <= eps, plus the reference's own rounding to the dtype.
    ValueError for negative ``roundings``."""
    if roundings < 0:
        raise ValueError(f"derived_rtol: argument 'roundings' must be >= 0, got {roundings}")
    return (roundings + 1) * _eps(dtype_name)


@dataclasses.dataclass(frozen=True)
class DtypeTolerance:
    """The per-dtype view of the table, for checks that know only the dtype: ``ulp``, the
    largest ULP budget of any transcendental op in the dtype (None: no ULP bound, e.g.
    complex), and ``rtol``, the relative tolerance of value checks (never tighter than
    ``ulp`` ULP: ``rtol >= ulp * eps``)."""

    ulp: int | None
    rtol: float


#: Per-dtype view (``conformance.helpers.ulp.TOLERANCE`` is this table). IEEE-defined
#: operations (+ - * / sqrt, conversions, comparisons) and integers are exact and not
#: listed. float64/float32 ``rtol``: ``(ulp + reference error) * eps`` (2.4e-15: was 1e-12,
#: ~4,500 ULP); complex128 jax's default 1e-15; the narrower dtypes keep the suite's
#: earlier values (bfloat16 1.6e-2 = 2 eps, float16 2e-3 = 2 eps, complex64 2e-6 = 2x jax's
#: 1e-6, fp8 one ULP of 1: e4m3fn 0.125, e5m2 0.25).
DTYPE_TOLERANCE: dict[str, DtypeTolerance] = {
    "bfloat16": DtypeTolerance(ulp_bound(None, "bfloat16"), 1.6e-2),
    "float16": DtypeTolerance(ulp_bound(None, "float16"), 2e-3),
    "float32": DtypeTolerance(ulp_bound(None, "float32"), value_rtol(None, "float32")),
    "float64": DtypeTolerance(ulp_bound(None, "float64"), value_rtol(None, "float64")),
    "float8_e4m3fn": DtypeTolerance(1, 0.125), "float8_e5m2": DtypeTolerance(1, 0.25),
    "complex64": DtypeTolerance(None, 2e-6),
    "complex128": DtypeTolerance(None, value_rtol(None, "complex128")),
}


def dtype_tolerance(dtype_name: str) -> DtypeTolerance:
    """The per-dtype entry of ``dtype_name`` (KeyError names the table's dtypes)."""
    try:
        return DTYPE_TOLERANCE[dtype_name]
    except KeyError:
        raise KeyError(f"no tolerance for {dtype_name!r}; table has "
                       f"{sorted(DTYPE_TOLERANCE)}") from None


#: LAPACK's test threshold for the residual ratio ``||R||_1 / (n * ||A||_1 * eps)``
#: (LAPACK Working Note 41, ``THRESH = 30`` in the testing suite's input files).
RESIDUAL_THRESHOLD = 30.0
#: The smallest ``||X||_1`` a solve's residual ``T X - B`` is measured against
#: (``||T||_1 * max(||X||_1, floor)``), so that a zero or tiny solution (of tiny
#: right-hand sides, which a flushing backend may return as zeros) does not make the
#: ratio blow up. The suite's earlier number.
RESIDUAL_SOLUTION_FLOOR = 1e-30
#: Slack on the partial-pivoting bound ``|L| <= 1`` (``sqrt(2)`` for complex, LAPACK's
#: ``|re| + |im|`` pivots) of an LU factor read back in float64. The suite's earlier number
#: (about 8 float32 eps).
PIVOT_SLACK = 1e-6


@dataclasses.dataclass(frozen=True)
class Fixed:
    """A whole-program check held to a fixed ``rtol``/``atol`` (``source``: why)."""

    rtol: float
    atol: float
    source: str


#: Whole-program checks whose bound is a number, not a derivation: check name -> entry.
FIXED: dict[str, Fixed] = {
    "executable_round_trip": Fixed(1e-5, 1e-5, f"{LEGACY}: float32 sin(a) * b + a of one "
                                   "executable against NumPy (about 84 float32 eps)"),
    "custom_call_cholesky": Fixed(1e-4, 1e-4, f"{LEGACY}: float32 Cholesky factor of a 6x6 "
                                  "SPD matrix (diagonal + n) through a re-registered LAPACK "
                                  "target, against NumPy in float64"),
}


@dataclasses.dataclass(frozen=True)
class Bound:
    """The allowed error of one check, from :func:`bound`.

    ``kind``: the :func:`bound` kind; ``name``: the formula, for messages; ``source``:
    where the number comes from. The fields a check reads: ``max_ulp`` and ``atol`` for
    ``assertions.assert_ulp_close``; ``rtol`` and ``atol`` for ``assert_allclose``;
    ``error`` (an :class:`~conformance.helpers.error_bounds.ErrorBound`) for
    ``assert_within_bound`` (which also takes the :class:`Bound` itself); ``eps``,
    ``threshold`` and ``atol`` (the scale floor) for ``assert_residual_ratio``.
    ``controls``: the float-controls declaration the bound was built under (None: it
    accepts no flushed subnormal)."""

    kind: str
    name: str
    source: str
    max_ulp: int | None = None
    rtol: float = 0.0
    atol: Any = 0.0
    error: error_bounds.ErrorBound | None = None
    eps: float | None = None
    threshold: float | None = None
    controls: float_control_modes.FloatControls | None = None


def _exact(dtype: Any, *, controls: float_control_modes.FloatControls | None = None) -> Bound:
    """0 ULP (IEEE 754 correctly rounded, or exact; integers too). With ``controls``,
    ``atol`` is ``tiny`` of the dtype where the declaration flushes its results or inputs
    (a flushed subnormal), else 0; ``error`` is the same as an absolute bound."""
    dt = _real(dtype)
    flush = controls is not None and float_control_modes.is_float(dt) and (
        float_control_modes.flushes_results_of(controls, dt) or
        float_control_modes.flushes_inputs_of(controls, dt))
    atol = float(ml_dtypes.finfo(dt).tiny) if flush else 0.0
    name = "exact" + (" or a flushed subnormal (tiny)" if flush else "")
    return Bound("exact", name, IEEE, max_ulp=0, atol=atol, controls=controls,
                 error=error_bounds.ErrorBound(np.asarray(atol), name))


def _ulp(dtype: Any, *, op: str | None, scale: Any = None, reference: str = "mpmath"
         ) -> Bound:
    """The ULP budget of transcendental ``op`` (None: the dtype's largest) in ``dtype``
    against the ``reference``: ``"mpmath"`` (correctly rounded) or ``"numpy"`` (NumPy's
    float64 libm rounded to the dtype: the budget plus :data:`REFERENCE_ULP`). ``atol``:
    ``eps * scale`` for argument-scaled ops (``scale``: ``max(1, |x|)``, range reduction
    near multiples of pi), else ``tiny``: a transcendental result in the subnormal range
    is held to an absolute error, whatever the declared float controls (IEEE 754 §9 asks
    no accuracy of it; XLA's spec gives subnormal results an ``abs_err``, see atan2 above;
    XLA:CPU's float16 ``logistic(-12)`` is 0, its ``exp(12)`` overflowing float16)."""
    name = np.dtype(dtype).name
    if reference not in ("mpmath", "numpy"):
        raise ValueError(f"bound('ulp'): argument 'reference' must be 'mpmath' or 'numpy', "
                         f"got {reference!r}")
    k = ulp_bound(op, name) + (REFERENCE_ULP.get(name, 0) if reference == "numpy" else 0)
    fi = ml_dtypes.finfo(_real(dtype))
    if scale is not None:
        atol, what = float(fi.eps) * np.asarray(scale, np.float64), "eps*max(1,|x|)"
    else:
        atol, what = float(fi.tiny), "tiny (a subnormal-range result)"
    source = (FLOAT64_OPS[op].source if name == "float64" and op in FLOAT64_OPS
              else DTYPE_ULP[name].source if name in DTYPE_ULP else XLA)
    return Bound("ulp", f"{k} ULP (against {reference}) or atol {what}", source, max_ulp=k,
                 atol=atol)


def _value_rtol(dtype: Any, op: str | None) -> tuple[float, str]:
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        return 0.0, IEEE
    if dt.name == "float64" and op in FLOAT64_OPS:
        return value_rtol(op, "float64"), FLOAT64_OPS[op].source
    return dtype_tolerance(dt.name).rtol, f"{LEGACY}/{JAX}: per-dtype rtol of {dt.name}"


def _value(dtype: Any, *, op: str | None = None, scale: Any = 1.0) -> Bound:
    """Value comparison against a NumPy float64 reference rounded to the dtype: ``rtol``
    the op's float64 budget (:func:`value_rtol`) or the dtype's (:data:`DTYPE_TOLERANCE`;
    0 for integers and bools), ``atol = rtol * scale`` (``scale``: the argument or result
    magnitude the check measures against)."""
    rtol, source = _value_rtol(dtype, op)
    return Bound("value", "atol + rtol*|expected|", source, rtol=rtol,
                 atol=rtol * np.asarray(scale, np.float64) if np.ndim(scale) else
                 rtol * float(scale))


def _value_normwise(dtype: Any, *, expected: np.ndarray, op: str | None = None) -> Bound:
    """A complex value accurate in norm, not per component (``re(a*b)`` may cancel):
    ``|out - expected| <= rtol * (|expected| + 1)``, ``rtol`` as :func:`_value`."""
    rtol, source = _value_rtol(dtype, op)
    allowed = rtol * (np.abs(np.asarray(expected)) + 1.0)
    return Bound("value_normwise", "rtol*(|expected|+1)", source, rtol=rtol,
                 error=error_bounds.ErrorBound(allowed, "rtol*(|expected|+1)"))


def _rounding(dtype: Any, *, magnitude: Any, roundings: float,
              controls: float_control_modes.FloatControls, name: str,
              underflows: float | None = None, growth: Any = 1.0, peak: Any = None,
              exact: Any = None, integral: Any = False) -> Bound:
    """A running-error bound: :func:`conformance.helpers.error_bounds.rounding_bound`
    (``roundings * eps * magnitude`` plus the declared underflow loss per rounding)."""
    eb = error_bounds.rounding_bound(dtype, magnitude, roundings=roundings, name=name,
                                     controls=controls, underflows=underflows, growth=growth,
                                     peak=peak, exact=exact, integral=integral)
    return Bound("rounding", eb.name, DERIVED, error=eb, controls=controls)


def _summation(dtype: Any, *, x: np.ndarray, axes: tuple[int, ...],
               controls: float_control_modes.FloatControls) -> Bound:
    """``sum(x, axes)`` in any order: :func:`error_bounds.summation_bound`."""
    _same_dtype("summation", dtype, x)
    eb = error_bounds.summation_bound(x, axes, controls=controls)
    return Bound("summation", eb.name, DERIVED, error=eb, controls=controls)


def _product(dtype: Any, *, x: np.ndarray, axes: tuple[int, ...],
             controls: float_control_modes.FloatControls) -> Bound:
    """``prod(x, axes)`` in any order: :func:`error_bounds.product_bound`."""
    _same_dtype("product", dtype, x)
    eb = error_bounds.product_bound(x, axes, controls=controls)
    return Bound("product", eb.name, DERIVED, error=eb, controls=controls)


def _same_dtype(kind: str, dtype: Any, x: np.ndarray) -> None:
    if np.dtype(dtype) != np.asarray(x).dtype:
        raise TypeError(f"bound({kind!r}): dtype {np.dtype(dtype)} is not x's "
                        f"({np.asarray(x).dtype})")


def _residual(dtype: Any) -> Bound:
    """LAPACK's residual test: ``||R||_1 / (n * scale * eps) < threshold``
    (:data:`RESIDUAL_THRESHOLD`), ``eps`` the dtype's (a complex dtype's parts'); ``atol``
    is the smallest solution norm a solve's residual is scaled by
    (:data:`RESIDUAL_SOLUTION_FLOOR`)."""
    return Bound("residual", "||R||_1/(n*||A||_1*eps) < 30", "LAPACK testing THRESH",
                 eps=float(ml_dtypes.finfo(_real(dtype)).eps), threshold=RESIDUAL_THRESHOLD,
                 atol=RESIDUAL_SOLUTION_FLOOR)


def _pivot(dtype: Any) -> Bound:
    """``max |L| <= threshold`` of partial pivoting: ``threshold`` the exact bound (1;
    ``sqrt(2)`` for complex dtypes) plus ``atol``, :data:`PIVOT_SLACK`."""
    limit = np.sqrt(2) if np.dtype(dtype).kind == "c" else 1.0
    return Bound("pivot", f"max|L| <= {limit:.4g} + {PIVOT_SLACK:g}", LEGACY,
                 atol=PIVOT_SLACK, threshold=float(limit + PIVOT_SLACK))


def _fixed(dtype: Any, *, check: str) -> Bound:
    """A whole-program check's fixed ``rtol``/``atol`` (:data:`FIXED`; KeyError names the
    checks)."""
    try:
        entry = FIXED[check]
    except KeyError:
        raise KeyError(f"no fixed tolerance for {check!r}; table has {sorted(FIXED)}"
                       ) from None
    return Bound("fixed", f"{check}: rtol {entry.rtol:g}, atol {entry.atol:g}", entry.source,
                 rtol=entry.rtol, atol=entry.atol)


_KINDS: dict[str, Callable[..., Bound]] = {
    "exact": _exact, "ulp": _ulp, "value": _value, "value_normwise": _value_normwise,
    "rounding": _rounding, "summation": _summation, "product": _product,
    "residual": _residual, "pivot": _pivot, "fixed": _fixed,
}


def bound(kind: str, dtype: Any, **params: Any) -> Bound:
    """The allowed error of a check: the one entry point tests use.

    ``kind`` (``dtype``: the result's dtype, or the accumulation dtype; keyword
    ``params`` per kind, checked by the signature of the kind's function):

    - ``"exact"`` (``controls=None``): 0 ULP; with ``controls``, ``atol`` a flushed
      subnormal where the declaration flushes;
    - ``"ulp"`` (``op``, ``scale=None``, ``reference="mpmath"``): the op's ULP budget
      (:func:`ulp_bound`);
    - ``"value"`` (``op=None``, ``scale=1.0``) and ``"value_normwise"`` (``expected``,
      ``op=None``): relative value tolerance (:func:`value_rtol`, :data:`DTYPE_TOLERANCE`);
    - ``"rounding"`` (``magnitude``, ``roundings``, ``controls``, ``name``, ...),
      ``"summation"``/``"product"`` (``x``, ``axes``, ``controls``): running-error bounds
      of :mod:`conformance.helpers.error_bounds`;
    - ``"residual"``: LAPACK's residual ratio threshold; ``"pivot"``: partial pivoting's
      ``|L|`` bound; ``"fixed"`` (``check``): a whole-program check's number
      (:data:`FIXED`).

    ``controls`` is the session's resolved float-controls declaration (the
    ``float_controls`` fixture): the bound accepts a flushed subnormal only where it
    flushes. ValueError for an unknown kind; TypeError for a missing or unknown
    parameter."""
    try:
        make = _KINDS[kind]
    except KeyError:
        raise ValueError(f"bound: unknown kind {kind!r}; kinds: {sorted(_KINDS)}") from None
    try:
        return make(dtype, **params)
    except TypeError as err:
        if "argument" in str(err) and make.__name__ in str(err):
            raise TypeError(f"bound({kind!r}): {err}") from None
        raise
