"""Transposes and broadcasts feeding dots and reductions along a dimension of 64 or more
elements, drawn into a program under construction (``dag_strategy``'s builder: its
``draw``, ``nodes``, ``add``, ``partner`` and ``budget``).

The generated programs' values have one long axis, often short; these patterns reshape
their operand to reach such a dimension, inside the element budget:

- :func:`transposed` (``"dot"`` or ``"reduce"``): the operand's first ``K * M`` elements
  in row-major order as a (K, M) matrix ``a`` (``K >= 64``, drawn from the boundary
  sizes of ``strategies.axis_sizes``; ``M`` 2-4; an operand of fewer than 128 elements is
  first broadcast along a new leading axis), then ``t = transpose(a)`` (M, K), and
  either ``dot_general(t, y)`` contracting K with ``y`` a partner of ``a``'s shape (an
  earlier node, ``a`` itself included, a broadcast or an iota): an (M, M) result, or
  ``reduce(t, (1,))`` over K of a drawn kind (add, max or min: a product of 64 integers
  wraps to 0 almost always): an (M,) result;
- :func:`broadcast_dot`: ``dot_general(broadcast_in_dim(v), y)`` contracting K
  (``>= 64``) with ``y`` a partner of the broadcast's shape: ``v`` the operand's first M
  (1-4) elements broadcast to (K, M) (K the new dimension, contracted), or, for an
  operand of 64 or more elements, its first K elements broadcast to (M, K) (K the
  operand's own dimension, a new row dimension beside it): an (M, M) result.

Every op is a StableHLO op the DAG already has (reshape, slice, broadcast_in_dim,
transpose, dot_general, reduce), so the NumPy reference and the float bound are theirs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.helpers import strategies

#: The shortest contracted, transposed or reduced dimension these patterns draw.
MIN_SIDE = 64


def _flat_prefix(b: Any, x: int, size: int) -> int | None:
    """Node ``x``'s first ``size`` elements in row-major order, a vector."""
    n = b.nodes[x]
    if len(n.shape) != 1:
        x = b.add("reshape", (x,), (n.size,), n.dtype)
    if x is not None and size < n.size:
        x = b.add("slice", (x,), (size,), n.dtype, start=(0,), limit=(size,), strides=(1,))
    return x


def _side(b: Any, most: int) -> int | None:
    """A drawn dimension of ``MIN_SIDE`` to ``most`` elements (None where ``most`` is
    shorter)."""
    if most < MIN_SIDE:
        return None
    return b.draw(strategies.axis_sizes(most, min_size=MIN_SIDE), label="wide side")


def transposed(b: Any, x: int, consumer: str, kinds: list[str]) -> int | None:
    """``dot_general(transpose(a), y)`` (``consumer="dot"``) or ``reduce(transpose(a))``
    (``"reduce"``, a kind drawn from ``kinds`` but mul) of node ``x`` reshaped (see the
    module docstring); None where a value would leave the element budget. Raises
    ValueError for another consumer."""
    if consumer not in ("dot", "reduce"):
        raise ValueError(f"dag_wide.transposed: argument 'consumer' must be 'dot' or "
                         f"'reduce', got {consumer!r}")
    n = b.nodes[x]
    dt = n.dtype
    if n.size < 2 * MIN_SIDE:   # too few elements: a broadcast along a new leading axis
        flat = _flat_prefix(b, x, n.size)
        rows = -(-2 * MIN_SIDE // n.size)
        x = None if flat is None else b.add("broadcast_in_dim", (flat,), (rows, n.size), dt,
                                            dims=(1,))
        if x is None:
            return None
        n = b.nodes[x]
    m = b.draw(st.integers(2, min(4, n.size // MIN_SIDE)), label="wide columns")
    k = _side(b, n.size // m)
    flat = _flat_prefix(b, x, k * m)
    a = None if flat is None else b.add("reshape", (flat,), (k, m), dt)
    t = None if a is None else b.add("transpose", (a,), (m, k), dt, perm=(1, 0))
    if t is None:
        return None
    if consumer == "reduce":   # not mul: 64 integer factors wrap to 0 (2**32 divides them)
        kind = b.draw(st.sampled_from([c for c in kinds if c != "mul"]),
                      label="wide reduce kind")
        return b.add("reduce", (t,), (m,), dt, axes=(1,), kind=kind)
    return b.add("dot_general", (t, b.partner(a)), (m, m), dt, contract=((1,), (0,)),
                 batch=((), ()))


def broadcast_dot(b: Any, x: int) -> int | None:
    """``dot_general(broadcast_in_dim(v), y)`` of node ``x``'s first elements (see the
    module docstring); None where a value would leave the element budget."""
    n = b.nodes[x]
    dt = n.dtype
    along = "new"
    if n.size >= MIN_SIDE:
        along = b.draw(st.sampled_from(["new", "kept"]), label="broadcast contracted dim")
    m = b.draw(st.integers(1, 4), label="wide columns")
    if along == "new":
        m = min(m, n.size)
        k = _side(b, b.budget // m)
        v = None if k is None else _flat_prefix(b, x, m)
        spread = None if v is None else b.add("broadcast_in_dim", (v,), (k, m), dt, dims=(1,))
        contract = ((0,), (0,))
    else:
        k = _side(b, min(n.size, b.budget // m))
        v = None if k is None else _flat_prefix(b, x, k)
        spread = None if v is None else b.add("broadcast_in_dim", (v,), (m, k), dt, dims=(1,))
        contract = ((1,), (1,))
    if spread is None:
        return None
    return b.add("dot_general", (spread, b.partner(spread)), (m, m), dt, contract=contract,
                 batch=((), ()))
