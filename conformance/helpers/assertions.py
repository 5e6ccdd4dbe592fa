"""Assertions comparing device results with NumPy.

Each compares whole arrays first and builds a per-element message only on
failure: observed, expected, and the call in brackets. Helper frames are hidden
from pytest tracebacks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.helpers import dtype_helpers
from conformance.helpers import error_bounds, tolerances, ulp
from conformance.helpers.reproduction import compared
from conformance.helpers.error_bounds import ErrorBound
from conformance.helpers.ulp_stats import ULP_ERRORS_ATTRIBUTE, ulp_histogram

_MAX_REPORTED = 5


class BackendCrash(AssertionError):
    """The backend killed its process (signal) instead of raising an error."""


class SpecPropertyViolation(AssertionError):
    """A result broke a property the spec states for *every* execution (a value outside
    the interval an op may return), not a statistic that an unlucky draw may miss.

    A test that raises it and passes on its re-run is still ``fail_wrong_result``, never
    ``flaky`` (:class:`conformance.certification.results.records.Collector`): the first run's
    result was wrong, whatever the second one returned."""


def _host(out: Any) -> np.ndarray:
    return out if isinstance(out, np.ndarray) else np.asarray(out)


def assert_dtype(out_dtype: Any, expected: Any, *, call: str) -> None:
    __tracebackhide__ = True
    if np.dtype(out_dtype) != np.dtype(expected):
        raise AssertionError(f"out.dtype={np.dtype(out_dtype)}, but should be "
                             f"{np.dtype(expected)} [{call}]")


def assert_shape(out_shape: Any, expected: Any, *, call: str) -> None:
    __tracebackhide__ = True
    if tuple(out_shape) != tuple(expected):
        raise AssertionError(f"out.shape={tuple(out_shape)}, but should be {tuple(expected)} "
                             f"[{call}]")


def _comparable_bits(a: np.ndarray) -> np.ndarray:
    """Integer view of ``a`` in which equal bits compare equal."""
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    if dtype_helpers.is_subbyte(a.dtype):  # 4-bit codes live in the low nibble of each byte
        return a.view(np.uint8) & np.uint8(0x0F)
    if a.dtype.kind == "c":  # .real/.imag are views: the bits are untouched
        comp = np.dtype(f"u{a.dtype.itemsize // 2}")
        return np.stack([a.real, a.imag], axis=-1).view(comp)
    return a.copy(order="C").view(dtype_helpers.uint_view_dtype(a.dtype))


def _hex(bits: np.ndarray) -> str:
    """``bits`` (one element's comparable bits: a scalar, or a complex's (real, imag)
    pair) as zero-padded hex, ``0x7fc00001`` or ``(0x3f800000, 0x7fa00000)``."""
    flat = np.asarray(bits).reshape(-1)
    digits = flat.dtype.itemsize * 2
    text = [f"0x{int(b):0{digits}x}" for b in flat]
    return text[0] if len(text) == 1 else f"({', '.join(text)})"


def _mismatch_lines(mask: np.ndarray, out: np.ndarray, expected: np.ndarray,
                    bits: tuple[np.ndarray, np.ndarray] | None = None) -> str:
    """One line per mismatching element (the first few): index, both values and, with
    ``bits`` (the comparable bits of out and expected), both bit patterns in hex."""
    idx = np.argwhere(mask)
    lines = [f"  at {tuple(int(i) for i in ix)}: out={out[tuple(ix)]!r}, "
             f"expected={expected[tuple(ix)]!r}"
             + (f" (bits {_hex(bits[0][tuple(ix)])} vs {_hex(bits[1][tuple(ix)])})"
                if bits is not None else "")
             for ix in idx[:_MAX_REPORTED]]
    more = f"\n  ... and {len(idx) - _MAX_REPORTED} more" if len(idx) > _MAX_REPORTED else ""
    return "\n".join(lines) + more


def _nan_mask(a: np.ndarray) -> np.ndarray | None:
    """Elementwise NaN mask of a floating array (None for other kinds)."""
    if a.dtype.kind in "fc" or (a.dtype.kind == "V" and not dtype_helpers.is_subbyte(a.dtype)
                                and a.dtype != np.bool_):
        with np.errstate(invalid="ignore"):
            return np.isnan(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    return None


def assert_bitwise_equal(out: Any, expected: np.ndarray, *, call: str,
                         nan_payloads: bool = True) -> None:
    """``out`` has ``expected``'s dtype, shape and exact bits (-0.0 included).

    ``nan_payloads=False`` accepts any NaN where ``expected`` has a NaN (for ops
    that may quiet signaling NaNs); all other elements must match bit for bit.
    """
    __tracebackhide__ = True
    out = _host(out)
    assert_dtype(out.dtype, expected.dtype, call=call)
    assert_shape(out.shape, expected.shape, call=call)
    got, want = _comparable_bits(out), _comparable_bits(expected)
    if out.dtype.kind == "c":  # (real, imag) bits side by side
        got, want = got.reshape(out.shape + (2,)), want.reshape(out.shape + (2,))
        mask = ~np.all(got == want, axis=-1)
    else:
        mask = got != want
    if not nan_payloads:
        got_nan, want_nan = _nan_mask(out), _nan_mask(expected)
        if got_nan is not None:
            mask &= ~(got_nan & want_nan)
    if not mask.any():
        return
    raise compared(AssertionError(f"out differs from expected in {int(mask.sum())} of "
                                  f"{out.size} elements (bitwise) [{call}]\n"
                                  f"{_mismatch_lines(mask, out, expected, (got, want))}"),
                   out, expected, "assert_bitwise_equal", nan_payloads=nan_payloads)


def assert_exact(out: Any, expected: np.ndarray, *, call: str) -> None:
    """``out`` equals ``expected`` value for value (NaN equals NaN), same dtype and shape."""
    __tracebackhide__ = True
    out = _host(out)
    assert_dtype(out.dtype, expected.dtype, call=call)
    assert_shape(out.shape, expected.shape, call=call)
    if np.array_equal(out, expected, equal_nan=out.dtype.kind in "fc"):
        return
    with np.errstate(invalid="ignore"):
        mask = ~((out == expected) | (np.isnan(out) & np.isnan(expected))
                 if out.dtype.kind in "fc" else (out == expected))
    raise compared(AssertionError(f"out differs from expected in {int(mask.sum())} of "
                                  f"{out.size} elements [{call}]\n"
                                  f"{_mismatch_lines(mask, out, expected)}"),
                   out, expected, "assert_exact")


def assert_allclose(out: Any, expected: np.ndarray, *, rtol: float, atol: float | np.ndarray,
                    call: str) -> None:
    """|out - expected| <= atol + rtol * |expected| elementwise, same dtype and shape.

    NaN must be where ``expected`` has NaN, infinities must match in sign.
    Values are compared in float64/complex128.
    """
    __tracebackhide__ = True
    out = _host(out)
    assert_dtype(out.dtype, expected.dtype, call=call)
    assert_shape(out.shape, expected.shape, call=call)
    if out.dtype.kind == "c":  # compare (real, imag) as float pairs
        got = np.stack([out.real, out.imag], axis=-1).astype(np.float64)
        want = np.stack([expected.real, expected.imag], axis=-1).astype(np.float64)
    else:
        got, want = out.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        nan_ok = np.isnan(got) == np.isnan(want)
        inf_ok = np.where(np.isinf(want) | np.isinf(got), got == want, True)
        finite = np.isfinite(want) & np.isfinite(got)
        close = np.where(finite, np.abs(got - want) <= atol + rtol * np.abs(want), True)
    bad = ~(nan_ok & inf_ok & close)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(got - want), np.inf)
    if out.dtype.kind == "c":
        bad, err = bad.any(axis=-1), err.max(axis=-1)
    mask = bad
    if not mask.any():
        return
    raise compared(AssertionError(
        f"out differs from expected in {int(mask.sum())} of {out.size} elements, "
        f"max abs error {float(np.max(err[mask])):.3g} > atol={_describe_atol(atol)} + rtol={rtol:g}*|expected| "
        f"[{call}]\n{_mismatch_lines(mask, out, expected)}"),
        out, expected, "assert_allclose", rtol=rtol, atol=atol)


def assert_ulp_close(out: Any, expected: np.ndarray, *, max_ulp: int, call: str,
                     atol: float | np.ndarray = 0.0, signed_zeros: bool = False) -> None:
    """Every element of ``out`` within ``max_ulp`` ULP of ``expected`` (or ``atol`` absolute).

    Same dtype and shape required; NaN exactly where ``expected`` has NaN, infinities
    equal (a finite value next to infinity is not close). Complex arrays are compared
    part by part. ``signed_zeros``: ``-0`` and ``+0`` must match (IEEE-defined results).
    ``max_ulp=0`` with ``signed_zeros`` is bit equality up to NaN payloads.
    """
    __tracebackhide__ = True
    out = _host(out)
    assert_dtype(out.dtype, expected.dtype, call=call)
    assert_shape(out.shape, expected.shape, call=call)
    if out.dtype.kind == "c":
        got = np.stack([out.real, out.imag], axis=-1)
        want = np.stack([expected.real, expected.imag], axis=-1)
    else:
        got, want = out, np.asarray(expected)
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    if np.ndim(atol) and g64.ndim > np.ndim(atol):  # complex as (re, im) pairs
        atol = np.asarray(atol)[..., None]
    with np.errstate(invalid="ignore", over="ignore"):
        nan_g, nan_w = np.isnan(g64), np.isnan(w64)
        dist = ulp.ulp_distance(got, want)
        ok = np.where(nan_g | nan_w, nan_g == nan_w,
                      np.where(np.isinf(g64) | np.isinf(w64), g64 == w64,
                               (dist <= max_ulp) | (np.abs(g64 - w64) <= atol)))
        if signed_zeros:
            ok &= np.where((g64 == 0) & (w64 == 0), np.signbit(g64) == np.signbit(w64), True)
    if out.dtype.kind == "c":
        ok, dist = ok.all(axis=-1), dist.max(axis=-1)
    mask = ~ok
    if not mask.any():
        return
    worst = int(np.max(np.where(mask & (dist < np.iinfo(np.uint64).max), dist, 0)))
    err = AssertionError(
        f"out differs from expected in {int(mask.sum())} of {out.size} elements, "
        f"max {worst} ULP > {max_ulp} ULP (atol={_describe_atol(atol)}"
        f"{', signed zeros' if signed_zeros else ''}) [{call}]\n"
        f"{_mismatch_lines(mask, out, expected)}")
    finite = np.isfinite(g64) & np.isfinite(w64)
    if out.dtype.kind == "c":
        finite = finite.all(axis=-1)
    setattr(err, ULP_ERRORS_ATTRIBUTE, ulp_histogram(dist[finite], max_ulp,
                                                     nonfinite=int((mask & ~finite).sum())))
    raise compared(err, out, expected, "assert_ulp_close", max_ulp=max_ulp, atol=atol,
                   signed_zeros=signed_zeros)


def _bound_mask(bad_finite: np.ndarray, got: np.ndarray, want: np.ndarray, bound: ErrorBound,
                limit: float) -> np.ndarray:
    """Elements that break ``bound``, given where the finite comparison failed.

    ``got``/``want``: complex128. Non-finite values: an expected NaN needs a NaN
    (either component), an expected infinity the same value; an infinity or NaN
    where a finite value is expected passes only where ``bound`` allows overflow
    (an infinity of ``expected``'s sign) or NaN (then any non-finite value, e.g.
    after ``inf - inf`` or a complex overflow); an expected infinity may come back
    as a value within the bound of ``+-limit`` (the largest finite value) where
    the bound's ``near_max`` says the exact result lies that close.
    """
    shape = got.shape
    overflow = np.broadcast_to(np.asarray(bound.overflow, bool), shape)
    nan_ok = np.broadcast_to(np.asarray(bound.nan, bool), shape)
    near_max = np.broadcast_to(np.asarray(bound.near_max, bool), shape)
    allowed = np.broadcast_to(np.asarray(bound.abs, np.float64), shape)
    parts = np.stack([got.real, got.imag]), np.stack([want.real, want.imag])
    with np.errstate(invalid="ignore", over="ignore"):
        g_nan, w_nan = np.isnan(parts[0]).any(axis=0), np.isnan(parts[1]).any(axis=0)
        g_fin, w_fin = np.isfinite(got), np.isfinite(want)
        same = np.all((parts[0] == parts[1]) | np.isnan(parts[0]) & np.isnan(parts[1]), axis=0)
        sign_ok = np.all((np.sign(parts[0]) == np.sign(parts[1])) | (parts[1] == 0), axis=0)
        clipped = np.stack([np.clip(p, -limit, limit) for p in parts[1]])
        near_limit = np.abs(got - (clipped[0] + 1j * clipped[1])) <= allowed
    ok = np.where(w_nan, g_nan, True)
    ok &= np.where(~w_nan & ~w_fin, same | (near_max & g_fin & sign_ok & near_limit)
                   | (nan_ok & ~g_fin), True)
    ok &= np.where(w_fin & g_nan, nan_ok, True)
    ok &= np.where(w_fin & ~g_fin & ~g_nan, overflow & (sign_ok | nan_ok), True)
    ok &= np.where(w_fin & g_fin, ~bad_finite, True)
    return ~ok


def assert_within_bound(out: Any, expected: np.ndarray,
                        bound: np.ndarray | ErrorBound | tolerances.Bound, *,
                        call: str, bound_name: str | None = None) -> None:
    """``|out - expected| <= bound`` elementwise (complex: modulus of the difference).

    For results held to an error bound of the computation (summation, dot
    products, factorizations) rather than a fixed tolerance. ``bound``: a
    ``tolerances.Bound`` with an ``error`` (what ``tolerances.bound`` gives for the
    running-error kinds), an ``error_bounds.ErrorBound`` (which also says where
    overflow to an infinity or NaN is an honest result), or a plain array of allowed
    absolute errors named
    by ``bound_name`` (``"k*eps*(|A|@|B|)"``). Same dtype and shape required. An
    expected NaN or infinity must come back as such; a NaN or infinity where a
    finite value is expected fails unless the bound allows overflow there.
    """
    __tracebackhide__ = True
    out = _host(out)
    assert_dtype(out.dtype, expected.dtype, call=call)
    assert_shape(out.shape, expected.shape, call=call)
    if isinstance(bound, tolerances.Bound):
        if bound.error is None:
            raise TypeError(f"assert_within_bound: a {bound.kind!r} bound has no running "
                            f"error bound; use the check its fields are for")
        bound = bound.error
    if not isinstance(bound, ErrorBound):
        if bound_name is None:
            raise TypeError("assert_within_bound: a plain array 'bound' needs 'bound_name'")
        bound = ErrorBound(np.asarray(bound, np.float64), bound_name)
    got, want = out.astype(np.complex128), np.asarray(expected).astype(np.complex128)
    allowed = np.broadcast_to(np.asarray(bound.abs, np.float64), got.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - want)
        bad = ~(err <= allowed)
    if not bad.any():
        return
    limit = error_bounds.float_limits(out.dtype)[2] if out.dtype.kind not in "biu" else np.inf
    bad = _bound_mask(bad, got, want, bound, limit)
    if not bad.any():
        return
    with np.errstate(invalid="ignore"):
        excess = err - allowed
        finite_excess = np.where(bad & np.isfinite(excess), excess, -np.inf)
    worst = float(np.max(finite_excess)) if np.isfinite(finite_excess).any() else None
    what = f"worst excess {worst:.3g}" if worst is not None else "a non-finite value where " \
        "a finite one is expected, or the other way round"
    raise AssertionError(
        f"out differs from expected in {int(bad.sum())} of {out.size} elements by more than "
        f"the {bound.name} bound ({what}) [{call}]\n{_mismatch_lines(bad, out, expected)}")


def assert_residual_ratio(residual: np.ndarray, scale: float, *, n: int, what: str,
                          call: str, bound: tolerances.Bound | None = None,
                          eps: float | None = None, threshold: float | None = None) -> None:
    """LAPACK's test ratio ``||residual||_1 / (n * scale * eps)`` below ``threshold``.

    ``residual``: a matrix (or batch: the worst one counts) such as ``A - L @ U``;
    ``scale``: the norm it is measured against (``||A||_1``, 1 for orthogonality);
    ``bound``: ``tolerances.bound("residual", dtype)``, which gives ``eps`` (the dtype's)
    and ``threshold`` (LAPACK's own test threshold, 30; a ``threshold`` given overrides
    it); or ``eps`` (and ``threshold``, default the table's) directly. A NaN residual
    fails.
    """
    __tracebackhide__ = True
    if bound is not None:
        eps, threshold = bound.eps, bound.threshold if threshold is None else threshold
    if eps is None:
        raise TypeError("assert_residual_ratio: pass 'bound' (tolerances.bound('residual', "
                        "dtype)) or 'eps'")
    threshold = tolerances.RESIDUAL_THRESHOLD if threshold is None else threshold
    r = np.asarray(residual)
    norms = np.abs(r).sum(axis=-2).max(axis=-1) if r.ndim >= 2 else np.abs(r)
    worst = float(np.max(norms)) if norms.size else 0.0
    ratio = worst / (max(n, 1) * max(scale, np.finfo(np.float64).tiny) * eps)
    if not ratio < threshold:  # NaN fails too
        raise AssertionError(f"{what}: residual ratio ||R||_1/(n*||A||_1*eps) = {ratio:.3g}, "
                             f"above LAPACK's threshold {threshold:g} (||R||_1={worst:.3g}, "
                             f"n={n}, scale={scale:.3g}, eps={eps:.3g}) [{call}]")


def _describe_atol(atol: float | np.ndarray) -> str:
    """``atol`` for a message: a number, or the range of a per-element bound."""
    a = np.asarray(atol, np.float64)
    if a.ndim == 0 or a.size == 0:
        return f"{float(a.reshape(-1)[0]) if a.size else 0.0:g}"
    return f"{float(a.min()):g}..{float(a.max()):g} per element"
