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

from conformance.helpers import dtype_helpers
from conformance.helpers import strategies
from conformance.programs import stablehlo_bounds
from conformance.programs.stablehlo_case import ALL, APPROX, FLOATS, FP8, NUMERIC, OpCase, arrays
from conformance.programs.stablehlo_text_gaps import (
    async_all_reduce, composite_add_multiply, dynamic_broadcast_in_dim, dynamic_conv_1d,
    dynamic_gather_rows, dynamic_iota, dynamic_pad, dynamic_reshape, get_dimension_size, pad_shape,
    uniform_dequantize, uniform_round_trip)

#: dynamic_pad's (low, high, interior) padding of a 2-d operand.
PAD = ((1, 0), (0, 2), (1, 1))


def _ends(x: np.ndarray) -> list[int]:
    return [0, x.ndim - 1]  # the same dimension twice for a 1-d array


def pad_reference(x: np.ndarray, value: np.ndarray, low, high, interior) -> np.ndarray:
    """NumPy ``pad`` with non-negative ``low``/``high``/``interior`` amounts."""
    out = np.full(pad_shape(x.shape, low, high, interior), value, dtype=x.dtype)
    out[tuple(slice(lo, lo + (d - 1) * (i + 1) + 1, i + 1)
              for d, lo, i in zip(x.shape, low, interior))] = x
    return out


def _pad_inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((3, 5), (2, 4))), label="shape")
    x = data.draw(strategies.finite_arrays(dt, shape), label="x")
    value = data.draw(strategies.finite_arrays(dt, ()), label="padding_value")
    return [x, np.asarray(value, dtype=dt.dtype)]


def _gather_inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((4, 3), (5, 7))), label="shape")
    x = data.draw(strategies.finite_arrays(dt, shape), label="x")
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


def _conv_inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    batch, width = data.draw(st.sampled_from(((1, 6), (2, 5))), label="batch, width")
    x = data.draw(strategies.finite_arrays(dt, (batch, 2, width), min_value=-4, max_value=4),
                  label="x")
    w = data.draw(strategies.finite_arrays(dt, (3, 2, 3), min_value=-4, max_value=4), label="w")
    return [x, w]


def quantize_reference(x: np.ndarray, scale: float, zero_point: int) -> list[np.ndarray]:
    """(dequantized float32, int8 storage) of ``x`` quantized to i8 with ``scale`` and
    ``zero_point``: round half to even, clamp to [-128, 127]."""
    q = np.clip(np.rint(x.astype(np.float64) / scale) + zero_point, -128, 127)
    return [((q - zero_point) * scale).astype(np.float32), q.astype(np.int8)]


def _int8_storage(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((7,), (3, 5))), label="shape")
    return [data.draw(strategies.finite_arrays(dtype_helpers.BY_NAME["int8"], shape), label="q")]


def cases() -> list[OpCase]:
    """The cases (:class:`conformance.programs.stablehlo_case.OpCase`)."""
    iota_dtypes = tuple(NUMERIC + FP8)
    return [
        OpCase("get_dimension_size", "first-last", tuple(ALL), arrays(1, bits=True),
               lambda args: get_dimension_size(args[0], _ends(args[0])),
               lambda args: [np.array(args[0].shape[d], np.int32) for d in _ends(args[0])],
               outputs=2),
        OpCase("dynamic_iota", "last-dim", iota_dtypes, arrays(1),
               lambda args: dynamic_iota(args[0], args[0].ndim - 1),
               lambda args: [np.broadcast_to(
                   np.arange(args[0].shape[-1]).astype(args[0].dtype), args[0].shape).copy()]),
        OpCase("dynamic_broadcast_in_dim", "lead-2", tuple(ALL), arrays(1, bits=True),
               lambda args: dynamic_broadcast_in_dim(args[0], 2),
               lambda args: [np.broadcast_to(args[0], (2, *args[0].shape)).copy()],
               # XLA:CPU quiets/rewrites bf16 NaN payloads here (seen 2026-11): NaN
               # stays NaN, its payload is not compared
               nan_payloads=False),
        OpCase("dynamic_reshape", "reversed-shape", tuple(ALL), arrays(1, bits=True),
               lambda args: dynamic_reshape(args[0], args[0].shape[::-1]),
               lambda args: [args[0].reshape(args[0].shape[::-1])]),
        OpCase("dynamic_pad", "low-high-interior", tuple(NUMERIC + FP8 + ["bool"]),
               _pad_inputs, lambda args: dynamic_pad(*args, *PAD),
               lambda args: [pad_reference(*args, *PAD)]),
        OpCase("dynamic_gather", "rows", tuple(ALL), _gather_inputs,
               lambda args: dynamic_gather_rows(*args), lambda args: [args[0][args[1][:, 0]]]),
        OpCase("composite", "add-multiply", tuple(FLOATS), arrays(2, low=-100, high=100),
               lambda args: composite_add_multiply(*args), _composite_reference,
               APPROX, stablehlo_bounds.add_multiply),
        OpCase("async_start", "all_reduce-one-replica", tuple(NUMERIC),
               arrays(1), lambda args: async_all_reduce(args[0]),
               # XLA:CPU reduces from a zero (-0.0 comes back +0.0): compared by value
               lambda args: [args[0]], APPROX, lambda args: [(0, np.abs(args[0]))]),
        OpCase("dynamic_conv", "1d-padded", tuple(FLOATS), _conv_inputs,
               lambda args: dynamic_conv_1d(*args, CONV_PADDING),
               lambda args: [conv_reference(*args, CONV_PADDING)], APPROX,
               lambda args: stablehlo_bounds.conv_1d(args, conv_reference, CONV_PADDING),
               optional=True),
        OpCase("uniform_quantize", "i8-round-trip", ("float32",),
               arrays(1, low=-80, high=80),
               lambda args: uniform_round_trip(args[0], SCALE, ZERO_POINT),
               lambda args: quantize_reference(args[0], SCALE, ZERO_POINT), outputs=2,
               optional=True),
        OpCase("uniform_dequantize", "i8", ("int8",), _int8_storage,
               lambda args: uniform_dequantize(args[0], SCALE, ZERO_POINT),
               lambda args: [((args[0].astype(np.float64) - ZERO_POINT) * SCALE
                              ).astype(np.float32)], optional=True),
    ]
