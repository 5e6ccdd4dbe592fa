"""How ``test_stablehlo_ops`` compares a backend's result with the reference, per case.

One place, so the self-tests (tests/test_tolerances.py) exercise the very comparison
the area applies: exact cases bit for bit, approximate ones within the budget of
:mod:`conformance.helpers.tolerances` or the derived bound of
:mod:`conformance.programs.stablehlo_bounds`.
"""

from __future__ import annotations

import numpy as np

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import stablehlo_catalog


def comparison(case: stablehlo_catalog.OpCase, dt: dtype_helpers.DType,
               args: list[np.ndarray] | None = None, expected: list[np.ndarray] | None = None, *,
               controls: float_control_modes.FloatControls):
    """``compare(got, want, call)`` for ``case`` in ``dt``: bit for bit for ``EXACT`` cases
    and integer/bool dtypes; for ``APPROX`` cases with a ``bound``, within
    ``tolerances.bound("rounding", ...)`` of ``roundings + 1`` (the reference's own
    rounding) roundings relative to ``magnitude`` (overflow handled there, and flushed
    subnormals where the declared float ``controls`` flush) of the derivation for the output
    ``want`` is (``want`` must be one of the ``expected`` arrays, by identity; ``args``
    are the inputs the bound is derived from); else within the elementwise budget of the
    op (``tolerances.bound("value", ...)``: float64 the op's budget, others the dtype's
    rtol), the absolute part
    scaled by the largest reference magnitude. ValueError when a bounded case gets no
    ``args``/``expected``."""
    derived = None
    if case.tolerance == stablehlo_catalog.APPROX and case.bound is not None and dt.kind in (
            "float", "complex"):
        if args is None or expected is None:
            raise ValueError(f"comparison: case {case.id!r} has a derived bound; pass "
                             f"'args' and 'expected'")
        derived = [(id(w), tolerances.bound(
            "rounding", dt.dtype, magnitude=m, roundings=r + 1, growth=g[0] if g else 1.0,
            controls=controls, name=f"({r}+1)*eps*magnitude + ({r}+1)*tiny*growth "
            f"(stablehlo_bounds, {case.op})")) for w, (r, m, *g) in zip(expected, case.bound(args))]

    def compare(got: np.ndarray, want: np.ndarray, call: str) -> None:
        key = id(want)
        got, want = case.view(np.asarray(got)), case.view(np.asarray(want))
        if case.tolerance == stablehlo_catalog.EXACT or want.dtype.kind in "biu":
            assertions.assert_bitwise_equal(got, want, call=call, nan_payloads=case.nan_payloads)
            return
        if derived is not None:
            (bound,) = [b for k, b in derived if k == key]
            assertions.assert_within_bound(got, want, bound, call=call)
            return
        scale = float(np.max(np.abs(want.astype(np.complex128)), initial=1.0))
        tol = tolerances.bound("value", dt.dtype, op=case.op, scale=scale)
        assertions.assert_allclose(got, want, rtol=tol.rtol, atol=tol.atol, call=call)
    return compare
