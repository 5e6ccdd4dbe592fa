"""Mutation operator ``hlo`` for the ops of ``test_stablehlo_ops``: StableHLO rewrites
before compile, each wrong the way a backend's lowering of one op family goes wrong
(reduce_precision rounding toward zero, reverse of one dimension too few, batch_norm with
a wrong epsilon, select_and_scatter picking the last of tied maxima,
logistic compiled as tanh, cholesky factoring the upper triangle, rng_bit_generator
not advancing its state, map reading its first operand twice, composite with swapped
operands, dynamic_pad's low padding at the high end).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.mutants.stablehlo_rewrite import (
    Mutation, comparison_direction, constant, constant_value, inside, named, rename,
    replace_results, set_attribute, set_comparison_direction)
from tests.mutants.base import rewriting
from tests.mutants.catalog import add
from tests.mutants.hlo import masked_bits

AREA = "test_stablehlo_ops"


def _ir() -> Any:
    from jaxlib.mlir import ir

    return ir


def _f32_reduce_precision(op: Any) -> bool:
    return (op.name == "stablehlo.reduce_precision" and
            str(_ir().ShapedType(op.results[0].type).element_type) == "f32")


def _truncating_reduce_precision(op: Any) -> None:
    """f32 reduce_precision that clears the dropped mantissa bits (round toward zero;
    exponent range unchanged)."""
    mantissa = _ir().IntegerAttr(op.attributes["mantissa_bits"]).value
    replace_results(op, [masked_bits(op.operands[0], -(1 << (23 - mantissa)), None, op)])


def _dimensions(op: Any) -> list[int]:
    return list(_ir().DenseI64ArrayAttr(op.attributes["dimensions"]))


def _one_dimension_less(op: Any, old: Any) -> Any:
    """``reverse`` of dims [d0, ..., dk] reverses [d0, ..., dk-1] only."""
    return _ir().DenseI64ArrayAttr.get(_dimensions(op)[:-1])


def _epsilon_plus_ten(op: Any, old: Any) -> Any:
    ir = _ir()
    return ir.FloatAttr.get(ir.FloatAttr(old).type, ir.FloatAttr(old).value + 10)


def _f32_epsilon(op: Any) -> bool:
    return (op.name.startswith("stablehlo.batch_norm_") and "epsilon" in op.attributes and
            str(_ir().FloatAttr(op.attributes["epsilon"]).type) == "f32")


def _lower(op: Any) -> bool:
    return op.name == "stablehlo.cholesky" and "lower" in op.attributes and \
        _ir().BoolAttr(op.attributes["lower"]).value


def _two_distinct_operands(op: Any) -> bool:
    return len(op.operands) == 2 and op.operands[0] != op.operands[1]


def _read_first_twice(op: Any) -> None:
    op.operands[1] = op.operands[0]


def _state_not_advanced(op: Any) -> None:
    """rng_bit_generator's output state replaced by its initial state."""
    op.results[0].replace_all_uses_with(op.operands[0])


def _swap_operands(op: Any) -> None:
    first, second = op.operands[0], op.operands[1]
    op.operands[0], op.operands[1] = second, first


def _constant_padding(op: Any) -> bool:
    return (op.name == "stablehlo.dynamic_pad" and
            constant_value(op.operands[2]) is not None and
            constant_value(op.operands[3]) is not None)


def _low_padding_as_high(op: Any) -> None:
    """``dynamic_pad`` with constant low/high operands: dimension 0's low padding moved
    to its high padding."""
    low, high = constant_value(op.operands[2]), constant_value(op.operands[3])
    new_low, new_high = low.copy(), high.copy()
    new_low[0], new_high[0] = 0, low[0] + high[0]
    op.operands[2] = constant(new_low, op.operands[2].type, op)
    op.operands[3] = constant(new_high, op.operands[3].type, op)


def _register():
    mutations = [
        ("hlo-reduce-precision-toward-zero",
         Mutation(_f32_reduce_precision, _truncating_reduce_precision),
         "float32 reduce_precision rounds toward zero (truncates the mantissa).",
         "reduce_precision and float32"),
        ("hlo-reverse-one-dim-less",
         Mutation(lambda op: op.name == "stablehlo.reverse" and len(_dimensions(op)) > 1,
                  set_attribute("dimensions", _one_dimension_less)),
         "reverse leaves its last listed dimension unreversed.", "reverse and float32"),
        ("hlo-batch-norm-wrong-epsilon",
         Mutation(_f32_epsilon, set_attribute("epsilon", _epsilon_plus_ten)),
         "batch_norm_* use a wrong epsilon (10.001 for 0.001: 10 added).",
         "batch_norm and float32"),
        ("hlo-select-and-scatter-last-max",
         Mutation(inside(("stablehlo.select_and_scatter",), lambda op: (
             op.name == "stablehlo.compare" and comparison_direction(op) == "GE")),
                  set_comparison_direction("GT")),
         "select_and_scatter selects with GT: the last of tied maxima.",
         "select_and_scatter and int8"),
        ("hlo-logistic-as-tanh",
         Mutation(named("stablehlo.logistic"), rename("stablehlo.tanh")),
         "logistic compiles as tanh.", "logistic and float32"),
        ("hlo-cholesky-upper",
         Mutation(_lower, set_attribute(
             "lower", lambda op, old: _ir().BoolAttr.get(False))),
         "cholesky factors the upper triangle whatever ``lower`` says.",
         "cholesky and float32"),
        ("hlo-map-body-reads-first-twice",
         Mutation(inside(("stablehlo.map",), lambda op: (
             op.name == "stablehlo.add" and _two_distinct_operands(op))), _read_first_twice),
         "map bodies read their first operand twice (x + x instead of x + y).",
         "map and int32"),
        ("hlo-rng-state-not-advanced",
         Mutation(named("stablehlo.rng_bit_generator"), _state_not_advanced),
         "rng_bit_generator returns its initial state as the new state (the counter never "
         "advances: every call repeats its bits).",
         "test_rng_bit_generator and THREE_FRY and uint32"),
        ("hlo-composite-operands-swapped",
         Mutation(lambda op: op.name == "stablehlo.composite" and
                  _two_distinct_operands(op), _swap_operands),
         "composite calls its decomposition with its two operands swapped.",
         "composite and float32"),
        ("hlo-dynamic-pad-low-as-high",
         Mutation(_constant_padding, _low_padding_as_high),
         "dynamic_pad puts dimension 0's low padding at its high end (the shape is right, "
         "the values shifted).", "dynamic_pad and int32"),
    ]
    for name, mutation, doc, select in mutations:
        add(name, "hlo", rewriting(name, mutation, doc), f"{AREA}: {select}")


_register()
