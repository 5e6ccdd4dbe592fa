"""Mutation operator ``hlo``: a StableHLO rewrite before compile (a miscompile).

Each mutant compiles a rewritten program: an op swapped for its neighbour, a compare
direction moved by one (wrong only on exact ties), a reduction's init changed (wrong
only when every input is on one side of it), a constant nudged, a conversion rounded
the wrong way (always, or only on exact ties).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.mutants.stablehlo_rewrite import (
    Mutation, body_ops, comparison_direction, constant, constant_value, inside, named, rename,
    replace_results, set_comparison_direction)
from tests.mutants.base import rewriting
from tests.mutants.catalog import add


def _swap(old: str, new: str) -> Mutation:
    """Every ``old`` op (at any depth, reduction bodies included) recreated as ``new``."""
    return Mutation(named(old), rename(new))


def _compare(old: str, new: str) -> Mutation:
    """Every ``stablehlo.compare`` with direction ``old`` compares with ``new``."""
    return Mutation(lambda op: op.name == "stablehlo.compare" and
                    comparison_direction(op) == old, set_comparison_direction(new))


def _reduces_with(applies: str):
    """A select of ``stablehlo.reduce`` ops whose body is one ``applies`` op and with an
    init that is a constant."""
    def select(op):
        if op.name != "stablehlo.reduce":
            return False
        body = body_ops(op)
        inits = list(op.operands)[len(op.operands) // 2:]
        return (len(body) == 1 and body[0].name == applies and
                any(constant_value(v) is not None for v in inits))
    return select


def _reduce_inits(applies: str, value: float) -> Mutation:
    """Every constant init of a ``reduce`` whose body is one ``applies`` op set to
    ``value``."""
    def edit(op):
        n = len(op.operands) // 2
        for i in range(n, 2 * n):
            init = op.operands[i]
            if constant_value(init) is not None:
                op.operands[i] = constant(np.array(value), init.type, op)
    return Mutation(_reduces_with(applies), edit)


def _is_convert(op: Any, source: str, result: str) -> bool:
    if op.name != "stablehlo.convert":
        return False
    return (str(_element_type(op.operands[0].type)) == source and
            str(_element_type(op.results[0].type)) == result)


def _element_type(t: Any) -> Any:
    from jaxlib.mlir import ir

    return ir.ShapedType(t).element_type


def _bits_op(name: str, operand: Any, result_type: Any, before: Any) -> Any:
    from jaxlib.mlir import ir

    operands = operand if isinstance(operand, list) else [operand]
    return ir.Operation.create(name, results=[result_type], operands=operands,
                               ip=ir.InsertionPoint(before)).results[0]


def masked_bits(value: Any, mask: int, bias: int | None, before: Any) -> Any:
    """``value`` (a float32 tensor) bitcast to int32, plus ``bias`` (None: nothing),
    AND ``mask``, bitcast back: new ops inserted before operation ``before``."""
    from jaxlib.mlir import ir

    f32 = ir.RankedTensorType(value.type)
    i32 = ir.RankedTensorType.get(f32.shape, ir.IntegerType.get_signless(32))
    bits = _bits_op("stablehlo.bitcast_convert", value, i32, before)
    if bias is not None:
        bits = _bits_op("stablehlo.add", [bits, constant(np.array(bias), i32, before)],
                        i32, before)
    bits = _bits_op("stablehlo.and", [bits, constant(np.array(mask), i32, before)], i32,
                    before)
    return _bits_op("stablehlo.bitcast_convert", bits, f32, before)


def _bf16_rounding(bias: int | None) -> Mutation:
    """f32->bf16 converts that truncate (``bias`` None) or add ``bias`` to the bit pattern
    before truncating (0x8000: round half away from zero, wrong only on exact ties)."""
    def edit(op):
        op.operands[0] = masked_bits(op.operands[0], -65536, bias, op)
    return Mutation(lambda op: _is_convert(op, "f32", "bf16"), edit)


NUDGED_ONE = 1.0009765625


def _splat_one(op: Any) -> bool:
    if op.name != "stablehlo.constant":
        return False
    if str(_element_type(op.results[0].type)) not in ("f32", "f64"):
        return False
    values = constant_value(op.results[0])
    return values is not None and values.size > 0 and bool(np.all(values == 1.0))


def _nudge_one() -> Mutation:
    """Float32/64 constants whose every element is 1.0 become 1 + 2**-10 (an
    approximation constant off)."""
    def edit(op):
        replace_results(op, [constant(np.array(NUDGED_ONE), op.results[0].type, op)])
    return Mutation(_splat_one, edit)


ELEMENTWISE = "test_kernels_elementwise"


def _register():
    swaps = [
        ("hlo-add-to-subtract", "stablehlo.add", "stablehlo.subtract",
         "test_execute: test_elementwise and add-int32"),
        ("hlo-multiply-to-add", "stablehlo.multiply", "stablehlo.add",
         "test_execute: test_elementwise and multiply-float32"),
        ("hlo-max-to-min", "stablehlo.maximum", "stablehlo.minimum",
         "test_kernels_reduce: test_reduce and max-float32"),
        ("hlo-divide-to-multiply", "stablehlo.divide", "stablehlo.multiply",
         f"{ELEMENTWISE}: test_float_special_values and divide-float32"),
        ("hlo-exp-to-expm1", "stablehlo.exponential", "stablehlo.exponential_minus_one",
         f"{ELEMENTWISE}: test_float_special_values and exp-float32"),
        ("hlo-floor-to-ceil", "stablehlo.floor", "stablehlo.ceil",
         f"{ELEMENTWISE}: test_float_special_values and floor-float32"),
        ("hlo-round-even-to-afz", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
         f"{ELEMENTWISE}: test_float_special_values and round_nearest_even-float32"),
        ("hlo-and-to-or", "stablehlo.and", "stablehlo.or",
         "test_kernels_reduce: test_reduce_bool"),
        ("hlo-reduce-sum-as-max", "applies stablehlo.add", "applies stablehlo.maximum",
         "test_kernels_reduce: test_reduce and sum-int32"),
        ("hlo-compare-lt-to-le", "compare LT", "compare LE",
         "test_kernels_indexing: test_sort_is_stable_with_nan_last and int32"),
        ("hlo-compare-lt-to-gt", "compare LT", "compare GT",
         "test_kernels_indexing: test_sort_is_stable_with_nan_last and float32"),
        ("hlo-compare-gt-to-ge", "compare GT", "compare GE",
         "test_kernels_reduce: test_arg_reduction_picks_the_first_of_ties and int32"),
    ]
    for name, old, new, targets in swaps:
        if old.startswith("compare "):
            mutation = _compare(old.split()[1], new.split()[1])
        elif old.startswith("applies "):
            mutation = Mutation(inside(("stablehlo.reduce",), named(old.split()[1])),
                                rename(new.split()[1]))
        else:
            mutation = _swap(old, new)
        add(name, "hlo", rewriting(name, mutation, f"Every {old} compiles as {new}."), targets)
    add("hlo-sum-init-one", "hlo",
        rewriting("hlo-sum-init-one", _reduce_inits("stablehlo.add", 1),
                  "Sum reductions start from 1 instead of 0."),
        "test_kernels_reduce: test_reduce and sum-int32")
    add("hlo-max-init-zero", "hlo",
        rewriting("hlo-max-init-zero", _reduce_inits("stablehlo.maximum", 0),
                  "Max reductions start from 0 instead of the lowest value (wrong only when "
                  "every input is negative)."),
        "test_kernels_reduce: test_reduce and (max-float32 or max-int32)")
    add("hlo-bf16-convert-truncates", "hlo",
        rewriting("hlo-bf16-convert-truncates", _bf16_rounding(None),
                  "float32->bfloat16 converts truncate (round toward zero)."),
        "test_kernels_convert: test_convert and float32-to-bf16")
    add("hlo-bf16-convert-ties-away", "hlo",
        rewriting("hlo-bf16-convert-ties-away", _bf16_rounding(0x8000),
                  "float32->bfloat16 converts round half away from zero (wrong only on exact "
                  "ties)."),
        "test_kernels_convert: test_convert and float32-to-bf16")
    add("hlo-constant-one-nudged", "hlo",
        rewriting("hlo-constant-one-nudged", _nudge_one(),
                  "Float constants 1.0 compile as 1 + 2**-10."),
        f"{ELEMENTWISE}: test_float_accuracy_in_ulp and float32")


_register()
