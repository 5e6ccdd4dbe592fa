"""Catalog cases (:class:`stablehlo_case.OpCase`) for spec ops jax does not emit, as
StableHLO text (:mod:`stablehlo_text_gaps`): the dynamic-shape ops with constant shape
operands on static shapes (each must equal its static op, given by NumPy),
``get_dimension_size``, ``composite`` (equals its decomposition) and
``async_start``/``async_done`` around a one-replica ``all_reduce`` (the identity),
and ops a platform may refuse at compile (``optional``: ``not_supported`` then):
``dynamic_conv``, ``uniform_quantize``/``uniform_dequantize`` (``!quant.uniform`` i8). ``rng`` has its own statistical test
(``test_stablehlo_ops.py::test_rng``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.helpers import dtype_helpers as dh
from conformance.helpers import strategies as hh
from conformance.programs import stablehlo_case as c
from conformance.programs import stablehlo_bounds
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


#: dynamic_conv's (low, high) spatial padding; uniform quantization's scale and zero point.
CONV_PADDING, SCALE, ZERO_POINT = (1, 2), 0.5, 3


def conv_reference(x: np.ndarray, w: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    """Stride-1 ``convolution`` of ``x`` (batch, in, width) with ``w`` (out, in, k)
    (cross-correlation, float64, cast back)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), padding))
    k = w.shape[2]
    windows = np.stack([xp[:, :, i:i + k] for i in range(xp.shape[2] - k + 1)], axis=2)
    return np.einsum("bcik,ock->boi", windows, w.astype(np.float64)).astype(x.dtype)


def _conv_inputs(data: Any, dt: dh.DType) -> list[np.ndarray]:
    batch, width = data.draw(st.sampled_from(((1, 6), (2, 5))), label="batch, width")
    x = data.draw(hh.finite_arrays(dt, (batch, 2, width), min_value=-4, max_value=4), label="x")
    w = data.draw(hh.finite_arrays(dt, (3, 2, 3), min_value=-4, max_value=4), label="w")
    return [x, w]


def quantize_reference(x: np.ndarray, scale: float, zero_point: int) -> list[np.ndarray]:
    """(dequantized float32, int8 storage) of ``x`` quantized to i8 with ``scale`` and
    ``zero_point``: round half to even, clamp to [-128, 127]."""
    q = np.clip(np.rint(x.astype(np.float64) / scale) + zero_point, -128, 127)
    return [((q - zero_point) * scale).astype(np.float32), q.astype(np.int8)]


def _int8_storage(data: Any, dt: dh.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((7,), (3, 5))), label="shape")
    return [data.draw(hh.finite_arrays(dh.BY_NAME["int8"], shape), label="q")]


def cases() -> list[c.OpCase]:
    """The cases (:class:`conformance.programs.stablehlo_case.OpCase`)."""
    iota_dtypes = tuple(c.NUMERIC + c.FP8)
    return [
        c.OpCase("get_dimension_size", "first-last", tuple(c.ALL), c.arrays(1, bits=True),
                 lambda args: gt.get_dimension_size(args[0], _ends(args[0])),
                 lambda args: [np.array(args[0].shape[d], np.int32) for d in _ends(args[0])],
                 outputs=2),
        c.OpCase("dynamic_iota", "last-dim", iota_dtypes, c.arrays(1),
                 lambda args: gt.dynamic_iota(args[0], args[0].ndim - 1),
                 lambda args: [np.broadcast_to(
                     np.arange(args[0].shape[-1]).astype(args[0].dtype), args[0].shape).copy()]),
        c.OpCase("dynamic_broadcast_in_dim", "lead-2", tuple(c.ALL), c.arrays(1, bits=True),
                 lambda args: gt.dynamic_broadcast_in_dim(args[0], 2),
                 lambda args: [np.broadcast_to(args[0], (2, *args[0].shape)).copy()],
                 # XLA:CPU quiets/rewrites bf16 NaN payloads here (seen 2026-11): NaN
                 # stays NaN, its payload is not compared
                 nan_payloads=False),
        c.OpCase("dynamic_reshape", "reversed-shape", tuple(c.ALL), c.arrays(1, bits=True),
                 lambda args: gt.dynamic_reshape(args[0], args[0].shape[::-1]),
                 lambda args: [args[0].reshape(args[0].shape[::-1])]),
        c.OpCase("dynamic_pad", "low-high-interior", tuple(c.NUMERIC + c.FP8 + ["bool"]),
                 _pad_inputs, lambda args: gt.dynamic_pad(*args, *PAD),
                 lambda args: [pad_reference(*args, *PAD)]),
        c.OpCase("dynamic_gather", "rows", tuple(c.ALL), _gather_inputs,
                 lambda args: gt.dynamic_gather_rows(*args), lambda args: [args[0][args[1][:, 0]]]),
        c.OpCase("composite", "add-multiply", tuple(c.FLOATS), c.arrays(2, low=-100, high=100),
                 lambda args: gt.composite_add_multiply(*args), _composite_reference,
                 c.APPROX, stablehlo_bounds.add_multiply),
        c.OpCase("async_start", "all_reduce-one-replica", tuple(c.NUMERIC),
                 c.arrays(1), lambda args: gt.async_all_reduce(args[0]),
                 # XLA:CPU reduces from a zero (-0.0 comes back +0.0): compared by value
                 lambda args: [args[0]], c.APPROX, lambda args: [(0, np.abs(args[0]))]),
        c.OpCase("dynamic_conv", "1d-padded", tuple(c.FLOATS), _conv_inputs,
                 lambda args: gt.dynamic_conv_1d(*args, CONV_PADDING),
                 lambda args: [conv_reference(*args, CONV_PADDING)], c.APPROX,
                 lambda args: stablehlo_bounds.conv_1d(args, conv_reference, CONV_PADDING),
                 optional=True),
        c.OpCase("uniform_quantize", "i8-round-trip", ("float32",),
                 c.arrays(1, low=-80, high=80),
                 lambda args: gt.uniform_round_trip(args[0], SCALE, ZERO_POINT),
                 lambda args: quantize_reference(args[0], SCALE, ZERO_POINT), outputs=2,
                 optional=True),
        c.OpCase("uniform_dequantize", "i8", ("int8",), _int8_storage,
                 lambda args: gt.uniform_dequantize(args[0], SCALE, ZERO_POINT),
                 lambda args: [((args[0].astype(np.float64) - ZERO_POINT) * SCALE
                                ).astype(np.float32)], optional=True),
    ]
