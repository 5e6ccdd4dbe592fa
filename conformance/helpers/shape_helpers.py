"""Shapes and host memory layouts."""

from __future__ import annotations

import math

import numpy as np

#: Host memory layouts under which the same logical array is handed to the runtime.
LAYOUTS = ("c", "fortran", "transposed", "reversed", "strided")

#: Fixed shape catalogue for execute tests: few shapes, so compiled programs are reused.
EXECUTE_SHAPES = ((), (7,), (2, 3, 4), (0, 3))


def with_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """A view holding exactly ``x``'s values in the memory ``layout``.

    'c': C-contiguous copy; 'fortran': Fortran order; 'transposed': transpose of a
    C array (non-contiguous for ndim >= 2); 'reversed': negative strides on axis 0;
    'strided': every other element of a larger buffer along axis 0.
    Raises ValueError for an unknown layout.
    """
    if layout == "c":
        return x.copy(order="C")
    if layout == "fortran":
        return np.asfortranarray(x)
    if layout == "transposed":
        return x.T.copy(order="C").T
    if x.ndim == 0:
        return x.copy()
    if layout == "reversed":
        return x[::-1].copy(order="C")[::-1]
    if layout == "strided":
        buf = np.zeros((2 * x.shape[0],) + x.shape[1:], dtype=x.dtype)
        buf[::2] = x
        return buf[::2]
    raise ValueError(f"with_layout: argument 'layout' must be one of {LAYOUTS}, got {layout!r}")


def nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Host size in bytes of an array of ``shape`` and ``dtype``."""
    return math.prod(shape) * np.dtype(dtype).itemsize


def fmt_shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"
