"""References of the data-movement ops that move raw bytes only (no float arithmetic).

An array of any dtype (4-bit types: one element a byte, as NumPy stores them) is viewed
as ``uint8`` with a trailing byte axis (:func:`as_bytes`); the op is done on the leading
axes in NumPy and viewed back (:func:`from_bytes`), so NaN payloads, signaling NaNs,
subnormals and -0.0 come out exactly as they went in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_bytes(a: np.ndarray) -> np.ndarray:
    """``a``'s raw bytes with a trailing byte axis: ``uint8`` of shape
    ``a.shape + (a.dtype.itemsize,)`` (a copy when ``a`` is not C-contiguous)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape + (a.dtype.itemsize,))


def from_bytes(b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The inverse of :func:`as_bytes`: an array of ``dtype`` of shape ``b.shape[:-1]``.
    Raises ValueError when ``b``'s last axis is not ``dtype``'s item size."""
    dtype = np.dtype(dtype)
    if b.shape[-1:] != (dtype.itemsize,):
        raise ValueError(f"from_bytes: argument 'b' must end in an axis of {dtype.itemsize} "
                         f"bytes for {dtype.name}, got shape {b.shape}")
    return np.ascontiguousarray(b).view(dtype).reshape(b.shape[:-1])


def pad(x: np.ndarray, value: np.ndarray,
        config: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """StableHLO ``pad`` of ``x`` with the 0-d ``value`` (same dtype) and one
    ``(low, high, interior)`` per axis: interior >= 0 elements between neighbours, and
    edge padding (negative: elements removed). Raises ValueError for a config of another
    length, a negative interior, a dtype mismatch or a negative result size."""
    x, value = np.asarray(x), np.asarray(value)
    if len(config) != x.ndim or any(i < 0 for _, _, i in config):
        raise ValueError(f"pad: argument 'config' must hold one (low, high, interior >= 0) "
                         f"per axis of x{list(x.shape)}, got {list(config)}")
    if value.shape != () or value.dtype != x.dtype:
        raise ValueError(f"pad: argument 'value' must be a 0-d {x.dtype} array, got "
                         f"{value.dtype}{list(value.shape)}")
    grown = tuple(max(lo, 0) + max(hi, 0) + d + max(d - 1, 0) * i
                  for d, (lo, hi, i) in zip(x.shape, config))
    if any(n - max(-lo, 0) - max(-hi, 0) < 0 for n, (lo, hi, _) in zip(grown, config)):
        raise ValueError(f"pad: config {list(config)} removes more than x{list(x.shape)} has")
    out = np.empty(grown + (x.dtype.itemsize,), np.uint8)
    out[...] = as_bytes(value)
    out[tuple(slice(max(lo, 0), max(lo, 0) + d + max(d - 1, 0) * i, i + 1)
              for d, (lo, hi, i) in zip(x.shape, config))] = as_bytes(x)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi, _) in zip(grown, config))
    return from_bytes(out[crop], x.dtype)
