"""Structural StableHLO rewrites for mutants and broken backends, through jaxlib's MLIR
bindings (``jaxlib.mlir``): programs are parsed into an ``ir.Module``, the operations a
mutation selects are edited (attributes, operands, results, op kind), and the module is
printed again. Nothing here matches printed attribute syntax, so a jax release that
prints an attribute differently (jax 0.12 prints ``replica_groups`` as
``#stablehlo.replica_group_mesh_axes<...>``) cannot silently turn a mutant into the
healthy backend.

A :class:`Mutation` is ``select`` (which operations it edits) and ``edit`` (what it does
to one). :func:`apply` returns None for a program with no selected operation, and
raises :class:`NoOpRewrite` (naming the mutant) when it selected operations but the
re-printed module is unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


class NoOpRewrite(RuntimeError):
    """A mutant's rewrite selected operations but left the program unchanged (or, over a
    whole run, changed no program): the mutant would pass as the healthy backend."""


@dataclasses.dataclass(frozen=True)
class Mutation:
    """``select(op) -> bool`` picks the operations to edit (``ir.Operation``, any depth);
    ``edit(op)`` changes one in place (it may erase it after replacing its results)."""

    select: Callable[[Any], bool]
    edit: Callable[[Any], None]


def named(*names: str) -> Callable[[Any], bool]:
    """A ``select`` of the operations with one of these names (``"stablehlo.add"``...)."""
    if not names or not all(isinstance(n, str) and "." in n for n in names):
        raise ValueError(f"argument 'names': expected dialect-qualified op names, got {names!r}")
    return lambda op: op.name in names


def inside(parents: tuple[str, ...], select: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``select`` restricted to operations nested in an op named in ``parents``."""
    def within(op):
        if not select(op):
            return False
        parent = op.parent
        while parent is not None:
            if parent.name in parents:
                return True
            parent = parent.parent
        return False
    return within


def walk(op: Any) -> Iterator[Any]:
    """The operations nested in ``op`` (an ``ir.Operation``), any depth, outer first."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from walk(child)


def _text(computation: str | bytes | Any) -> str | bytes:
    if isinstance(computation, (str, bytes)):
        return computation
    raise TypeError(f"argument 'computation': expected StableHLO text (str) or MLIR "
                    f"bytecode/text (bytes), got {type(computation).__name__}")


def _print(module: Any) -> str:
    return module.operation.get_asm(enable_debug_info=False)


def apply(computation: str | bytes, mutation: Mutation, mutant: str) -> str | None:
    """``computation`` (StableHLO text, or bytes of text or MLIR bytecode) with
    ``mutation`` applied to every selected operation, as StableHLO text; None when no
    operation is selected. Raises :class:`NoOpRewrite` naming ``mutant`` when operations
    were selected but the printed module did not change, TypeError for a computation that
    is not str/bytes, and jaxlib's MLIRError for text that does not parse."""
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir

    text = _text(computation)
    with mlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        chosen = [op for op in walk(module.operation) if mutation.select(op)]
        if not chosen:
            return None
        before = _print(module)
        for op in chosen:
            mutation.edit(op)
        after = _print(module)
    if after == before:
        raise NoOpRewrite(f"mutant {mutant}: its rewrite selected {len(chosen)} operation(s) "
                          f"({', '.join(sorted({op.name for op in chosen}))}) but left the "
                          f"program unchanged")
    return after


# Edits. Each takes an ir.Operation and runs inside apply's context and location.

def replace_results(op: Any, values: list[Any]) -> None:
    """Every use of ``op``'s results replaced by ``values`` (one per result); ``op`` erased."""
    if len(values) != len(op.results):
        raise ValueError(f"argument 'values': {op.name} has {len(op.results)} results, "
                         f"got {len(values)} values")
    for result, value in zip(op.results, values):
        result.replace_all_uses_with(value)
    op.erase()


def forward_operands(op: Any) -> None:
    """``op``'s results replaced by its operands (result i by operand i): a collective whose
    every device keeps its own contribution."""
    replace_results(op, list(op.operands)[:len(op.results)])


def rename(new_name: str) -> Callable[[Any], None]:
    """An edit that recreates the operation as ``new_name`` with the same operands,
    result types and attributes (ops without regions only)."""
    def edit(op):
        from jaxlib.mlir import ir

        if len(op.regions):
            raise ValueError(f"rename to {new_name}: {op.name} has regions")
        new = ir.Operation.create(new_name, results=[r.type for r in op.results],
                                  operands=list(op.operands),
                                  attributes={a.name: a.attr for a in op.attributes},
                                  loc=op.location, ip=ir.InsertionPoint(op))
        replace_results(op, list(new.results))
    return edit


def set_attribute(name: str, make: Callable[[Any, Any], Any]) -> Callable[[Any], None]:
    """An edit that sets attribute ``name`` to ``make(op, old attribute)``."""
    def edit(op):
        op.attributes[name] = make(op, op.attributes[name])
    return edit


def constant(values: np.ndarray, like: Any, before: Any) -> Any:
    """A new ``stablehlo.constant`` of ``values`` (one value: a splat; else reshaped to
    ``like``'s shape) in the element type of the tensor type ``like`` (bool, integer or,
    splat only, float), inserted before operation ``before``; returns its result. Raises
    ValueError for a non-splat float constant."""
    from jaxlib.mlir import ir

    tensor = ir.RankedTensorType(like)
    etype = tensor.element_type
    values = np.asarray(values)
    if values.size == 1:
        if isinstance(etype, ir.IntegerType) and etype.width == 1:
            element = ir.BoolAttr.get(bool(values.flat[0]))
        elif isinstance(etype, (ir.IntegerType, ir.IndexType)):
            element = ir.IntegerAttr.get(etype, int(values.flat[0]))
        else:
            element = ir.FloatAttr.get(etype, float(values.flat[0]))
        attr = ir.DenseElementsAttr.get_splat(tensor, element)
    elif isinstance(etype, ir.IntegerType) and etype.width in (8, 16, 32, 64):
        attr = ir.DenseElementsAttr.get(
            values.astype(f"int{etype.width}").reshape(tensor.shape), type=etype)
    else:
        raise ValueError(f"argument 'values': {values.size} values for {tensor}: only splats "
                         f"and 8- to 64-bit integer tensors")
    op = ir.Operation.create("stablehlo.constant", results=[tensor],
                             attributes={"value": attr}, ip=ir.InsertionPoint(before))
    return op.results[0]


def constant_value(value: Any) -> np.ndarray | None:
    """The elements of ``value`` when a ``stablehlo.constant`` defines it (integer
    elements as int64, float elements as float64), else None."""
    from jaxlib.mlir import ir

    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.name != "stablehlo.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, (ir.DenseIntElementsAttr, ir.DenseFPElementsAttr)):
        return None
    shape = ir.ShapedType(attr.type).shape
    dtype = np.int64 if isinstance(attr, ir.DenseIntElementsAttr) else np.float64
    if attr.is_splat:
        return np.full(shape, attr.get_splat_value().value, dtype)
    return np.array(attr).astype(dtype).reshape(shape)


def body_ops(op: Any) -> list[Any]:
    """The operations of ``op``'s first region's first block, terminator excluded."""
    ops = [o.operation for o in op.regions[0].blocks[0].operations]
    return ops[:-1]


def comparison_direction(op: Any) -> str:
    """``LT``, ``GE``... of a ``stablehlo.compare`` (or any op with the attribute)."""
    from jaxlib.mlir.dialects import stablehlo

    return stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value


def set_comparison_direction(direction: str) -> Callable[[Any], None]:
    """An edit that sets a compare's ``comparison_direction`` to ``direction``."""
    from jaxlib.mlir.dialects import stablehlo

    return set_attribute("comparison_direction",
                         lambda op, old: stablehlo.ComparisonDirectionAttr.get(direction))
