"""Loops whose body holds a dot, a reduce or a dynamic_update_slice, drawn into a program
under construction (``dag_strategy``'s builder: its ``draw``, ``nodes`` and ``add``).

Each is one ``loop`` node (:mod:`conformance.programs.dag`):
``lax.fori_loop(0, trips, lambda i, v: body, x)`` of 1-4 trips, carrying a value ``v`` of
``x``'s shape and dtype (integer or float; a scalar ``x`` draws none):

- ``dot``: ``v @ W`` along a drawn axis ``a`` of at most :data:`MAX_CONTRACTED` elements
  (``lax.dot_general`` contracting ``a`` with ``W``'s rows, then a ``transpose`` putting
  the result's last axis back at ``a``; where no axis is that short, ``x`` is first
  reshaped, its last axis split at its largest divisor up to that size). ``W`` is a
  drawn literal k x k matrix: integers in -3..3 (0..3 for unsigned dtypes), the sums
  wrapping; floats on the grid ``j 2**-(2 + m)``, ``j`` in -8..8, ``2**m >= k``, so that
  each column sums to at most 2 in absolute value and every value is exact in bfloat16
  and float16; a float body ends in ``tanh`` (``tanh(v @ W)``, a recurrent cell), which
  keeps the carried values in [-1, 1] however many trips;
- ``reduce``: ``v + broadcast(reduce(v, (a,)))`` along a drawn axis, the reduce kind drawn
  from the family's (integers: add, mul, max, min; floats: add, max, min), a float sum
  scaled by ``2**-m`` (``2**m >= n``, the axis' length; exact; at least the dtype's
  smallest normal, so that no flush-to-zero backend reads it as 0) so that the values
  at most double per trip (float16 past 2**14 elements, nightly only: more);
- ``dus``: along a drawn axis of 2 or more elements, trip ``i`` adds row ``i`` to row
  ``i + 1`` and writes it back with ``dynamic_update_slice`` at ``i + 1`` (the induction
  variable the start), so ``trips <= n - 1``: the starts stay in range (no clamp).

The float family's bound charges every trip by the rules of the body's ops
(:func:`conformance.programs.dag_bounds.evaluate`).
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from conformance.helpers import dtype_helpers
from conformance.programs import dag
from conformance.programs import float_format

#: Bodies drawn here (``loop`` nodes' ``body``; ``affine`` and ``roll`` are dag_strategy's).
BODIES = ("dot", "reduce", "dus")
#: The longest axis a loop dot contracts (its literal matrix has this squared elements).
MAX_CONTRACTED = 8
_TRIPS = st.integers(1, 4)


def loop(b: Any, x: int, body: str, kinds: list[str]) -> int | None:
    """A ``loop`` node with a ``body`` (one of :data:`BODIES`) carrying node ``x``
    (``kinds``: the family's reduce kinds); None where ``x`` is a scalar, has no axis of
    2 or more elements (``dus``) or a value would leave the element budget. Raises
    ValueError for an unknown body."""
    if body not in BODIES:
        raise ValueError(f"dag_loops.loop: argument 'body' must be one of {BODIES}, got {body!r}")
    n = b.nodes[x]
    if not n.shape:
        return None
    if body == "dot":
        return _dot(b, x)
    if body == "reduce":
        return _reduce(b, x, kinds)
    long = [k for k, s in enumerate(n.shape) if s >= 2]
    if not long:
        return None
    axis = b.draw(st.sampled_from(long), label="loop update axis")
    trips = b.draw(st.integers(1, min(4, n.shape[axis] - 1)), label="trips")
    return b.add("loop", (x,), n.shape, n.dtype, body="dus", axis=axis, trips=trips)


def weight_grid(dtype: str, k: int) -> list[float] | list[int]:
    """The values a loop dot's k x k literal matrix is drawn from (see the module
    docstring)."""
    kind = dtype_helpers.BY_NAME[dtype].kind
    if kind == "uint":
        return list(range(4))
    if kind == "int":
        return list(range(-3, 4))
    return [j * 2.0 ** -(2 + math.ceil(math.log2(k))) for j in range(-8, 9)]


def _dot(b: Any, x: int) -> int | None:
    n = b.nodes[x]
    short = [k for k, s in enumerate(n.shape) if s <= MAX_CONTRACTED]
    if not short:   # every axis long: split the last one
        d = n.shape[-1]
        f = max(q for q in range(1, MAX_CONTRACTED + 1) if d % q == 0)
        x = b.add("reshape", (x,), n.shape[:-1] + (d // f, f), n.dtype)
        if x is None:
            return None
        n = b.nodes[x]
        short = [len(n.shape) - 1]
    axis = b.draw(st.sampled_from(short), label="loop dot axis")
    k = n.shape[axis]
    weights = b.draw(st.lists(st.sampled_from(weight_grid(n.dtype, k)), min_size=k * k,
                              max_size=k * k), label="loop dot weights")
    return b.add("loop", (x,), n.shape, n.dtype, body="dot", axis=axis,
                 weights=tuple(weights), trips=b.draw(_TRIPS, label="trips"))


def _reduce(b: Any, x: int, kinds: list[str]) -> int | None:
    n = b.nodes[x]
    axis = b.draw(st.integers(0, len(n.shape) - 1), label="loop reduce axis")
    kind = b.draw(st.sampled_from(kinds), label="loop reduce kind")
    scale = 1
    if kind == "add" and dag.is_float(n.dtype) and n.shape[axis] > 1:   # a normal number:
        scale = max(2.0 ** -math.ceil(math.log2(n.shape[axis])),       # no flush to zero
                    float_format.of(n.dtype).tiny)
    return b.add("loop", (x,), n.shape, n.dtype, body="reduce", axis=axis, kind=kind,
                 scale=scale, trips=b.draw(_TRIPS, label="trips"))
