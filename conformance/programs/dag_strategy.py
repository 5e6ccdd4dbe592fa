"""Hypothesis strategy of valid multi-op programs (:class:`conformance.programs.dag.Program`).

:func:`programs` draws a DAG of 2 to ``max_ops`` ops over 1-3 data parameters whose
shapes have one long axis across the tile boundaries (``strategies.long_axis_shapes``), under
an element budget that every intermediate also respects. Each op is drawn from its
family's catalog and applied to a drawn earlier node; a second operand of the same
shape is an earlier node, a broadcast of one, or an iota, so binary ops, selects,
concatenations and dot products meet values from other branches of the DAG (the
fusion and layout decisions a single-op test never reaches). Shape and dtype rules
are StableHLO's. The program returns its last node and up to two more.

Families:

- ``integer``: int32 (with conversions to int8, int16, uint8 and uint32), every op of
  the catalog that is exact on integers (sums and products wrap), loops whose body holds
  a dot, a reduce or a dynamic_update_slice (:mod:`conformance.programs.dag_loops`), and
  transposes and broadcasts feeding dots and reductions along 64 or more elements
  (:mod:`conformance.programs.dag_wide`);
- ``data_movement``: float32 with NaN payloads, -0.0, infinities and subnormals, or
  int16/uint8; only ops that move bits (no arithmetic), checked bit for bit;
- ``float``: float32 in [-2, 2], arithmetic, ``tanh``, ``exp``, reductions, dot
  products and cumulative sums, dot epilogues (bias, scale, ``tanh``/``logistic``/ReLU),
  softmax, layer norm and max/average pooling (:mod:`conformance.programs.dag_norm_pool`;
  each of these four listed twice in the catalog, so that ``ci``'s eight examples reach
  each of them), and the integer family's loops (``tanh(v @ W)``,
  ``v + broadcast(reduce(v))``, a row update) and wide transposes and broadcasts (one
  catalog entry for the loops, one for the wide operands), held to the running error
  bound of :mod:`conformance.programs.dag_bounds` (a loop charged trip by trip).
  ``programs("float", dtype="bfloat16")`` (or
  ``"float16"``) draws the same programs at that dtype (:data:`LOW_PRECISION`) but
  for the loops and wide operands, and
  besides a **mixed dot**: a ``dot_general`` of two bfloat16/float16 values with
  ``preferred_element_type=float32`` (float32 accumulation, as mixed-precision training
  asks for), whose float32 result later ops may read.

A program returns the results of its last two patterns (dot epilogues, softmaxes, layer
norms, pools, mixed dots, loops, wide operands) and of the last loop or wide operand of
each of the six kinds besides its last node's, so that jax prunes none of them as dead
code before it is compiled. ``model_patterns=k`` ends a float program with ``k`` of the
four patterns models run (:data:`MODEL_PATTERNS`), each result returned too:
``test_float_programs`` asks for all four, so that every example holds each of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from conformance.helpers import dtype_helpers
from conformance.helpers import strategies
from conformance.programs import dag_loops
from conformance.programs import dag_norm_pool
from conformance.programs import dag_wide
from conformance.programs.dag import FAMILIES, IDX_LEN, Node, Program

#: Loops whose body holds a dot, a reduce or a dynamic_update_slice (dag_loops), and
#: transposes and broadcasts feeding dots and reductions along 64 or more elements
#: (dag_wide). The integer catalog lists each once; the float catalog has one entry per
#: group (:data:`_GROUPS`) drawing one of its three kinds: listed one by one there (once
#: or twice each), they took so many of the float draws that ``ci``'s examples no longer
#: killed ``pool-ignores-low-padding``, ``softmax-drops-normalization`` or
#: ``epilogue-drops-bias`` (measured, 2026-11-29). Together ``ci``'s integer and float
#: examples reach each of the six and kill its mutant (tests/mutants/composition.py).
_LOOPS_AND_WIDE = ["loop_dot", "loop_reduce", "loop_dus", "transpose_dot", "transpose_reduce",
                   "broadcast_dot"]
_MOVES = ["transpose", "reshape", "slice", "concatenate", "pad", "reverse", "broadcast_in_dim",
          "dynamic_slice", "dynamic_update_slice", "gather", "scatter_set", "select_iota",
          "loop_roll", "cond_rev"]
_FLOAT = ["negate", "abs", "add", "subtract", "multiply", "maximum", "minimum", "tanh", "exp",
          "select", "reduce", "dot_general", "cumsum", "loop_affine", "dot_epilogue",
          "dot_epilogue", "softmax", "softmax", "layer_norm", "layer_norm", "pool", "pool"] \
    + [m for m in _MOVES if m not in ("scatter_set", "cond_rev", "loop_roll")]
CATALOG = {
    "integer": ["negate", "abs", "not", "add", "subtract", "multiply", "maximum", "minimum",
                "and", "or", "xor", "select", "reduce", "dot_general", "convert", "cumsum",
                "reduce_window_max", "conv", "sort", "scatter_add", "loop_affine",
                "cond_affine"]
    + _LOOPS_AND_WIDE + _MOVES,
    "data_movement": _MOVES,
    "float": _FLOAT + ["loop_body", "wide_operand"],
}
#: Float program dtypes besides float32: their catalog is the float one without the loop
#: and wide-operand entries (so their ``ci`` draws, run time and kill of
#: ``mixed-dot-accumulates-in-bf16`` stay as they were), plus the mixed dot (twice: every
#: ``ci`` run should reach one).
LOW_PRECISION = ("bfloat16", "float16")
_LOW_CATALOG = _FLOAT + ["mixed_dot", "mixed_dot"]
_REDUCE_KINDS = {"integer": ["add", "mul", "max", "min"], "float": ["add", "max", "min"]}
_ELEMENTWISE = {"negate", "abs", "not", "tanh", "exp", "add", "subtract", "multiply", "maximum",
                "minimum", "and", "or", "xor", "select", "convert", "loop_affine", "cond_affine"}
_PATTERNS = ("dot_epilogue", "softmax", "mixed_dot", "layer_norm", "pool",
             *_LOOPS_AND_WIDE)
#: The patterns models run that ``programs(..., model_patterns=k)`` ends a program with,
#: ``k`` of them in a drawn order, each result returned.
MODEL_PATTERNS = ("dot_epilogue", "softmax", "layer_norm", "pool")
#: The float catalog's entries that draw one of several kinds.
_GROUPS = {"loop_body": _LOOPS_AND_WIDE[:3], "wide_operand": _LOOPS_AND_WIDE[3:]}
_CONVERTS = ["int8", "int16", "uint8", "uint32", "int32"]


def _shape_ok(shape: tuple[int, ...], budget: int) -> bool:
    return 1 <= int(np.prod(shape)) <= budget and len(shape) <= 4 and min(shape, default=1) >= 1


class _Builder:
    """The nodes drawn so far and the rules that add one."""

    def __init__(self, draw: st.DrawFn, family: str, budget: int):
        self.draw, self.family, self.budget = draw, family, budget
        self.nodes: list[Node] = []
        self.max_stride = 3
        self.padding_slices = True      # False: no one-element slice of a high padding
        self.patterns: list[tuple[str, int]] = []   # (kind, result) of each dot epilogue,
        # softmax, ..., loop and wide pattern

    def add(self, op: str, args: tuple[int, ...], shape: tuple[int, ...], dtype: str,
            **attrs: Any) -> int | None:
        if not _shape_ok(tuple(shape), self.budget):
            return None
        self.nodes.append(Node(op, tuple(args), tuple(sorted(attrs.items())),
                               tuple(int(s) for s in shape), dtype))
        return len(self.nodes) - 1

    def pick(self, label: str, where=lambda n: True) -> int | None:
        """A drawn earlier node satisfying ``where`` (later nodes more likely)."""
        ok = [i for i, n in enumerate(self.nodes) if where(n)]
        if not ok:
            return None
        k = self.draw(st.integers(0, len(ok) - 1), label=label)
        return ok[len(ok) - 1 - k]  # shrinks toward the newest node: chains stay deep

    def partner(self, x: int) -> int:
        """An operand of node ``x``'s shape and dtype: an earlier node, a broadcast of
        one, or an iota (converted to the dtype)."""
        n = self.nodes[x]
        how = self.draw(st.sampled_from(["node", "broadcast", "iota"]), label="partner")
        if how == "broadcast" and n.shape:
            for k in range(len(n.shape) - 1, -1, -1):  # a node equal to a suffix/subset
                dims_options = [d for d in itertools.combinations(range(len(n.shape)), k)]
                for dims in dims_options:
                    want = tuple(n.shape[d] for d in dims)
                    y = self.pick("broadcast operand",
                                  lambda m: m.shape == want and m.dtype == n.dtype)
                    if y is not None and k < len(n.shape):
                        out = self.add("broadcast_in_dim", (y,), n.shape, n.dtype, dims=dims)
                        if out is not None:
                            return out
        if how == "iota" and n.shape:
            dim = self.draw(st.integers(0, len(n.shape) - 1), label="iota dim")
            out = self.add("iota", (), n.shape, n.dtype, dim=dim)
            if out is not None:
                return out
        y = self.pick("operand", lambda m: m.shape == n.shape and m.dtype == n.dtype)
        return x if y is None else y

    # ---- one rule per catalog entry; each returns the new node or None -----------------
    def apply(self, op: str, x: int) -> int | None:
        n, draw = self.nodes[x], self.draw
        rank, shape, dt = len(n.shape), n.shape, n.dtype
        if rank == 0 and op not in _ELEMENTWISE:
            return None  # a scalar (a reduce over every axis) feeds elementwise ops only
        if op in ("negate", "abs") and dt.startswith("uint"):
            op = "not"  # lax.neg/lax.abs take signed integers and floats
        if op in ("negate", "abs", "tanh", "exp", "not"):
            return self.add(op, (x,), shape, dt)
        if op in ("add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor"):
            return self.add(op, (x, self.partner(x)), shape, dt)
        if op == "select":
            a, c, d = self.partner(x), self.partner(x), self.partner(x)
            cmp = draw(st.sampled_from(["LT", "LE", "GT", "GE", "EQ", "NE"]), label="compare")
            return self.add("select", (x, a, c, d), shape, dt, dir=cmp)
        if op == "select_iota":
            dim = draw(st.integers(0, rank - 1), label="dim")
            mod = draw(st.integers(2, 5), label="mod")
            return self.add("select_iota", (x, self.partner(x)), shape, dt, dim=dim, mod=mod,
                            below=draw(st.integers(1, mod - 1), label="below"))
        if op == "reduce":
            axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1),
                                     label="axes")))
            kind = draw(st.sampled_from(_REDUCE_KINDS[self.family]), label="reduce kind")
            return self.add("reduce", (x,), tuple(s for k, s in enumerate(shape) if k not in axes),
                            dt, axes=axes, kind=kind)
        if op == "dot_general":
            return self._dot(x)
        if op in _GROUPS:
            op = draw(st.sampled_from(_GROUPS[op]), label=op)
        if op in _PATTERNS:   # a pattern's result is returned
            out = self._pattern(op, x)
            if out is not None:
                self.patterns.append((op, out))
            return out
        if op == "transpose":
            perm = tuple(draw(st.permutations(range(rank)), label="perm"))
            return self.add("transpose", (x,), tuple(shape[p] for p in perm), dt, perm=perm)
        if op == "reshape":
            return self.add("reshape", (x,), self._reshaped(shape), dt)
        if op == "slice":
            start, limit, strides = [], [], []
            for d in shape:
                s = draw(st.integers(0, d - 1), label="start")
                start.append(s)
                limit.append(draw(st.integers(s + 1, d), label="limit"))
                strides.append(draw(st.integers(1, self.max_stride), label="stride"))
            out = tuple(-(-(e - s) // k) for s, e, k in zip(start, limit, strides))
            if not self.padding_slices and self._in_high_padding(x, start, out):
                return None  # a known XLA defect, pinned once: see _in_high_padding
            return self.add("slice", (x,), out, dt, start=tuple(start), limit=tuple(limit),
                            strides=tuple(strides))
        if op == "concatenate":
            dim = draw(st.integers(0, rank - 1), label="dim")
            y = self.pick("concatenated", lambda m: m.dtype == dt and len(m.shape) == rank and all(
                a == b for k, (a, b) in enumerate(zip(m.shape, shape)) if k != dim))
            y = x if y is None else y
            out = list(shape)
            out[dim] += self.nodes[y].shape[dim]
            return self.add("concatenate", (x, y), tuple(out), dt, dim=dim)
        if op == "pad":
            config = tuple((draw(st.integers(0, 2), label="low"), draw(st.integers(0, 2),
                                                                        label="high"),
                            draw(st.integers(0, 1), label="interior")) for _ in shape)
            out = tuple(lo + d + (d - 1) * it + hi for (lo, hi, it), d in zip(config, shape))
            value = draw(st.sampled_from([0, -1, 7]), label="pad value")
            if dt == "uint8":
                value = abs(value)
            return self.add("pad", (x,), out, dt, config=config,
                            value=float(value) if dt.startswith("float") else value)
        if op == "reverse":
            dims = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1),
                                     label="dims")))
            return self.add("reverse", (x,), shape, dt, dims=dims)
        if op == "broadcast_in_dim":
            new = draw(st.integers(1, 2), label="new dims")
            out_rank = min(rank + new, 4)
            dims = tuple(sorted(draw(st.sets(st.integers(0, out_rank - 1), min_size=rank,
                                             max_size=rank), label="kept dims")))
            out = [draw(st.integers(1, 4), label="new side") for _ in range(out_rank)]
            for d, s in zip(dims, shape):
                out[d] = s
            return self.add("broadcast_in_dim", (x,), tuple(out), dt, dims=dims)
        if op == "convert":
            to = draw(st.sampled_from(_CONVERTS), label="to")
            return self.add("convert", (x,), shape, to)
        if op == "cumsum":
            return self.add("cumsum", (x,), shape, dt, axis=draw(st.integers(0, rank - 1),
                                                                  label="axis"),
                            reverse=draw(st.booleans(), label="reverse"))
        if op == "reduce_window_max":
            axis = draw(st.integers(0, rank - 1), label="axis")
            if shape[axis] < 2:
                return None
            window = draw(st.integers(2, min(4, shape[axis])), label="window")
            stride = draw(st.integers(1, 2), label="stride")
            out = list(shape)
            out[axis] = (shape[axis] - window) // stride + 1
            return self.add("reduce_window_max", (x,), tuple(out), dt, axis=axis, window=window,
                            stride=stride, rank=rank)
        if op == "conv":
            return self._conv(x)
        if op == "sort":
            return self.add("sort", (x,), shape, dt, axis=draw(st.integers(0, rank - 1),
                                                                label="axis"))
        if op in ("dynamic_slice", "slice") and self._slices_a_dynamic_slice(x):
            return None  # a known XLA defect, pinned once: see _slices_a_dynamic_slice
        if op == "dynamic_slice":
            out = tuple(draw(st.integers(1, d), label="size") for d in shape)
            return self.add("dynamic_slice", (x,), out, dt, starts=self._starts(rank))
        if op == "dynamic_update_slice":
            u = self.pick("update", lambda m: m.dtype == dt and len(m.shape) == rank and all(
                a <= b for a, b in zip(m.shape, shape)))
            u = x if u is None else u
            if self._slices_a_dynamic_slice(u, through=("dynamic_update_slice",)):
                return None  # the sibling fold of the same defect (openxla/xla#49121)
            return self.add("dynamic_update_slice", (x, u), shape, dt,
                            starts=self._starts(rank))
        if op == "gather":
            axis = draw(st.integers(0, rank - 1), label="axis")
            indices = np.array(draw(st.lists(st.integers(-1, shape[axis]), min_size=1,
                                             max_size=9), label="indices"), np.int32)
            out = list(shape)
            out[axis] = len(indices)
            return self.add("gather", (x,), tuple(out), dt, axis=axis, indices=tuple(int(v) for v in indices))
        if op in ("scatter_add", "scatter_set"):
            mode = op.removeprefix("scatter_")
            pool = st.integers(0, shape[0] - 1)
            ind = draw(st.lists(pool, min_size=1, max_size=min(6, shape[0]),
                                unique=mode == "set"), label="indices")
            indices = np.array(ind, np.int32)
            src = self.pick("updates from", lambda m: m.dtype == dt and len(m.shape) == rank and
                            m.shape[1:] == shape[1:])
            src = x if src is None else src
            rows = np.array(draw(st.lists(st.integers(0, self.nodes[src].shape[0] - 1),
                                          min_size=len(ind), max_size=len(ind)),
                                 label="update rows"), np.int32)
            u = self.add("gather", (src,), (len(ind),) + shape[1:], dt, axis=0,
                         indices=tuple(int(v) for v in rows))
            if u is None:
                return None
            return self.add("scatter", (x, u), shape, dt, indices=tuple(int(v) for v in indices), mode=mode)
        if op in ("loop_affine", "loop_roll"):
            return self.add("loop", (x,), shape, dt, trips=draw(st.integers(1, 3), label="trips"),
                            body=op.removeprefix("loop_"))
        if op in ("cond_affine", "cond_rev"):
            return self.add("cond", (x,), shape, dt, k=draw(st.integers(0, IDX_LEN - 1),
                                                             label="predicate idx"),
                            body=op.removeprefix("cond_"))
        raise ValueError(f"programs: unknown catalog op {op!r}")

    def _pattern(self, op: str, x: int) -> int | None:
        kinds = _REDUCE_KINDS[self.family]
        if op.startswith("loop_"):
            return dag_loops.loop(self, x, op.removeprefix("loop_"), kinds)
        if op.startswith("transpose_"):
            return dag_wide.transposed(self, x, op.removeprefix("transpose_"), kinds)
        return self._epilogue(x) if op == "dot_epilogue" else \
            self._softmax(x) if op == "softmax" else \
            dag_norm_pool.layer_norm(self, x) if op == "layer_norm" else \
            dag_norm_pool.pool(self, x) if op == "pool" else \
            dag_wide.broadcast_dot(self, x) if op == "broadcast_dot" else self._dot(x, mixed=True)

    def _slices_a_dynamic_slice(self, x: int, through: tuple[str, ...] = ()) -> bool:
        """True when node ``x`` is a dynamic_slice, possibly through ops that only move
        data one operand to one result. XLA's algebraic simplifier merges a (dynamic)
        slice of a dynamic_slice without clamping each start to its own operand
        (openxla/xla#49121, jax-ml/jax#40849): such programs are left to the pinned
        test_programs.py::test_nested_dynamic_slice_clamps_each_start, so that random
        draws do not report one cataloged defect again and again. ``through``: more ops
        to look through (a dynamic_update_slice's update: the sibling fold
        ``dus(a, dus(ds(a, i), c, j), i)``)."""
        n = self.nodes[x]
        while n.op in ("transpose", "reshape", "reverse", "slice", "broadcast_in_dim",
                       "convert") + through:
            n = self.nodes[n.args[-1] if n.op == "dynamic_update_slice" else n.args[0]]
        return n.op == "dynamic_slice"

    def _in_high_padding(self, x: int, start: list[int], out: tuple[int, ...]) -> bool:
        """True when node ``x`` is a pad and the slice of it (``start``, result shape
        ``out``) is one element along a dimension, inside that dimension's high edge
        padding. Partitioned, with that dimension sharded, XLA's SPMD partitioner aborts
        the compile ("Check failed: shard_count > 1", ``xla-spmd-slice-of-high-padding-crash``,
        docs/upstream/spmd_slice_of_high_padding_crash.md), which ends the whole pytest
        run: the sharded programs draw no such slice (along any dimension, since the
        partitioner picks the sharded one; with interior padding too, though measured
        right on 2 devices), and
        test_programs_spmd.py::test_slice_of_high_padding_of_a_sharded_dimension_compiles
        reports it once."""
        n = self.nodes[x]
        if n.op != "pad":
            return False
        dims = self.nodes[n.args[0]].shape
        return any(size == 1 and s >= lo + d + (d - 1) * it
                   for s, size, d, (lo, _, it) in zip(start, out, dims, n.attr("config")))

    def _starts(self, rank: int) -> tuple[int, ...]:
        return tuple(self.draw(st.integers(0, IDX_LEN - 1), label="start idx")
                     for _ in range(rank))

    def _reshaped(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        how = self.draw(st.sampled_from(["flatten", "merge", "split"]), label="reshape")
        if how == "flatten" or len(shape) == 1 and how == "merge":
            return (int(np.prod(shape)),)
        if how == "merge":
            k = self.draw(st.integers(0, len(shape) - 2), label="merge at")
            return shape[:k] + (shape[k] * shape[k + 1],) + shape[k + 2:]
        k = self.draw(st.integers(0, len(shape) - 1), label="split dim")
        divisors = [f for f in range(1, shape[k] + 1) if shape[k] % f == 0]
        f = self.draw(st.sampled_from(divisors), label="split factor")
        return shape[:k] + (f, shape[k] // f) + shape[k + 1:]

    def _conv(self, x: int) -> int | None:
        """A 1-D convolution of an integer node (converted to int32) of rank 3 read as
        (batch, feature, spatial), other ranks reshaped to (1, leading dims, last dim), at
        most 16 features:
        a drawn literal kernel (1-4 output features, 1-4 taps, values -3..3), stride 1-3,
        edge padding 0-2 each side, lhs and rhs dilation 1-2 (NCH/OIH/NCH)."""
        n, draw = self.nodes[x], self.draw
        if not n.shape:
            return None
        if n.dtype != "int32":   # another integer type: converted (wrapping) first
            x = self.add("convert", (x,), n.shape, "int32")
            if x is None:
                return None
            n = self.nodes[x]
        if len(n.shape) != 3:   # read as one batch of (leading dims) features
            feat = int(np.prod(n.shape[:-1]))
            if feat > 16:
                return None
            x = self.add("reshape", (x,), (1, feat, n.shape[-1]), n.dtype)
            if x is None:
                return None
            n = self.nodes[x]
        batch, feat, width = n.shape
        if feat > 16:
            return None
        out_feat = draw(st.integers(1, 4), label="conv output features")
        taps = draw(st.integers(1, 4), label="conv taps")
        stride = draw(st.integers(1, 3), label="conv stride")
        lo, hi = (draw(st.integers(0, 2), label=f"conv padding {side}")
                  for side in ("low", "high"))
        ld, rd = (draw(st.integers(1, 2), label=f"conv {which} dilation")
                  for which in ("lhs", "rhs"))
        span = (width - 1) * ld + 1 + lo + hi - ((taps - 1) * rd + 1)
        if span < 0:
            return None
        kernel = tuple(draw(st.lists(st.integers(-3, 3), min_size=out_feat * feat * taps,
                                     max_size=out_feat * feat * taps), label="conv kernel"))
        return self.add("conv", (x,), (batch, out_feat, span // stride + 1), n.dtype,
                        kernel=kernel, kernel_shape=(out_feat, feat, taps), stride=stride,
                        padding=(lo, hi), lhs_dilation=ld, rhs_dilation=rd)

    def _epilogue(self, x: int) -> int | None:
        """A dot_general followed by the epilogue models run on it: a bias (an operand of
        the dot's shape: a broadcast row, an iota or an earlier node), then, drawn, a
        scale, then an activation: ``tanh``, ``logistic`` or ReLU (``max(x, 0)``)."""
        d = self._dot(x)
        if d is None or not self.nodes[d].shape:
            return None
        n = self.nodes[d]
        out = self.add("add", (d, self.partner(d)), n.shape, n.dtype)
        if out is not None and self.draw(st.booleans(), label="epilogue scale"):
            out = self.add("multiply", (out, self.partner(out)), n.shape, n.dtype)
        act = self.draw(st.sampled_from(["tanh", "logistic", "relu"]), label="activation")
        return None if out is None else self.add(act, (out,), n.shape, n.dtype)

    def _softmax(self, x: int) -> int | None:
        """``exp(x - max(x)) / sum(exp(x - max(x)))`` along a drawn axis, as jax.nn.softmax
        writes it: reduce max, broadcast, subtract, exp, reduce add, broadcast, divide."""
        n = self.nodes[x]
        if not n.shape:
            return None
        axis = self.draw(st.integers(0, len(n.shape) - 1), label="softmax axis")
        kept = tuple(k for k in range(len(n.shape)) if k != axis)
        rest = tuple(n.shape[k] for k in kept)
        top = self.add("reduce", (x,), rest, n.dtype, axes=(axis,), kind="max")
        if top is None:
            return None
        shifted = self.add("subtract", (x, self.add("broadcast_in_dim", (top,), n.shape,
                                                     n.dtype, dims=kept)), n.shape, n.dtype)
        e = self.add("exp", (shifted,), n.shape, n.dtype)
        total = self.add("reduce", (e,), rest, n.dtype, axes=(axis,), kind="add")
        spread = self.add("broadcast_in_dim", (total,), n.shape, n.dtype, dims=kept)
        return self.add("divide", (e, spread), n.shape, n.dtype)

    def _dot(self, x: int, mixed: bool = False) -> int | None:
        """A dot_general of node ``x`` and a drawn partner of its dtype; ``mixed``: of two
        bfloat16/float16 values with a float32 result (``dot_mixed``; None for ``x`` of
        another dtype)."""
        n, draw = self.nodes[x], self.draw
        if mixed and n.dtype not in LOW_PRECISION:
            return None
        cx = draw(st.integers(0, len(n.shape) - 1), label="x contracting dim")
        y = self.pick("dot rhs", lambda m: m.dtype == n.dtype and n.shape[cx] in m.shape)
        y = x if y is None else y
        m = self.nodes[y]
        cy = draw(st.sampled_from([k for k, s in enumerate(m.shape) if s == n.shape[cx]]),
                  label="y contracting dim")
        bx, by = (), ()
        pairs = [(a, b) for a in range(len(n.shape)) for b in range(len(m.shape))
                 if a != cx and b != cy and n.shape[a] == m.shape[b]]
        if pairs and draw(st.booleans(), label="batch dim"):
            a, b = draw(st.sampled_from(pairs), label="batch dims")
            bx, by = (a,), (b,)
        out = tuple(n.shape[a] for a in bx) + tuple(
            s for k, s in enumerate(n.shape) if k not in (cx,) + bx) + tuple(
            s for k, s in enumerate(m.shape) if k not in (cy,) + by)
        return self.add("dot_mixed" if mixed else "dot_general", (x, y), out,
                        "float32" if mixed else n.dtype, contract=((cx,), (cy,)),
                        batch=(bx, by))


def family_dtype(family: str, dtype: str | None = None) -> st.SearchStrategy[str]:
    """The base dtype of a family's programs (``dtype``: the float family's, float32 by
    default, or one of :data:`LOW_PRECISION`)."""
    if dtype is not None:
        return st.just(dtype)
    return {"integer": st.just("int32"), "float": st.just("float32"),
            "data_movement": st.sampled_from(["float32", "int16", "uint8"])}[family]


@st.composite
def programs(draw: st.DrawFn, family: str, *, budget: int, max_ops: int = 30,
             param_shapes: list[tuple[int, ...]] | None = None,
             strided_slices: bool = True, padding_slices: bool = True,
             dtype: str | None = None, model_patterns: int = 0) -> Program:
    """A valid :class:`Program` of ``family`` with 2..``max_ops`` drawn ops (plus the
    broadcasts, iotas and gathers that make their operands), every value at most
    ``budget`` elements; ``param_shapes``: the data parameters' shapes (default: 1-3
    drawn); ``strided_slices=False``: every slice has stride 1 (sharded programs: XLA's
    partitioner gets strided slices of a sharded dimension wrong, a defect pinned by
    ``test_programs_spmd.py::test_strided_slice_of_a_sharded_dimension_*``);
    ``padding_slices=False``: no slice of a pad that is one element along a dimension
    inside its high edge padding (sharded programs: XLA's partitioner aborts the
    compile, pinned by
    ``test_programs_spmd.py::test_slice_of_high_padding_of_a_sharded_dimension_compiles``);
    ``dtype``:
    the float family's dtype (None: float32; one of :data:`LOW_PRECISION`: that dtype's
    programs, the mixed dot in the catalog); ``model_patterns`` (float family, 0 to 4):
    after its drawn ops the program applies that many of :data:`MODEL_PATTERNS`, distinct,
    in a drawn order, each to a drawn earlier value of rank 1 or more, else to the first
    parameter, else to an iota (a pattern that fits none gives its place to the next), and
    returns
    their results (``test_float_programs``: all four, so that ``ci``'s 8 examples hold
    each pattern and kill its mutant by structure, not by the luck of the catalog draws,
    which a change of the draws once undid). It returns
    its last result, up to two drawn others, the last two patterns and the last loop or
    wide operand of each kind (so that no pattern is pruned as dead code before it is
    compiled).
    Raises ValueError for an unknown family or bad bounds."""
    if family not in FAMILIES:
        raise ValueError(f"programs: argument 'family' must be one of {FAMILIES}, "
                         f"got {family!r}")
    if budget < 1 or max_ops < 2:
        raise ValueError(f"programs: need budget >= 1 and max_ops >= 2, got {budget}, "
                         f"{max_ops}")
    if dtype is not None and (family != "float" or dtype not in LOW_PRECISION + ("float32",)):
        raise ValueError(f"programs: argument 'dtype' must be None, float32 or one of "
                         f"{LOW_PRECISION} (float family only), got {dtype!r} for {family!r}")
    if not 0 <= model_patterns <= (len(MODEL_PATTERNS) if family == "float" else 0):
        raise ValueError(f"programs: argument 'model_patterns' must be 0..{len(MODEL_PATTERNS)} "
                         f"for the float family and 0 otherwise, got {model_patterns!r} for "
                         f"{family!r}")
    b = _Builder(draw, family, budget)
    b.max_stride = 3 if strided_slices else 1
    b.padding_slices = padding_slices
    dt = draw(family_dtype(family, dtype), label="dtype")
    catalog = _LOW_CATALOG if dt in LOW_PRECISION else CATALOG[family]
    if param_shapes is None:
        param_shapes = [
            tuple(max(d, 1) for d in draw(strategies.long_axis_shapes(budget, max_dims=3),
                                          label=f"p{k} shape"))
            for k in range(draw(st.integers(1, 3), label="parameters"))]
    for k, shape in enumerate(param_shapes):
        if b.add("param", (), shape, dt, index=k) is None:
            raise ValueError(f"programs: parameter shape {shape} is empty or over the budget "
                             f"{budget}")
    n_ops = draw(st.integers(2, max_ops), label="ops")
    made = 0
    for _ in range(n_ops):
        op = draw(st.sampled_from(catalog), label="op")
        x = b.pick("operand", lambda m: True)
        if b.apply(op, x) is not None:
            made += 1
    forced = 0
    if model_patterns:
        for kind in draw(st.permutations(MODEL_PATTERNS), label="model patterns"):
            if forced < model_patterns and _apply_somewhere(b, kind, dt) is not None:
                forced += 1
    made += forced
    while made < 2:  # rules that did not fit the budget: fall back to a cheap op
        b.add("reverse" if family == "data_movement" else "negate",
              (len(b.nodes) - 1,), b.nodes[-1].shape, b.nodes[-1].dtype,
              **({"dims": (0,)} if family == "data_movement" else {}))
        made += 1
    results = [i for i, n in enumerate(b.nodes) if n.op not in ("param", "iota", "constant")]
    extra = draw(st.lists(st.sampled_from(results), max_size=2, unique=True), label="outputs")
    last = [out for _, out in b.patterns[-max(2, forced):]] + [
        out for kind, out in dict(b.patterns).items() if kind in _LOOPS_AND_WIDE]
    outputs = tuple(dict.fromkeys([results[-1]] + extra + last))
    return Program(family, tuple(b.nodes), outputs)


def _apply_somewhere(b: _Builder, kind: str, dt: str) -> int | None:
    """Pattern ``kind`` applied to a drawn value of rank 1 or more, else to the first
    parameter, else to an iota of ``dt``[8, 8] (a dot of which with any value of the budget
    fits it, for budgets of 64 elements and more); its result, or None where none fits."""
    x = b.pick("pattern operand", lambda m: len(m.shape) > 0)
    for operand in (x, 0):
        out = None if operand is None else b.apply(kind, operand)
        if out is not None:
            return out
    square = b.add("iota", (), (8, 8), dt, dim=0)
    return None if square is None else b.apply(kind, square)


#: Catalog ids (``conformance/defects/xla-cpu.toml``) of the XLA SPMD partitioner defects
#: that an out-of-range dynamic_slice or dynamic_update_slice start meets, each pinned once
#: in ``test_programs_spmd.py``; ``inputs(..., avoid=...)`` draws the starts of their
#: configurations in range (see :func:`avoided_starts`).
START_DEFECTS = ("xla-spmd-dynamic-update-slice-clamp", "xla-spmd-dynamic-slice-clamp")


def inputs(draw: st.DrawFn, program: Program, *,
           avoid: Collection[str] = ()) -> tuple[list[np.ndarray], np.ndarray]:
    """The data parameters of ``program`` and its ``idx`` vector (int32[:data:`IDX_LEN`]),
    drawn: integers over the whole range (small ones most often, so products stay
    informative); data movement: any bit pattern (NaN payloads, -0.0, infinities,
    subnormals) for floats; floats: [-2, 2]; ``idx``: starts inside, at and past the
    dimensions (clamped). ``avoid`` (programs run partitioned): ids of
    :data:`START_DEFECTS`; each ``idx`` entry that starts a configuration of one of them
    (:func:`avoided_starts`) is redrawn so that no clamp applies there, every other
    entry keeps its draw (out-of-range starts included, so XLA's clamping is checked
    under partitioning too). Raises ValueError for another id."""
    _check_avoid("inputs", avoid)
    out = []
    for i in program.params:
        n = program.nodes[i]
        dt = dtype_helpers.BY_NAME[n.dtype]
        if program.family == "data_movement":
            arr = draw(strategies.seeded_bit_patterns(dt, n.shape), label=f"p{n.attr('index')}")
        elif program.family == "float":
            arr = draw(strategies.seeded_arrays(dt, n.shape, min_value=-2.0, max_value=2.0),
                       label=f"p{n.attr('index')}")
        else:
            wide = draw(st.booleans(), label="full int32 range")
            lim = 2**31 - 1 if wide else 9
            arr = draw(strategies.seeded_arrays(dt, n.shape, min_value=-lim - 1, max_value=lim),
                       label=f"p{n.attr('index')}")
        out.append(np.asarray(arr, n.dtype))
    idx = np.array(draw(st.lists(st.integers(-3, 5000) | st.integers(0, 16), min_size=IDX_LEN,
                                 max_size=IDX_LEN), label="idx"), np.int32)
    if avoid:
        idx = _starts_in_range(draw, avoided_starts(program, avoid), idx)
    return out, idx


def avoided_starts(program: Program, avoid: Collection[str]) -> list[tuple[int, int, int]]:
    """The starts of ``program`` that the defects ``avoid`` (ids of :data:`START_DEFECTS`)
    need in range, as (``idx`` entry, operand dimension d, slice or update size s) of each
    dimension of each dynamic_slice and dynamic_update_slice whose configuration is the
    defect's. Which dimension the partitioner shards is its own choice (sharding
    propagation from every parameter and output), so any dimension may be the sharded one:

    - ``xla-spmd-dynamic-update-slice-clamp`` (openxla/xla#49118, every jaxlib measured,
      0.7.1 to 0.12.0.1): a dynamic_update_slice whose update is **one element** along the
      dimension. The partitioner writes a one-element update on the device whose shard
      holds the unclamped start, so a start past the end (or one jax leaves negative)
      writes nothing (docs/upstream/spmd_dynamic_update_slice_clamp.md). An update of 2
      or more elements with a runtime start (every start here is one: ``idx`` is a
      parameter) clamps right (measured with plain jax on jaxlib 0.10.2 and 0.12.0.1,
      2 to 8 devices, 1-D and 2-D operands, the result replicated or sharded).
    - ``xla-spmd-dynamic-slice-clamp`` (openxla/xla#49122, jaxlib 0.8.0 to 0.11.2, fixed
      in 0.12.0): a dynamic_slice of **2 or more elements, but not the whole dimension**,
      along the dimension, whose result the partitioner may shard there: each device then
      clamps the start of its own piece instead of the slice's
      (docs/upstream/spmd_dynamic_slice_clamp.md). A one-element slice has one piece that
      is not padding, the first device's, whose start is the slice's: it clamps right; a
      slice of the whole dimension (every start clamps to 0) is right too (measured with
      plain jax on jaxlib 0.10.2, 2, 4 and 8 devices, the result sharded).

    A dimension of every other dynamic_slice and dynamic_update_slice keeps its drawn
    start, in range or not. Raises ValueError for an id not in :data:`START_DEFECTS`."""
    _check_avoid("avoided_starts", avoid)
    dus, ds = START_DEFECTS[0] in avoid, START_DEFECTS[1] in avoid
    out = []
    for n in program.nodes:
        if n.op == "dynamic_update_slice" and dus:
            dims, sizes, needs = n.shape, program.nodes[n.args[1]].shape, lambda d, s: s == 1
        elif n.op == "dynamic_slice" and ds:
            dims, sizes, needs = program.nodes[n.args[0]].shape, n.shape, \
                lambda d, s: 2 <= s < d
        else:
            continue
        out += [(k, d, s) for k, d, s in zip(n.attr("starts"), dims, sizes) if needs(d, s)]
    return out


def _check_avoid(function: str, avoid: Collection[str]) -> None:
    unknown = sorted(set(avoid) - set(START_DEFECTS))
    if unknown or isinstance(avoid, str):
        raise ValueError(f"{function}: argument 'avoid' must be a collection of ids of "
                         f"{START_DEFECTS}, got {avoid!r}")


def _starts_in_range(draw: st.DrawFn, spans: list[tuple[int, int, int]],
                     idx: np.ndarray) -> np.ndarray:
    """``idx`` with each entry k of ``spans`` ((k, d, s) as :func:`avoided_starts` gives
    them) redrawn inside every dimension it starts there: in [0, d - s] for each of its
    (d, s), or in [-d, -s] (jax counts a negative start from the end) where all of those
    agree. Entries not in ``spans`` are left as drawn."""
    by_entry: dict[int, list[tuple[int, int]]] = {}
    for k, d, s in spans:
        by_entry.setdefault(k, []).append((d, s))
    idx = idx.copy()
    for k, ds in sorted(by_entry.items()):
        inside = st.integers(0, min(d - s for d, s in ds))
        lo, hi = -min(d for d, _ in ds), -max(s for _, s in ds)
        if lo <= hi:
            inside = inside | st.integers(lo, hi)
        idx[k] = draw(inside, label=f"idx[{k}] in range")
    return idx


def add_insensitive(a: np.ndarray) -> np.ndarray:
    """``a`` without the float values an addition of +0.0 changes: -0.0 becomes +0.0,
    subnormals +0.0, signaling NaNs quiet (their payload kept); other dtypes unchanged.
    For programs over sharded operands: XLA's partitioner assembles replicated results
    with such additions, a defect pinned once by
    ``test_programs_spmd.py::test_sharded_slice_and_gather_keep_bits``."""
    a = np.array(a, copy=True)
    if a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4, 8):
        return a
    info = ml_dtypes.finfo(a.dtype)
    bits = a.view(f"u{a.dtype.itemsize}")
    with np.errstate(invalid="ignore"):
        tiny_or_zero = (np.abs(a) < float(info.tiny)) & ~np.isnan(a)
    bits[tiny_or_zero] = 0
    quiet = np.array(1 << (int(info.nmant) - 1), bits.dtype)
    bits[np.isnan(a)] |= quiet
    return a
