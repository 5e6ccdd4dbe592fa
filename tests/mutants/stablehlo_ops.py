"""Mutation operator ``hlo`` for the ops of ``test_stablehlo_ops``: StableHLO rewrites
before compile, each wrong the way a backend's lowering of one op family goes wrong
(reduce_precision rounding toward zero, reverse of one dimension too few, batch_norm with
a wrong epsilon, select_and_scatter picking the last of tied maxima,
logistic compiled as tanh, cholesky factoring the upper triangle, rng_bit_generator
not advancing its state, map reading its first operand twice, composite with swapped
operands, dynamic_pad's low padding at the high end).
"""

from __future__ import annotations

import functools
import re

from tests.mutants.base import rewriting
from tests.mutants.catalog import add

AREA = "test_stablehlo_ops"
_REDUCE_PRECISION = re.compile(
    r"^(\s*)(%\w+) = stablehlo\.reduce_precision (%\w+), format = e(\d+)m(\d+) : "
    r"tensor<((?:\d+x)*)f32>$", re.M)


def _truncating_reduce_precision(text: str) -> str:
    """f32 reduce_precision that clears the dropped mantissa bits (round toward zero;
    exponent range unchanged)."""
    count = iter(range(10**6))

    def repl(m):
        pad, out, src, mantissa, shape = (m.group(1), m.group(2), m.group(3), int(m.group(5)),
                                          m.group(6))
        n, i32, f32 = next(count), f"tensor<{shape}i32>", f"tensor<{shape}f32>"
        mask = -(1 << (23 - mantissa))
        return "\n".join(pad + line for line in [
            f"%rb{n} = stablehlo.bitcast_convert {src} : ({f32}) -> {i32}",
            f"%rm{n} = stablehlo.constant dense<{mask}> : {i32}",
            f"%ra{n} = stablehlo.and %rb{n}, %rm{n} : {i32}",
            f"{out} = stablehlo.bitcast_convert %ra{n} : ({i32}) -> {f32}"])
    return _REDUCE_PRECISION.sub(repl, text)


def _reverse_one_dimension_less(text: str) -> str:
    """``reverse`` of dims [0, ..., k] reverses [0, ..., k-1] only."""
    return re.sub(r"(stablehlo\.reverse %\w+, dims = \[[\d, ]*?)(, \d+)\]", r"\1]", text)


def _sub(pattern: str, new: str, text: str) -> str:
    return re.sub(pattern, new, text)


def _low_padding_as_high(text: str) -> str:
    """``dynamic_pad`` with constant ``%lo``/``%hi`` operands: dimension 0's low padding
    moved to its high padding."""
    m = re.search(r"%lo = stablehlo\.constant dense<\[(\d+), (\d+)\]>", text)
    h = re.search(r"%hi = stablehlo\.constant dense<\[(\d+), (\d+)\]>", text)
    if not (m and h):
        return text
    low, high = int(m.group(1)), int(h.group(1))
    text = text.replace(m.group(0), f"%lo = stablehlo.constant dense<[0, {m.group(2)}]>")
    return text.replace(h.group(0), f"%hi = stablehlo.constant dense<[{low + high}, "
                                    f"{h.group(2)}]>")


def _register():
    add("hlo-reduce-precision-toward-zero", "hlo",
        rewriting(_truncating_reduce_precision,
                  "float32 reduce_precision rounds toward zero (truncates the mantissa)."),
        f"{AREA}: reduce_precision and float32")
    add("hlo-reverse-one-dim-less", "hlo",
        rewriting(_reverse_one_dimension_less,
                  "reverse leaves its last listed dimension unreversed."),
        f"{AREA}: reverse and float32")
    add("hlo-batch-norm-wrong-epsilon", "hlo",
        rewriting(functools.partial(_sub, r"epsilon = ([0-9.e+-]+) : f32",
                                    r"epsilon = 1\1 : f32"),
                  "batch_norm_* use a wrong epsilon (10.001 for 0.001: a 1 prefixed)."),
        f"{AREA}: batch_norm and float32")
    add("hlo-select-and-scatter-last-max", "hlo",
        rewriting(functools.partial(_sub, r"comparison_direction GE>", "comparison_direction GT>"),
                  "select_and_scatter selects with GT: the last of tied maxima."),
        f"{AREA}: select_and_scatter and int8")
    add("hlo-logistic-as-tanh", "hlo",
        rewriting(functools.partial(_sub, r'"stablehlo\.logistic"', '"stablehlo.tanh"'),
                  "logistic compiles as tanh."),
        f"{AREA}: logistic and float32")
    add("hlo-cholesky-upper", "hlo",
        rewriting(functools.partial(_sub, r"\{lower = true\}", "{lower = false}"),
                  "cholesky factors the upper triangle whatever ``lower`` says."),
        f"{AREA}: cholesky and float32")
    add("hlo-map-body-reads-first-twice", "hlo",
        rewriting(functools.partial(
            _sub, r'(%s = "stablehlo\.add")\(%a, %b\)', r'\1(%a, %a)'),
                  "map bodies read their first operand twice (x + x instead of x + y)."),
        f"{AREA}: map and int32")
    add("hlo-rng-state-not-advanced", "hlo",
        rewriting(functools.partial(_sub, r"return %output_state, %output",
                                    "return %arg0, %output"),
                  "rng_bit_generator returns its initial state as the new state (the "
                  "counter never advances: every call repeats its bits)."),
        f"{AREA}: test_rng_bit_generator and THREE_FRY and uint32")

    add("hlo-composite-operands-swapped", "hlo",
        rewriting(functools.partial(_sub, r'(stablehlo\.composite "[\w.]+") (%\w+), (%\w+)',
                                    r"\1 \3, \2"),
                  "composite calls its decomposition with its two operands swapped."),
        f"{AREA}: composite and float32")
    add("hlo-dynamic-pad-low-as-high", "hlo",
        rewriting(_low_padding_as_high, "dynamic_pad puts dimension 0's low padding at its "
                  "high end (the shape is right, the values shifted)."),
        f"{AREA}: dynamic_pad and int32")

_register()
