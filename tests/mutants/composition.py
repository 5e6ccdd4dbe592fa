"""Mutation operator ``hlo`` where ops meet: a fusion or partitioner bug.

Each mutant is a StableHLO rewrite before compile that is wrong only where two ops
compose, so every single-op kernel test passes on it:

* ``fused-reduce-drops-tail``: a reduce fused with the elementwise op producing its
  input skips the last index of its first reduced dimension;
* ``fused-dot-drops-last-contracting``: a dot_general fused with an elementwise
  producer skips the last index of its first contracting dimension;
* ``multi-output-aliasing``: @main's second result of a type is written to the first's
  buffer (a multi-output fusion aliasing two outputs);
* ``fused-broadcast-reversed``: a broadcast_in_dim feeding an elementwise op reads its
  operand in reverse;
* ``partitioner-forgets-reduction``: a reduce (or a dot_general contraction) over a
  sharded dimension of an SPMD program gets no all-reduce: each device returns its local
  partial result;
* ``strided-conv-reverses-kernel``: a convolution with a window stride above 1 reads its
  kernel reversed along its first spatial dimension (the models' convolutions have
  stride 1: only the generated programs' strided convolutions kill it);
* ``epilogue-drops-bias``: a dot_general's bias add that feeds an activation (through a
  scale or not) is skipped (the generated programs' dot epilogues kill it);
* ``softmax-drops-normalization``: the division of ``exp`` by a broadcast (softmax's
  normalization) is skipped (the generated programs' softmax kills it);
* ``mixed-dot-accumulates-in-bf16``: a dot_general of bfloat16 operands asked for a
  float32 result (``preferred_element_type``) returns it rounded to bfloat16 (the
  float32 accumulation the program asks for is not kept; the bfloat16 programs' mixed
  dots kill it, the float32 programs have none);
* ``layernorm-variance-uncentered``: a layer norm's square of the centered value
  ``(x - mean)`` reads ``x`` instead (a fused variance that skips the centering: the
  generated programs' layer norms kill it);
* ``pool-ignores-low-padding``: a ``reduce_window`` whose padding puts elements before
  the first one (``'SAME'`` padding of a window of 3 or more) applies it all at the high
  end: every window starts at the unpadded origin (the generated programs' max and
  average pools kill it; a cumulative sum's reduce_window, padded by its window less one,
  is left alone);
* ``loop-dot-drops-last-trip``: a while loop whose body (or a function it calls) holds a
  dot_general runs one trip fewer (a pipelined loop that loses its last iteration; the
  generated programs' loop dots kill it, their ``v * 3 + 1`` loops are left alone);
* ``loop-reduce-drops-tail``: a reduce inside a while loop's body skips the last index of
  its first reduced dimension (the generated programs' loop reduces kill it);
* ``loop-update-slice-ignores-trip``: a dynamic_update_slice inside a while loop's body
  that writes back what a dynamic_slice read from the same buffer writes at offset 0 of
  every dimension whose start is computed (the start's dependence on the induction
  variable lost: the generated programs' loop updates kill it; jax's own scans, which
  stack their outputs with such an update of another buffer, are left alone);
* ``dot-reads-wide-transpose-untransposed``: a dot_general operand that a transpose
  produces, contracted along a dimension of 64 or more, is read as the transpose's
  operand reshaped (its elements in their untransposed order: a transpose folded into
  the dot's layout that is not applied);
* ``reduce-reads-wide-transpose-untransposed``: the same for a reduce of a transpose
  along a reduced dimension of 64 or more (some dimension kept);
* ``broadcast-dot-drops-tail-tile``: a dot_general with an operand a broadcast_in_dim
  produces contracts only the first 64 indices of its contracting dimension where that
  is longer (a fused broadcast-matmul kernel that runs one tile of 64).
"""

from __future__ import annotations

from typing import Any

from tests.mutants.stablehlo_rewrite import Mutation, replace_results, walk
from tests.mutants.base import rewriting
from tests.mutants.catalog import add

#: StableHLO ops computing each element from the same element of their operands.
ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in (
    "abs", "add", "and", "atan2", "bitcast_convert", "cbrt", "ceil", "clamp", "compare",
    "complex", "convert", "cosine", "count_leading_zeros", "divide", "exponential",
    "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one", "logistic",
    "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
    "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "select", "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sine",
    "sqrt", "subtract", "tan", "tanh", "xor"))


def _ir() -> Any:
    from jaxlib.mlir import ir

    return ir


def producer(value: Any) -> Any:
    """The operation defining ``value``; None for a block argument."""
    ir = _ir()
    owner = value.owner
    return owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _from_elementwise(value: Any) -> bool:
    op = producer(value)
    return op is not None and op.name in ELEMENTWISE


def _shape(value: Any) -> list[int] | None:
    """The static shape of a ranked tensor value, else None."""
    try:
        t = _ir().RankedTensorType(value.type)
    except ValueError:
        return None
    return None if not t.has_static_shape else list(t.shape)


def _ints(op: Any, name: str) -> list[int]:
    return list(_ir().DenseI64ArrayAttr(op.attributes[name]))


def _create(name: str, operand: Any, result: Any, before: Any, **attrs: Any) -> Any:
    ir = _ir()
    return ir.Operation.create(name, results=[result], operands=[operand],
                               attributes={k: ir.DenseI64ArrayAttr.get(v)
                                           for k, v in attrs.items()},
                               ip=ir.InsertionPoint(before)).results[0]


def drop_last(value: Any, dim: int, before: Any) -> Any:
    """A ``stablehlo.slice`` of ``value`` without the last index of ``dim`` (inserted
    before operation ``before``)."""
    ir = _ir()
    shape = _shape(value)
    limits = shape[:dim] + [shape[dim] - 1] + shape[dim + 1:]
    etype = ir.RankedTensorType(value.type).element_type
    return _create("stablehlo.slice", value, ir.RankedTensorType.get(limits, etype), before,
                   start_indices=[0] * len(shape), limit_indices=limits,
                   strides=[1] * len(shape))


# 1. fused-reduce-drops-tail

def _reduce_inputs(op: Any) -> list[Any]:
    return list(op.operands)[:len(op.operands) // 2]


def _reduce_tail(op: Any) -> int | None:
    """The first reduced dimension of a reduce fed by an elementwise op, if its size
    is >= 2."""
    if op.name != "stablehlo.reduce":
        return None
    inputs = _reduce_inputs(op)
    if not any(_from_elementwise(v) for v in inputs):
        return None
    dims, shape = _ints(op, "dimensions"), _shape(inputs[0])
    if not dims or shape is None or shape[dims[0]] < 2:
        return None
    return dims[0]


def _drop_reduce_tail(op: Any) -> None:
    dim = _reduce_tail(op)
    for i, value in enumerate(_reduce_inputs(op)):
        op.operands[i] = drop_last(value, dim, op)


# 2. fused-dot-drops-last-contracting

def _contracting(op: Any) -> tuple[int, int] | None:
    """(lhs, rhs) first contracting dimensions of a dot_general with an elementwise
    producer, when they have size >= 2."""
    from jaxlib.mlir.dialects import stablehlo

    if op.name != "stablehlo.dot_general" or not any(_from_elementwise(v) for v in op.operands):
        return None
    numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)
    shape = _shape(op.operands[0])
    if not lhs or shape is None or _shape(op.operands[1]) is None or shape[lhs[0]] < 2:
        return None
    return lhs[0], rhs[0]


def _drop_last_contracting(op: Any) -> None:
    for i, dim in enumerate(_contracting(op)):
        op.operands[i] = drop_last(op.operands[i], dim, op)


# 3. multi-output-aliasing

def _non_trivial(value: Any) -> bool:
    """Computed by the program: not a parameter, a constant or a broadcast constant."""
    op = producer(value)
    if op is None or op.name == "stablehlo.constant":
        return False
    return not (op.name == "stablehlo.broadcast_in_dim" and
                producer(op.operands[0]) is not None and
                producer(op.operands[0]).name == "stablehlo.constant")


def _aliased_pair(op: Any) -> tuple[int, int] | None:
    """(i, j), i < j: two distinct results of @main of one type, both computed, one of
    them by dynamic_update_slice if any such pair exists (else the first pair)."""
    if op.name != "func.return" or _in_main(op) is None:
        return None
    values = list(op.operands)
    pairs = [(i, j) for j in range(len(values)) for i in range(j)
             if values[i].type == values[j].type and values[i] != values[j] and
             _non_trivial(values[i]) and _non_trivial(values[j])]
    updated = [(i, j) for i, j in pairs if any(
        producer(values[k]).name == "stablehlo.dynamic_update_slice" for k in (i, j))]
    return (updated or pairs or [None])[0]


def _alias(op: Any) -> None:
    i, j = _aliased_pair(op)
    op.operands[j] = op.operands[i]


# 4. fused-broadcast-reversed

def _reversed_dim(op: Any) -> int | None:
    """The first operand dimension of size >= 2 of a broadcast_in_dim whose result an
    elementwise op reads."""
    if op.name != "stablehlo.broadcast_in_dim":
        return None
    shape = _shape(op.operands[0])
    uses = [u.owner.operation.name for u in op.results[0].uses]
    if not shape or not any(name in ELEMENTWISE for name in uses):
        return None
    return next((d for d, n in enumerate(shape) if n >= 2), None)


def _reverse_operand(op: Any) -> None:
    operand = op.operands[0]
    op.operands[0] = _create("stablehlo.reverse", operand, operand.type, op,
                             dimensions=[_reversed_dim(op)])


# 6. strided-conv-reverses-kernel

def _strided_kernel_dim(op: Any) -> int | None:
    """The first spatial dimension of size >= 2 of the kernel of a convolution with a
    window stride above 1, else None."""
    if op.name != "stablehlo.convolution" or "window_strides" not in op.attributes:
        return None
    from jaxlib.mlir.dialects import stablehlo

    ir = _ir()
    if not any(s > 1 for s in ir.DenseI64ArrayAttr(op.attributes["window_strides"])):
        return None
    shape = _shape(op.operands[1])
    spatial = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"]) \
        .kernel_spatial_dimensions
    return next((d for d in spatial if shape and shape[d] >= 2), None)


def _reverse_kernel(op: Any) -> None:
    kernel = op.operands[1]
    op.operands[1] = _create("stablehlo.reverse", kernel, kernel.type, op,
                             dimensions=[_strided_kernel_dim(op)])


# 5. partitioner-forgets-reduction

Axes = list[list[str]]          # mesh axis names per dimension


def _in_main(op: Any) -> Any:
    """The @main func.func that is ``op``'s parent, else None."""
    parent = op.parent
    if parent is None or parent.operation.name != "func.func":
        return None
    parent = parent.operation
    return parent if _ir().StringAttr(parent.attributes["sym_name"]).value == "main" else None


def _axes(sharding: Any) -> tuple[str, Axes] | None:
    """(mesh name, axis names per dimension) of an ``sdy`` TensorShardingAttr; None for
    an inlined mesh or sub-axes."""
    from jaxlib.mlir.dialects import sdy

    ir = _ir()
    sharding = sdy.TensorShardingAttr(sharding)
    try:
        mesh = ir.FlatSymbolRefAttr(sharding.mesh_or_ref).value
    except ValueError:
        return None
    dims = []
    for dim in sharding.dimension_shardings:
        refs = [sdy.AxisRefAttr(a) for a in sdy.DimensionShardingAttr(dim).axes]
        if any(r.sub_axis_info is not None for r in refs):
            return None
        dims.append([r.name for r in refs])
    return mesh, dims


def _argument_sharding(value: Any) -> Any:
    ir = _ir()
    func = value.owner.owner
    func = func.operation if func is not None else None
    if func is None or func.name != "func.func" or "arg_attrs" not in func.attributes:
        return None
    index = ir.BlockArgument(value).arg_number
    attrs = ir.DictAttr(ir.ArrayAttr(func.attributes["arg_attrs"])[index])
    return attrs["sdy.sharding"] if "sdy.sharding" in attrs else None


_FOLLOWED = ELEMENTWISE | {f"stablehlo.{n}" for n in (
    "broadcast_in_dim", "transpose", "slice", "dot_general", "reduce")}


def sharding_of(value: Any, depth: int = 0) -> tuple[str, Axes] | None:
    """(mesh, axes per dimension) of ``value`` as far as it follows from @main's argument
    shardings and sdy sharding annotations through elementwise ops, broadcast_in_dim,
    transpose, slice, dot_general and reduce; None where unknown or unsharded."""
    from jaxlib.mlir.dialects import sdy

    op = producer(value)
    if depth > 64:
        return None
    if op is None:
        found = _argument_sharding(value)
        return _axes(found) if found is not None else None
    if op.name == "sdy.sharding_constraint":
        return _axes(op.attributes["sharding"])
    if op.name == "sdy.manual_computation":     # an earlier edit of this rewrite
        per_value = sdy.TensorShardingPerValueAttr(op.attributes["out_shardings"]).shardings
        return _axes(per_value[list(op.results).index(value)])
    if "sdy.sharding" in op.attributes:
        per_value = sdy.TensorShardingPerValueAttr(op.attributes["sdy.sharding"]).shardings
        return _axes(per_value[list(op.results).index(value)])
    if op.name not in _FOLLOWED or not len(op.operands):
        return None
    ins = [sharding_of(v, depth + 1) for v in op.operands]
    shape = _shape(value) or []
    if op.name in ELEMENTWISE:
        return next((s for s in ins if s is not None and len(s[1]) == len(shape) and
                     any(s[1])), None)
    if op.name == "stablehlo.dot_general":
        return None if ins[0] is None and ins[1] is None else _dot_sharding(op, *ins[:2])[1]
    if ins[0] is None:
        return None
    mesh, dims = ins[0]
    source = _shape(op.operands[0])
    if op.name == "stablehlo.broadcast_in_dim":
        out: Axes = [[] for _ in shape]
        for d, r in enumerate(_ints(op, "broadcast_dimensions")):
            out[r] = dims[d] if source[d] == shape[r] else []
        return mesh, out
    if op.name == "stablehlo.transpose":
        return mesh, [dims[p] for p in _ints(op, "permutation")]
    if op.name == "stablehlo.slice":
        return mesh, [a if source[d] == shape[d] else [] for d, a in enumerate(dims)]
    reduced = set(_ints(op, "dimensions"))
    return mesh, [a for d, a in enumerate(dims) if d not in reduced]


def _dot_sharding(op: Any, lhs: Any, rhs: Any) -> tuple[tuple[Axes, Axes], tuple[str, Axes],
                                                      bool]:
    """A dot_general with operand shardings ``lhs``/``rhs`` (either may be None) as the
    partitioner would run it locally: ((lhs axes, rhs axes), (mesh, result axes), whether
    a contracting dimension is sharded). The side with a sharded contracting dimension
    (else lhs) leads; the other side follows its batch and contracting axes, replicated
    elsewhere; the result is batch, then lhs free, then rhs free dimensions."""
    from jaxlib.mlir.dialects import stablehlo

    n = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    batch = (list(n.lhs_batching_dimensions), list(n.rhs_batching_dimensions))
    contracting = (list(n.lhs_contracting_dimensions), list(n.rhs_contracting_dimensions))
    given = (lhs, rhs)
    lead = next((s for s in (0, 1) if given[s] is not None and
                 any(given[s][1][d] for d in contracting[s])), 0 if lhs is not None else 1)
    mesh, dims = given[lead]
    sides: list[Axes] = [[], []]
    sides[lead] = dims
    other = [[] for _ in _shape(op.operands[1 - lead])]
    for d, o in zip(batch[lead] + contracting[lead], batch[1 - lead] + contracting[1 - lead]):
        other[o] = dims[d]
    sides[1 - lead] = other
    free = [[a for d, a in enumerate(sides[s]) if d not in batch[s] + contracting[s]]
            for s in (0, 1)]
    result = [sides[0][d] for d in batch[0]] + free[0] + free[1]
    return (sides[0], sides[1]), (mesh, result), any(dims[d] for d in contracting[lead])


def _mesh_axes(op: Any, mesh: str) -> dict[str, int] | None:
    """Axis name -> size of the ``sdy.mesh`` named ``mesh`` in ``op``'s module."""
    from jaxlib.mlir.dialects import sdy

    ir = _ir()
    module = op
    while module.parent is not None:
        module = module.parent
    for child in module.regions[0].blocks[0].operations:
        child = child.operation
        if child.name == "sdy.mesh" and ir.StringAttr(child.attributes["sym_name"]).value == mesh:
            axes = sdy.MeshAttr(child.attributes["mesh"]).axes
            return {sdy.MeshAxisAttr(a).name: sdy.MeshAxisAttr(a).size for a in axes}
    return None


def _partial(op: Any) -> tuple[str, dict[str, int], list[Axes], list[Axes]] | None:
    """(mesh, its axis sizes, axes of each operand, axes of each result) of a reduce or
    dot_general in @main summing over a dimension sharded by an axis of size > 1 (an axis of
    the operand the result lacks), every dimension evenly divided by its axes; else None."""
    if op.name not in ("stablehlo.reduce", "stablehlo.dot_general") or _in_main(op) is None:
        return None
    if op.name == "stablehlo.reduce":
        inputs = _reduce_inputs(op)
        found = sharding_of(inputs[0])
        if found is None or any(_shape(v) != _shape(inputs[0]) for v in inputs):
            return None
        mesh, dims = found
        reduced = set(_ints(op, "dimensions"))
        kept = [a for d, a in enumerate(dims) if d not in reduced]
        operands = [dims] * len(inputs) + [[]] * len(inputs)
        results = [kept] * len(op.results)
    else:
        lhs, rhs = sharding_of(op.operands[0]), sharding_of(op.operands[1])
        if lhs is None and rhs is None:
            return None
        (a, b), (mesh, result), summed = _dot_sharding(op, lhs, rhs)
        if not summed or (lhs is not None and rhs is not None and lhs[0] != rhs[0]):
            return None
        operands, results = [a, b], [result]
    sizes = _mesh_axes(op, mesh)
    gone = {a for axes in operands[0] for a in axes} - {a for axes in results[0] for a in axes}
    if sizes is None or all(sizes.get(a, 1) == 1 for a in gone):
        return None     # no device holds a partial sum: nothing to forget
    for value, dims in zip(op.operands, operands):
        for n, axes in zip(_shape(value) or [], dims):
            parts = 1
            for axis in axes:
                parts *= sizes.get(axis, 0)
            if parts == 0 or n % parts:
                return None
    return mesh, sizes, operands, results


def _local(value_type: Any, dims: Axes, sizes: dict[str, int]) -> Any:
    ir = _ir()
    t = ir.RankedTensorType(value_type)
    shape = list(t.shape)
    for d, axes in enumerate(dims):
        for a in axes:
            shape[d] //= sizes[a]
    return ir.RankedTensorType.get(shape, t.element_type)


def _manual(op: Any) -> None:
    """The op moved into an ``sdy.manual_computation`` over every mesh axis, its operands
    sharded as found and its results keeping the axes of their dimensions: the summed
    dimensions' axes are dropped without an all-reduce (shard_map without psum)."""
    from jaxlib.mlir.dialects import sdy

    ir = _ir()
    plan = _partial(op)
    if plan is None:      # not summing over a sharded dimension after all: left alone
        return
    mesh, sizes, operands, results = plan

    def sharding(per_dim: Axes) -> Any:
        return sdy.TensorShardingAttr.get(mesh, [sdy.DimensionShardingAttr.get(
            [sdy.AxisRefAttr.get(a) for a in axes], True) for axes in per_dim])

    manual = sdy.ManualComputationOp(
        [r.type for r in op.results], list(op.operands),
        sdy.TensorShardingPerValueAttr.get([sharding(d) for d in operands]),
        sdy.TensorShardingPerValueAttr.get([sharding(d) for d in results]),
        sdy.ManualAxesAttr.get([ir.StringAttr.get(a) for a in sizes]),
        ip=ir.InsertionPoint(op))
    block = manual.regions[0].blocks.append(
        *[_local(v.type, d, sizes) for v, d in zip(op.operands, operands)])
    inner = op.clone(ip=ir.InsertionPoint(block))
    for i, argument in enumerate(block.arguments):
        inner.operands[i] = argument
    for result, dims in zip(inner.results, results):
        result.set_type(_local(result.type, dims, sizes))
    sdy.ReturnOp(list(inner.results), ip=ir.InsertionPoint(block))
    replace_results(op, list(manual.results))


# 7. epilogue-drops-bias

#: The activations a dot epilogue ends in (ReLU is ``maximum`` with zeros).
ACTIVATIONS = frozenset({"stablehlo.tanh", "stablehlo.logistic", "stablehlo.maximum"})


def _users(value: Any) -> list[str]:
    return [use.owner.name for use in value.uses]


def _epilogue_bias(op: Any) -> bool:
    """An add of a dot_general's result (the bias) whose result feeds an activation,
    directly or through one multiply (a scale)."""
    if op.name != "stablehlo.add" or not any(
            getattr(producer(v), "name", None) == "stablehlo.dot_general" for v in op.operands):
        return False
    users = _users(op.result)
    if any(u in ACTIVATIONS for u in users):
        return True
    return any(use.owner.name == "stablehlo.multiply" and any(
        u in ACTIVATIONS for u in _users(use.owner.results[0])) for use in op.result.uses)


def _drop_bias(op: Any) -> None:
    dot = next(v for v in op.operands
               if getattr(producer(v), "name", None) == "stablehlo.dot_general")
    replace_results(op, [dot])


# 8. softmax-drops-normalization

def _normalizing(op: Any) -> bool:
    """A divide of an exponential by a broadcast (softmax's normalization)."""
    if op.name != "stablehlo.divide":
        return False
    top, bottom = (getattr(producer(v), "name", None) for v in op.operands)
    return top == "stablehlo.exponential" and bottom == "stablehlo.broadcast_in_dim"


# 9. mixed-dot-accumulates-in-bf16

def _element_type(value: Any) -> str:
    return str(_ir().RankedTensorType(value.type).element_type)


def _mixed_dot(op: Any) -> bool:
    """A dot_general of bfloat16 operands with a float32 result."""
    return op.name == "stablehlo.dot_general" and _shape(op.results[0]) is not None and all(
        _element_type(v) == "bf16" for v in op.operands) and \
        _element_type(op.results[0]) == "f32"


def _narrow_dot(op: Any) -> None:
    """The dot's float32 result rounded to bfloat16 (``reduce_precision`` to 8 exponent
    and 7 mantissa bits): what a bfloat16 result converted to float32 holds. (A
    ``convert`` of a bfloat16-result dot would not do: XLA folds it into a float32 dot.)"""
    ir = _ir()
    i32 = ir.IntegerType.get_signless(32)
    rounded = ir.Operation.create(
        "stablehlo.reduce_precision", results=[op.results[0].type], operands=[op.results[0]],
        attributes={"exponent_bits": ir.IntegerAttr.get(i32, 8),
                    "mantissa_bits": ir.IntegerAttr.get(i32, 7)},
        ip=ir.InsertionPoint.after(op))
    op.results[0].replace_all_uses_except(rounded.results[0], rounded)


# 10. layernorm-variance-uncentered

def _name(value: Any) -> str | None:
    return getattr(producer(value), "name", None)


def _centered_square(op: Any) -> Any:
    """``x`` of a multiply of ``x - broadcast(reduce(x ...) / n)`` by itself (a layer
    norm's variance term), else None."""
    if op.name != "stablehlo.multiply" or op.operands[0] != op.operands[1] or \
            _name(op.operands[0]) != "stablehlo.subtract":
        return None
    x, spread = producer(op.operands[0]).operands
    if _name(spread) != "stablehlo.broadcast_in_dim":
        return None
    mean = producer(spread).operands[0]
    if _name(mean) != "stablehlo.divide" or _name(producer(mean).operands[0]) != \
            "stablehlo.reduce":
        return None
    return x


def _uncenter(op: Any) -> None:
    x = _centered_square(op)
    op.operands[0] = x
    op.operands[1] = x


# 11. pool-ignores-low-padding

def _padding(op: Any) -> list[list[int]] | None:
    """The (low, high) padding per dimension of a reduce_window with a low padding in
    (0, window - 1) along some dimension, else None."""
    if op.name != "stablehlo.reduce_window" or "padding" not in op.attributes:
        return None
    import numpy as np

    pads = np.array(_ir().DenseIntElementsAttr(op.attributes["padding"])).reshape(-1, 2)
    window = _ints(op, "window_dimensions")
    if not any(0 < lo < w - 1 for (lo, _), w in zip(pads.tolist(), window)):
        return None
    return pads.tolist()


def _pad_high(op: Any) -> None:
    import numpy as np

    pads = np.array([[0, lo + hi] for lo, hi in _padding(op)], np.int64)
    op.attributes["padding"] = _ir().DenseIntElementsAttr.get(pads)


# 12. loop-dot-drops-last-trip, loop-reduce-drops-tail, loop-update-slice-ignores-trip

def _module_of(op: Any) -> Any:
    while op.parent is not None:
        op = op.parent
    return op


def _callee(op: Any) -> str:
    return _ir().FlatSymbolRefAttr(op.attributes["callee"]).value


def _calls(module: Any, name: str) -> list[Any]:
    """The func.call operations of ``module`` that call @``name``."""
    return [op for op in walk(module) if op.name == "func.call" and _callee(op) == name]


def _function(module: Any, name: str) -> Any:
    return next(op.operation for op in module.regions[0].blocks[0].operations
                if op.operation.name == "func.func" and
                _ir().StringAttr(op.operation.attributes["sym_name"]).value == name)


def in_loop(op: Any, depth: int = 0) -> bool:
    """Whether ``op`` runs inside a stablehlo.while's body or condition, directly or in a
    function called (through func.call, any depth) from one."""
    parent = op.parent
    while parent is not None and depth < 16:
        if parent.name == "stablehlo.while":
            return True
        if parent.name == "func.func":
            name = _ir().StringAttr(parent.attributes["sym_name"]).value
            return any(in_loop(call, depth + 1) for call in _calls(_module_of(parent), name))
        parent = parent.parent
    return False


def _ops_in(op: Any, depth: int = 0) -> list[Any]:
    """The operations nested in ``op`` and in the functions they call (any depth)."""
    found = []
    for child in walk(op):
        found.append(child)
        if child.name == "func.call" and depth < 16:
            found += _ops_in(_function(_module_of(op), _callee(child)), depth + 1)
    return found


def _loop_with_dot(op: Any) -> bool:
    """A stablehlo.while whose body computes a dot_general (in a called function too),
    with a condition ``i < constant``."""
    return op.name == "stablehlo.while" and _bound(op) is not None and any(
        child.name == "stablehlo.dot_general" for child in _ops_in(op))


def _bound(loop: Any) -> Any:
    """The ``compare LT`` of a while condition whose second operand is a constant."""
    for op in loop.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "stablehlo.compare" and _name(op.operands[1]) == "stablehlo.constant" and \
                "LT" in str(op.attributes["comparison_direction"]):
            return op
    return None


def _scalar(like: Any, value: int, before: Any) -> Any:
    """A ``stablehlo.constant`` of ``like``'s (integer scalar tensor) type holding
    ``value``, inserted before operation ``before``."""
    import numpy as np

    ir = _ir()
    width = ir.IntegerType(ir.RankedTensorType(like.type).element_type).width
    return ir.Operation.create(
        "stablehlo.constant", results=[like.type],
        attributes={"value": ir.DenseElementsAttr.get(np.array(value, f"int{width}"),
                                                      type=like.type)},
        ip=ir.InsertionPoint(before)).results[0]


def _one_trip_fewer(loop: Any) -> None:
    import numpy as np

    compare = _bound(loop)
    bound = producer(compare.operands[1])
    value = int(np.array(_ir().DenseIntElementsAttr(bound.attributes["value"])).reshape(()))
    compare.operands[1] = _scalar(compare.operands[1], value - 1, compare)


def _loop_reduce_tail(op: Any) -> int | None:
    """The first reduced dimension (of 2 or more elements) of a reduce in a loop body."""
    if op.name != "stablehlo.reduce" or not in_loop(op):
        return None
    dims, shape = _ints(op, "dimensions"), _shape(_reduce_inputs(op)[0])
    if not dims or shape is None or shape[dims[0]] < 2:
        return None
    return dims[0]


def _drop_loop_reduce_tail(op: Any) -> None:
    dim = _loop_reduce_tail(op)
    for i, value in enumerate(_reduce_inputs(op)):
        op.operands[i] = drop_last(value, dim, op)


def _reads_itself(op: Any) -> bool:
    """A dynamic_update_slice in a loop body whose update a dynamic_slice of its own
    operand feeds (within 4 ops), with a start that is not a constant."""
    if op.name != "stablehlo.dynamic_update_slice" or not in_loop(op) or all(
            _name(v) == "stablehlo.constant" for v in list(op.operands)[2:]):
        return False
    frontier, buffer = [op.operands[1]], op.operands[0]
    for _ in range(4):
        ops = [producer(v) for v in frontier]
        if any(p is not None and p.name == "stablehlo.dynamic_slice" and p.operands[0] == buffer
               for p in ops):
            return True
        frontier = [v for p in ops if p is not None for v in p.operands]
    return False


def _start_at_zero(op: Any) -> None:
    for k in range(2, len(op.operands)):
        if _name(op.operands[k]) != "stablehlo.constant":
            op.operands[k] = _scalar(op.operands[k], 0, op)


# 13. dot-/reduce-reads-wide-transpose-untransposed, broadcast-dot-drops-tail-tile

#: The tile these mutants' kernels break past.
WIDE = 64


def _wide_transposed(op: Any) -> list[int]:
    """The operands (indices) of a dot_general or reduce that a non-identity transpose
    produces and that are contracted or reduced along a dimension of ``WIDE`` or more
    elements (a reduce keeping some dimension)."""
    from jaxlib.mlir.dialects import stablehlo

    if op.name == "stablehlo.dot_general":
        numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
        summed = [list(numbers.lhs_contracting_dimensions),
                  list(numbers.rhs_contracting_dimensions)]
    elif op.name == "stablehlo.reduce":
        inputs = _reduce_inputs(op)
        dims = _ints(op, "dimensions")
        shape = _shape(inputs[0])
        if shape is None or len(dims) == len(shape):
            return []
        summed = [dims] * len(inputs)
    else:
        return []
    found = []
    for i, dims in enumerate(summed):
        value = op.operands[i]
        shape = _shape(value)
        if _name(value) != "stablehlo.transpose" or shape is None:
            continue
        perm = _ints(producer(value), "permutation")
        if perm != sorted(perm) and any(shape[d] >= WIDE for d in dims):
            found.append(i)
    return found


def _untransposed(op: Any) -> None:
    for i in _wide_transposed(op):
        value = op.operands[i]
        source = producer(value).operands[0]
        op.operands[i] = _ir().Operation.create("stablehlo.reshape", results=[value.type],
                                                operands=[source],
                                                ip=_ir().InsertionPoint(op)).results[0]


def _broadcast_contracting(op: Any) -> tuple[int, int] | None:
    """(lhs, rhs) first contracting dimensions of a dot_general with an operand a
    broadcast_in_dim produces, when they are longer than ``WIDE``."""
    from jaxlib.mlir.dialects import stablehlo

    if op.name != "stablehlo.dot_general" or not any(
            _name(v) == "stablehlo.broadcast_in_dim" for v in op.operands):
        return None
    numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)
    shape = _shape(op.operands[0])
    if not lhs or shape is None or _shape(op.operands[1]) is None or shape[lhs[0]] <= WIDE:
        return None
    return lhs[0], rhs[0]


def _first_tile(op: Any) -> None:
    ir = _ir()
    for i, dim in enumerate(_broadcast_contracting(op)):
        value = op.operands[i]
        shape = _shape(value)
        limits = shape[:dim] + [WIDE] + shape[dim + 1:]
        etype = ir.RankedTensorType(value.type).element_type
        op.operands[i] = _create("stablehlo.slice", value, ir.RankedTensorType.get(limits, etype),
                                 op, start_indices=[0] * len(shape), limit_indices=limits,
                                 strides=[1] * len(shape))


MUTANTS = {
    "fused-reduce-drops-tail": (
        Mutation(lambda op: _reduce_tail(op) is not None, _drop_reduce_tail),
        "A reduce whose input an elementwise op produces skips the last index of its first "
        "reduced dimension (a fused reduction's tail loop dropped).",
        "test_programs: test_integer_programs or test_float_programs or test_pinned_compositions; "
        "test_models: test_model and (mlp_training_step or transformer_block)"),
    "fused-dot-drops-last-contracting": (
        Mutation(lambda op: _contracting(op) is not None, _drop_last_contracting),
        "A dot_general with an elementwise producer skips the last index of its first "
        "contracting dimension (a fused matmul's remainder lost).",
        "test_programs: test_integer_programs or test_float_programs or test_pinned_compositions; "
        "test_models: test_model and (mlp_training_step or transformer_block)"),
    "multi-output-aliasing": (
        Mutation(lambda op: _aliased_pair(op) is not None, _alias),
        "Two computed results of @main of one type (a dynamic_update_slice's first) share a "
        "buffer: the second returns the first's value (multi-output fusion aliasing).",
        "test_programs: test_data_movement_programs or test_integer_programs or test_pinned_compositions; "
        "test_models: test_model and (mlp_training_step or rnn_scan)"),
    "fused-broadcast-reversed": (
        Mutation(lambda op: _reversed_dim(op) is not None, _reverse_operand),
        "A broadcast_in_dim read by an elementwise op reads its operand reversed along its "
        "first dimension of size >= 2 (a fused broadcast's index map wrong).",
        "test_programs: test_integer_programs or test_float_programs or test_pinned_compositions; "
        "test_models: test_model and (mlp_training_step or transformer_block or conv_block)"),
    "strided-conv-reverses-kernel": (
        Mutation(lambda op: _strided_kernel_dim(op) is not None, _reverse_kernel),
        "A convolution with a window stride above 1 reads its kernel reversed along its "
        "first spatial dimension (a strided kernel path computing a convolution where "
        "StableHLO's is a cross-correlation); stride-1 convolutions are right.",
        "test_programs: test_integer_programs; test_programs_spmd: test_spmd_generated_programs"),
    "epilogue-drops-bias": (
        Mutation(_epilogue_bias, _drop_bias),
        "A dot_general's epilogue (bias add, then a scale or not, then tanh, logistic or "
        "ReLU) loses its bias: a fused matmul epilogue that skips the add.",
        "test_programs: test_float_programs"),
    "softmax-drops-normalization": (
        Mutation(_normalizing, lambda op: replace_results(op, [op.operands[0]])),
        "A softmax's division of exp(x - max) by the broadcast sum is skipped: a fused "
        "softmax kernel that returns the unnormalized exponentials.",
        "test_programs: test_float_programs"),
    "mixed-dot-accumulates-in-bf16": (
        Mutation(_mixed_dot, _narrow_dot),
        "A dot_general of bfloat16 operands with a float32 result type "
        "(preferred_element_type=float32) returns its bfloat16-rounded result: a "
        "mixed-precision matmul that does not keep the float32 accumulator it is asked for.",
        "test_programs: test_bfloat16_programs"),
    "layernorm-variance-uncentered": (
        Mutation(lambda op: _centered_square(op) is not None, _uncenter),
        "A layer norm's variance squares x instead of x - mean (the square of the centered "
        "value reads the subtraction's operand): a fused normalization whose variance "
        "skips the centering.",
        "test_programs: test_float_programs"),
    "pool-ignores-low-padding": (
        Mutation(lambda op: _padding(op) is not None, _pad_high),
        "A reduce_window with low padding (a 'SAME'-padded pooling window of 3 or more) "
        "pads only at the high end: each window starts at the unpadded origin, one or more "
        "elements late (a pooling kernel that drops the padding's offset).",
        "test_programs: test_float_programs"),
    "loop-dot-drops-last-trip": (
        Mutation(_loop_with_dot, _one_trip_fewer),
        "A while loop whose body computes a dot_general runs one trip fewer (a software-"
        "pipelined loop that drops its last iteration); loops without a dot are right.",
        "test_programs: test_integer_programs or test_float_programs"),
    "loop-reduce-drops-tail": (
        Mutation(lambda op: _loop_reduce_tail(op) is not None, _drop_loop_reduce_tail),
        "A reduce inside a while loop's body skips the last index of its first reduced "
        "dimension (a loop-nested reduction kernel that loses its tail).",
        "test_programs: test_integer_programs or test_float_programs"),
    "loop-update-slice-ignores-trip": (
        Mutation(_reads_itself, _start_at_zero),
        "A dynamic_update_slice inside a while loop's body, writing back a slice of the "
        "same buffer, writes at offset 0 wherever its start is computed (the start's "
        "dependence on the induction variable lost).",
        "test_programs: test_integer_programs or test_float_programs"),
    "dot-reads-wide-transpose-untransposed": (
        Mutation(lambda op: bool(_wide_transposed(op)) and op.name == "stablehlo.dot_general",
                 _untransposed),
        "A dot_general reads an operand a transpose produces, contracted along 64 or more "
        "elements, in its untransposed order (the transpose folded into the operand's "
        "layout but not applied).",
        "test_programs: test_integer_programs or test_float_programs"),
    "reduce-reads-wide-transpose-untransposed": (
        Mutation(lambda op: bool(_wide_transposed(op)) and op.name == "stablehlo.reduce",
                 _untransposed),
        "A reduce of a transpose along a reduced dimension of 64 or more elements reads "
        "the transpose's operand in its untransposed order.",
        "test_programs: test_integer_programs or test_float_programs"),
    "broadcast-dot-drops-tail-tile": (
        Mutation(lambda op: _broadcast_contracting(op) is not None, _first_tile),
        "A dot_general with an operand a broadcast_in_dim produces contracts only the "
        "first 64 indices of a longer contracting dimension (a fused broadcast-matmul "
        "kernel that runs one tile).",
        "test_programs: test_integer_programs or test_float_programs"),
    "partitioner-forgets-reduction": (
        Mutation(lambda op: _partial(op) is not None, _manual),
        "A reduce or dot_general summing over a sharded dimension of an SPMD program gets "
        "no all-reduce: each device returns its local partial result (the partitioner "
        "forgot the collective).",
        "test_programs_spmd: test_spmd_composition or test_spmd_generated_programs; "
        "test_models: data_parallel"),
}


def _register():
    for name, (mutation, doc, targets) in MUTANTS.items():
        add(name, "hlo", rewriting(name, mutation, doc), targets,
            devices=4 if name == "partitioner-forgets-reduction" else 2)


_register()
