"""Transpose, broadcast_in_dim and reverse of an area's own operand, run on the device.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``). The data_movement area draws its own shapes; this
module lets every area that draws operands above :data:`MIN_ELEMENTS` elements (reduce,
dot, FFT, sharding) also move *its* operand on the device, at that area's shapes and
dtypes, and check every device's result bit for bit against the same movement of the raw
bytes in NumPy (:mod:`conformance.helpers.moved_bytes`): data movement never flushes,
rounds or canonicalizes.

The three moves of an operand of shape ``s`` (rank r):

- ``transpose``: permutation ``(r-1, ..., 0)`` (rank >= 2 only);
- ``broadcast_in_dim``: to ``(2,) + s``, operand dimensions ``(1, ..., r)``;
- ``reverse``: every dimension.

:func:`check_moves` runs all three as one program (three outputs, one compile) on every
local device; :func:`moves_of` gives the moves themselves, with the result sharding of
each for an operand sharded by a PartitionSpec (the sharding area runs them as SPMD
programs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import moved_bytes
from conformance.helpers.reproduction import reproduction

#: Operands of at most this many elements are left to the data_movement area.
MIN_ELEMENTS = 1024


# One jax function per signature (the program cache keys on the function).
@functools.lru_cache(maxsize=None)
def transpose(perm: tuple[int, ...]) -> Callable[[Any], Any]:
    """``lax.transpose`` with permutation ``perm``."""
    return lambda x: lax.transpose(x, perm)


@functools.lru_cache(maxsize=None)
def broadcast_in_dim(shape: tuple[int, ...], dims: tuple[int, ...]) -> Callable[[Any], Any]:
    """``lax.broadcast_in_dim`` to ``shape`` with ``broadcast_dimensions=dims``."""
    return lambda x: lax.broadcast_in_dim(x, shape, dims)


@functools.lru_cache(maxsize=None)
def reverse(dims: tuple[int, ...]) -> Callable[[Any], Any]:
    """``lax.rev`` over ``dims``."""
    return lambda x: lax.rev(x, dims)


@dataclass(frozen=True)
class Move:
    """One data-movement op applied to an operand of ``shape``.

    ``fn``: the jax function; ``result_shape``: its result's shape; ``describe``: the
    call as text (``transpose(permutation=[1, 0])``)."""

    name: str
    shape: tuple[int, ...]
    fn: Callable[[Any], Any]
    result_shape: tuple[int, ...]
    describe: str
    _bytes: Callable[[np.ndarray], np.ndarray]
    _spec: Callable[[tuple[Any, ...]], tuple[Any, ...]]

    def expected(self, x: np.ndarray) -> np.ndarray:
        """The result's exact bits: the move done on ``x``'s raw bytes (any dtype)."""
        if x.shape != self.shape:
            raise ValueError(f"Move.expected: argument 'x' must have shape {self.shape}, "
                             f"got {x.shape}")
        return moved_bytes.from_bytes(self._bytes(moved_bytes.as_bytes(x)), x.dtype)

    def result_spec(self, spec: tuple[Any, ...]) -> tuple[Any, ...]:
        """The result's PartitionSpec entries (one per result dimension) for an operand
        sharded by ``spec`` (one entry per operand dimension; ``None``: replicated)."""
        if len(spec) != len(self.shape):
            raise ValueError(f"Move.result_spec: argument 'spec' must have {len(self.shape)} "
                             f"entries, got {spec!r}")
        return self._spec(tuple(spec))


def moves_of(shape: tuple[int, ...]) -> list[Move]:
    """The moves of an operand of ``shape`` (rank >= 1): transpose (rank >= 2),
    broadcast_in_dim and reverse. Raises ValueError for a 0-d shape."""
    shape = tuple(int(n) for n in shape)
    r = len(shape)
    if r == 0:
        raise ValueError("moves_of: argument 'shape' must have rank >= 1, got ()")
    out: list[Move] = []
    if r >= 2:
        perm = tuple(range(r))[::-1]
        out.append(Move("transpose", shape, transpose(perm), shape[::-1],
                        f"transpose(permutation={list(perm)})",
                        lambda b, p=perm: np.transpose(b, p + (r,)),
                        lambda spec: spec[::-1]))
    wide, dims = (2,) + shape, tuple(range(1, r + 1))
    out.append(Move("broadcast_in_dim", shape, broadcast_in_dim(wide, dims), wide,
                    f"broadcast_in_dim(shape={list(wide)}, broadcast_dimensions={list(dims)})",
                    lambda b: np.broadcast_to(b, (2,) + b.shape),
                    lambda spec: (None,) + spec))
    every = tuple(range(r))
    out.append(Move("reverse", shape, reverse(every), shape,
                    f"reverse(dimensions={list(every)})",
                    lambda b: np.flip(b, every), lambda spec: spec))
    return out


@functools.lru_cache(maxsize=None)
def _all_moves(shape: tuple[int, ...]) -> Callable[[Any], Any]:
    fns = [m.fn for m in moves_of(shape)]
    return lambda x: tuple(f(x) for f in fns)


def check_moves(program_cache: Any, x: np.ndarray, dt: Any, call: str) -> None:
    """Run every move of ``x`` (see :func:`moves_of`) on every local device as one
    program and check each result bit for bit; a no-op for ``x`` of at most
    :data:`MIN_ELEMENTS` elements (the data_movement area's sizes).

    ``program_cache``: a :class:`conformance.programs.compiled_programs.ProgramCache`; ``dt``: the
    ``dtype_helpers.DType`` whose capability gates the program; ``call``: how the area's own call
    reads (for messages). Raises AssertionError naming the move and device on a
    mismatch (hex bits in the message)."""
    from conformance.programs import compiled_programs

    if x.ndim == 0 or x.size <= MIN_ELEMENTS:
        return
    moves = moves_of(x.shape)
    what = f"{call}: the operand {x.dtype.name}{list(x.shape)} moved on the device"
    outs, program = compiled_programs.run_everywhere(program_cache, "moves", _all_moves(x.shape),
                                                     [x], dt, what, n_outputs=len(moves))
    with reproduction(what, program=program, inputs=[x]):
        for move, per_device in zip(moves, outs):
            want = move.expected(x)
            for device, got in per_device:
                assertions.assert_bitwise_equal(got, want,
                                                call=f"{move.describe} of {what} on {device}")
