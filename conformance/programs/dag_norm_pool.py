"""The float family's layer-norm and pooling patterns, drawn into a program under
construction (``dag_strategy``'s builder: its ``draw``, ``nodes`` and ``add``).

- :func:`layer_norm`: along a drawn axis, as ``jax.nn.standardize`` and flax's
  ``LayerNorm`` write it: ``mean = sum(x) / n``, ``c = x - mean``,
  ``var = sum(c * c) / n``, ``y = c * rsqrt(var + eps) * gamma + beta``, with ``eps``
  drawn among 1e-5, 1e-6 and 1e-3 (those normal in the dtype: float16 keeps 1e-3 only)
  and ``gamma``, ``beta`` literal vectors along the axis (drawn on a grid of 1/4 in
  [-2, 2], exact in every dtype; a splat past 64 elements) or absent;
- :func:`pool`: max or average pooling (``reduce_window`` add, then a division by the
  window's element count: flax's ``avg_pool`` with ``count_include_pad``) over 1 or 2
  drawn axes (of 2 or more elements where the value has one), windows of 2-4 (1 along
  an axis of 1), strides of 1-3, ``'SAME'`` or ``'VALID'`` padding (windows of 3 and
  ``'SAME'`` drawn first: padding on both sides).

Every constant is a ``constant`` node holding its value already rounded to the dtype
(the count ``n`` of a long bfloat16 axis included), so the float64 oracle reads what the
program computes with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.programs import dag
from conformance.programs import float_format

#: Layer-norm epsilons: jax.nn.standardize's 1e-5, flax's 1e-6, and a coarse 1e-3.
EPSILONS = (1e-5, 1e-6, 1e-3)
#: gamma and beta values: exact in bfloat16 and float16.
_GRID = [k / 4 for k in range(-8, 9)]
_VECTOR_MAX = 64


def constant(b: Any, shape: tuple[int, ...], dtype: str, values: Any) -> int | None:
    """A ``constant`` node: ``values`` (one, a splat, or ``shape``'s elements) rounded to
    ``dtype``."""
    rounded = float_format.of(dtype).round(np.asarray(values, np.float64).ravel())
    return b.add("constant", (), shape, dtype, values=tuple(float(v) for v in rounded))


def _affine(b: Any, x: int, axis: int, which: str, op: str) -> int | None:
    """``x`` times (``op="multiply"``) or plus (``"add"``) a drawn literal along ``axis``
    broadcast to ``x``'s shape; ``x`` itself when the draw leaves it out."""
    n = b.nodes[x]
    how = b.draw(st.sampled_from(["vector", "splat", "none"]), label=f"layer norm {which}")
    if how == "none":
        return x
    d = n.shape[axis]
    size = d if how == "vector" and d <= _VECTOR_MAX else 1
    values = b.draw(st.lists(st.sampled_from(_GRID), min_size=size, max_size=size),
                    label=f"{which} values")
    c = constant(b, (d,) if size > 1 else (), n.dtype, values)
    if c is None:
        return None
    spread = b.add("broadcast_in_dim", (c,), n.shape, n.dtype, dims=(axis,) if size > 1 else ())
    return None if spread is None else b.add(op, (x, spread), n.shape, n.dtype)


def layer_norm(b: Any, x: int) -> int | None:
    """Node ``x`` normalized along a drawn axis (see the module docstring); None where
    ``x`` is a scalar."""
    n = b.nodes[x]
    if not n.shape:
        return None
    shape, dt = n.shape, n.dtype
    axis = b.draw(st.integers(0, len(shape) - 1), label="layer norm axis")
    kept = tuple(k for k in range(len(shape)) if k != axis)
    rest = tuple(shape[k] for k in kept)
    f = float_format.of(dt)
    eps = b.draw(st.sampled_from([e for e in EPSILONS if e >= f.tiny]), label="epsilon")
    count = constant(b, rest, dt, shape[axis])

    def mean(v: int | None) -> int | None:
        total = None if v is None else b.add("reduce", (v,), rest, dt, axes=(axis,), kind="add")
        return None if total is None or count is None else b.add("divide", (total, count),
                                                                 rest, dt)
    mu = mean(x)
    if mu is None:
        return None
    centered = b.add("subtract", (x, b.add("broadcast_in_dim", (mu,), shape, dt, dims=kept)),
                     shape, dt)
    var = mean(b.add("multiply", (centered, centered), shape, dt))
    shifted = b.add("add", (var, constant(b, rest, dt, eps)), rest, dt)
    scale = b.add("rsqrt", (shifted,), rest, dt)
    y = b.add("multiply", (centered, b.add("broadcast_in_dim", (scale,), shape, dt,
                                           dims=kept)), shape, dt)
    y = _affine(b, y, axis, "gamma", "multiply")
    return None if y is None else _affine(b, y, axis, "beta", "add")


def pool(b: Any, x: int) -> int | None:
    """Max or average pooling of node ``x`` over 1 or 2 drawn axes (see the module
    docstring); None where ``x`` is a scalar."""
    n, draw = b.nodes[x], b.draw
    if not n.shape:
        return None
    rank = len(n.shape)
    long = [a for a in range(rank) if n.shape[a] >= 2] or list(range(rank))
    k = draw(st.integers(1, min(2, len(long))), label="pooled axes")
    axes = draw(st.sets(st.sampled_from(long), min_size=k, max_size=k), label="pool axes")
    window, strides = [1] * rank, [1] * rank
    for a in sorted(axes):
        sides = [w for w in (3, 4, 2) if w <= n.shape[a]] or [1]   # 3 first: 'SAME' pads
        window[a] = draw(st.sampled_from(sides), label="window")     # low (flax's 3x3)
        strides[a] = draw(st.integers(1, 3), label="pool stride")
    padding = draw(st.sampled_from(["SAME", "VALID"]), label="pool padding")
    kind = draw(st.sampled_from(["max", "avg"]), label="pool kind")
    how = dict(window=tuple(window), strides=tuple(strides), padding=padding)
    out = dag.pool_shape(n.shape, how["window"], how["strides"], padding)
    if kind == "max":
        return b.add("pool", (x,), out, n.dtype, kind="max", **how)
    total = b.add("pool", (x,), out, n.dtype, kind="add", **how)
    size = constant(b, out, n.dtype, int(np.prod(window)))
    return None if total is None or size is None else b.add("divide", (total, size), out,
                                                            n.dtype)
