"""One case of the op catalog (:class:`OpCase`), the dtype lists and shapes it draws
from, and :func:`arrays`, the input draw most cases use: what
:mod:`conformance.programs.stablehlo_catalog` and its gap cases
(:mod:`conformance.programs.stablehlo_catalog_gaps`) share, so that neither reaches
into the other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from conformance.helpers import dtype_helpers
from conformance.helpers import strategies

#: Tolerance classes: bit for bit, or ``rtol`` a multiple of the dtype's ULP tolerance.
EXACT, APPROX = "exact", "approx"
SHAPES = ((7,), (3, 5), (2, 3, 4))
ALL = [d.name for d in dtype_helpers.TRANSFER_DTYPES]
FLOATS = [d.name for d in dtype_helpers.FLOATS]
FP8 = [d.name for d in dtype_helpers.FP8]
NUMERIC = ([d.name for d in dtype_helpers.INTS + dtype_helpers.UINTS] + FLOATS
           + [d.name for d in dtype_helpers.COMPLEX])


@dataclasses.dataclass(frozen=True)
class OpCase:
    """One generated test: ``op`` (the spec name), ``variant``, ``dtypes`` (dtype names),
    ``inputs(data, dt) -> [arrays]``, ``program(args) -> StableHLO text or a jax
    function``, ``reference(args) -> [expected arrays]``, ``tolerance`` (``EXACT`` or
    ``APPROX``), ``bound`` (APPROX: ``bound(args) -> [(roundings, magnitude[, growth])]`` per
    output, the derivation of a composite op's error: each output may differ from the
    reference by ``tolerances.derived_rtol(roundings) * magnitude`` elementwise; None:
    the elementwise budget of ``op`` relative to the largest reference), ``outputs``,
    ``nan_payloads`` (EXACT: NaN bits must match too; False for arithmetic), ``view``
    (applied to results and references before comparing: the part the spec defines),
    ``optional`` (a platform may refuse the op at compile: ``not_supported``)."""

    op: str
    variant: str
    dtypes: tuple[str, ...]
    inputs: Callable[[Any, dtype_helpers.DType], list[np.ndarray]]
    program: Callable[[list[np.ndarray]], Any]
    reference: Callable[[list[np.ndarray]], list[np.ndarray]]
    tolerance: str = EXACT
    bound: Callable[[list[np.ndarray]], list[tuple[int, np.ndarray]]] | None = None
    outputs: int = 1
    nan_payloads: bool = True
    view: Callable[[np.ndarray], np.ndarray] = np.asarray
    optional: bool = False

    @property
    def id(self) -> str:
        return f"{self.op}-{self.variant}"


def arrays(n: int, *, low: float = -1e3, high: float = 1e3, shapes=SHAPES,
           bits: bool = False):
    """``inputs`` of ``n`` arrays of one drawn shape (bit patterns when ``bits``)."""
    def draw(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
        shape = data.draw(st.sampled_from(shapes), label="shape")
        if dt.kind == "float":  # within the dtype's range (fp8: +-448 and less)
            top = float(ml_dtypes.finfo(dt.dtype).max) / 2
            lo, hi = max(low, -top), min(high, top)
        else:
            lo, hi = low, high
        inexact = dt.kind in ("float", "complex")
        strategy = strategies.bit_patterns(dt, shape) if bits and inexact \
            else strategies.finite_arrays(dt, shape, min_value=lo if inexact else None,
                                          max_value=hi if inexact else None)
        return [data.draw(strategy, label=f"x{i}") for i in range(n)]
    return draw
