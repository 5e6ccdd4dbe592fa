"""Catalog cases (:class:`stablehlo_catalog.OpCase`) for spec ops jax does not emit, as
StableHLO text (:mod:`stablehlo_text_gaps`): the dynamic-shape ops with constant shape
operands on static shapes (each must equal its static op, given by NumPy),
``get_dimension_size``, ``composite`` (equals its decomposition) and
``async_start``/``async_done`` around a one-replica ``all_reduce`` (the identity). ``rng`` has its own statistical test
(``test_stablehlo_ops.py::test_rng``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.helpers import dtype_helpers as dh
from conformance.helpers import strategies as hh
from conformance.programs import stablehlo_text_gaps as gt

#: dynamic_pad's (low, high, interior) padding of a 2-d operand.
PAD = ((1, 0), (0, 2), (1, 1))


def _ends(x: np.ndarray) -> list[int]:
    return [0, x.ndim - 1]  # the same dimension twice for a 1-d array


def pad_reference(x: np.ndarray, value: np.ndarray, low, high, interior) -> np.ndarray:
    """NumPy ``pad`` with non-negative ``low``/``high``/``interior`` amounts."""
    out = np.full(gt.pad_shape(x.shape, low, high, interior), value, dtype=x.dtype)
    out[tuple(slice(lo, lo + (d - 1) * (i + 1) + 1, i + 1)
              for d, lo, i in zip(x.shape, low, interior))] = x
    return out


def _pad_inputs(data: Any, dt: dh.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((3, 5), (2, 4))), label="shape")
    x = data.draw(hh.finite_arrays(dt, shape), label="x")
    value = data.draw(hh.finite_arrays(dt, ()), label="padding_value")
    return [x, np.asarray(value, dtype=dt.dtype)]


def _gather_inputs(data: Any, dt: dh.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((4, 3), (5, 7))), label="shape")
    x = data.draw(hh.finite_arrays(dt, shape), label="x")
    rows = data.draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=6),
                     label="rows")
    return [x, np.array(rows, dtype=np.int32).reshape(-1, 1)]


def _composite_reference(args: list[np.ndarray]) -> list[np.ndarray]:
    x, y = (a.astype(np.float64) for a in args)
    return [((x + y) * y).astype(args[0].dtype)]


def cases(catalog: Any) -> list[Any]:
    """The cases, built with ``catalog`` (:mod:`stablehlo_catalog`: ``OpCase``, dtype
    lists, ``_arrays``)."""
    c = catalog
    iota_dtypes = tuple(c.NUMERIC + c.FP8)
    return [
        c.OpCase("get_dimension_size", "first-last", tuple(c.ALL), c._arrays(1, bits=True),
                 lambda args: gt.get_dimension_size(args[0], _ends(args[0])),
                 lambda args: [np.array(args[0].shape[d], np.int32) for d in _ends(args[0])],
                 outputs=2),
        c.OpCase("dynamic_iota", "last-dim", iota_dtypes, c._arrays(1),
                 lambda args: gt.dynamic_iota(args[0], args[0].ndim - 1),
                 lambda args: [np.broadcast_to(
                     np.arange(args[0].shape[-1]).astype(args[0].dtype), args[0].shape).copy()]),
        c.OpCase("dynamic_broadcast_in_dim", "lead-2", tuple(c.ALL), c._arrays(1, bits=True),
                 lambda args: gt.dynamic_broadcast_in_dim(args[0], 2),
                 lambda args: [np.broadcast_to(args[0], (2, *args[0].shape)).copy()],
                 # XLA:CPU quiets/rewrites bf16 NaN payloads here (seen 2026-11): NaN
                 # stays NaN, its payload is not compared
                 nan_payloads=False),
        c.OpCase("dynamic_reshape", "reversed-shape", tuple(c.ALL), c._arrays(1, bits=True),
                 lambda args: gt.dynamic_reshape(args[0], args[0].shape[::-1]),
                 lambda args: [args[0].reshape(args[0].shape[::-1])]),
        c.OpCase("dynamic_pad", "low-high-interior", tuple(c.NUMERIC + c.FP8 + ["bool"]),
                 _pad_inputs, lambda args: gt.dynamic_pad(*args, *PAD),
                 lambda args: [pad_reference(*args, *PAD)]),
        c.OpCase("dynamic_gather", "rows", tuple(c.ALL), _gather_inputs,
                 lambda args: gt.dynamic_gather_rows(*args), lambda args: [args[0][args[1][:, 0]]]),
        c.OpCase("composite", "add-multiply", tuple(c.FLOATS), c._arrays(2, low=-100, high=100),
                 lambda args: gt.composite_add_multiply(*args), _composite_reference,
                 c.APPROX, 4.0),
        c.OpCase("async_start", "all_reduce-one-replica", tuple(c.NUMERIC),
                 c._arrays(1), lambda args: gt.async_all_reduce(args[0]),
                 # XLA:CPU reduces from a zero (-0.0 comes back +0.0): compared by value
                 lambda args: [args[0]], c.APPROX, 1.0),
    ]
