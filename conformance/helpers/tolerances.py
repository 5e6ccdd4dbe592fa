"""The one tolerance table: how far a healthy backend may be from the reference, and why.

Every bound the suite applies to a floating-point result comes from here, each
entry with its source (docs/tolerances.md lists them):

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

import ml_dtypes
import numpy as np

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
