"""Mutation operator ``output``, just past the bound: a float64 transcendental op whose
results are one ULP beyond the op's budget in :mod:`conformance.helpers.tolerances`.

The other output mutants perturb results far past every bound (``base.perturb``: x(1 +
2**-9) plus 64 ULP), which says nothing about whether a bound is tight. These return
the correctly rounded result (``mpmath_reference``) moved ``ulp_bound(op) + 1`` ULP up, so
the accuracy area must fail a backend that is wrong by as little as the table allows
plus one. (Just-inside results passing is proven in ``tests/test_tolerances.py``.)
Argument-scaled ops (sin, cos, tan) are left out: their absolute allowance
``eps * max(1, |x|)`` is a separate class.
"""

from __future__ import annotations

import numpy as np

from tests.mutants.base import transforming
from tests.mutants.catalog import add

#: The ULP-class float64 ops; the accuracy area names each program after its op
#: (``module @jit_<op>``), which is how a transform recognises it.
OPS = ("exp", "expm1", "log", "log1p", "tanh", "logistic", "rsqrt", "cbrt", "atan2", "power")


def _just_past(op: str):
    from conformance.helpers import mpmath_reference, tolerances

    k = tolerances.ulp_bound(op, "float64")

    def transform(site, inputs, outputs):
        if site.program != op or not all(a.dtype == np.float64 for a in inputs):
            return outputs
        want = mpmath_reference.correctly_rounded(op, inputs, np.float64)
        moved = want.copy()
        for _ in range(k + 1):
            moved = np.nextafter(moved, np.inf)
        normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float64).tiny) & \
            np.isfinite(moved)
        return [np.where(normal, moved, o).astype(o.dtype) if o.dtype == np.float64 else o
                for o in outputs]
    transform.__doc__ = (f"float64 {op} results {k + 1} ULP above the correctly rounded "
                         f"value: one past its {k}-ULP budget.")
    return transform


def _register():
    for op in OPS:
        fn = _just_past(op)
        add(f"out-just-past-ulp-{op}", "output", transforming(fn, fn.__doc__),
            f"test_kernels_elementwise: test_float_accuracy_in_ulp and {op}-float64")


_register()
