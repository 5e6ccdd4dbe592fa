"""Mutation operator ``hlo``: a StableHLO rewrite before compile (a miscompile).

Each mutant compiles a rewritten program: an op swapped for its neighbour, a compare
direction moved by one (wrong only on exact ties), a reduction's init changed (wrong
only when every input is on one side of it), a constant nudged, a conversion rounded
the wrong way (always, or only on exact ties).
"""

from __future__ import annotations

import functools
import re

from tests.mutants.base import rewriting
from tests.mutants.catalog import add


def _swap(old: str, new: str, text: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b(?!_)", new, text)


def _reduce_inits(applies: str, text: str, value: str) -> str:
    """Every constant that is the init of a ``reduce ... applies <applies>`` set to ``value``."""
    names = re.findall(rf"stablehlo\.reduce\(%\w+ init: (%\w+)\) applies stablehlo\.{applies}\b",
                       text)
    for name in set(names):
        text = re.sub(rf"({re.escape(name)} = stablehlo\.constant dense<)[^>]*(> : tensor<\w*?"
                      rf"(\w+)>)", lambda m: m.group(1) + _literal(value, m.group(3)) + m.group(2),
                      text)
    return text


def _literal(value: str, etype: str) -> str:
    if etype.startswith(("f", "bf")):
        return f"{float(value):e}"
    return "true" if etype == "i1" and value != "0" else str(int(float(value)))


_CONVERT = re.compile(r"^(\s*)(%\w+) = stablehlo\.convert (%[\w#]+) : \(tensor<((?:\d+x)*)f32>\)"
                      r" -> tensor<((?:\d+x)*)bf16>$", re.M)


def _bf16_rounding(bias: int | None, text: str) -> str:
    """f32->bf16 converts that truncate (``bias`` None) or add ``bias`` to the bit pattern
    before truncating (0x8000: round half away from zero, wrong only on exact ties)."""
    count = iter(range(10**6))

    def repl(m):
        pad, out, src, shape = m.group(1), m.group(2), m.group(3), m.group(4)
        n, i32, f32 = next(count), f"tensor<{shape}i32>", f"tensor<{shape}f32>"
        lines = [f"%mb{n} = stablehlo.bitcast_convert {src} : ({f32}) -> {i32}"]
        if bias is not None:
            lines += [f"%mc{n} = stablehlo.constant dense<{bias}> : {i32}",
                      f"%mb{n}x = stablehlo.add %mb{n}, %mc{n} : {i32}"]
        last = f"%mb{n}x" if bias is not None else f"%mb{n}"
        lines += [f"%mm{n} = stablehlo.constant dense<-65536> : {i32}",
                  f"%ma{n} = stablehlo.and {last}, %mm{n} : {i32}",
                  f"%mf{n} = stablehlo.bitcast_convert %ma{n} : ({i32}) -> {f32}",
                  f"{out} = stablehlo.convert %mf{n} : ({f32}) -> tensor<{shape}bf16>"]
        return "\n".join(pad + line for line in lines)
    return _CONVERT.sub(repl, text)


def _nudge_one(text: str) -> str:
    """Float constants 1.0 become 1 + 2**-10 (an approximation constant off)."""
    return re.sub(r"dense<1\.000000e\+00> : tensor<((?:\d+x)*)(f32|f64)>",
                  r"dense<1.0009765625> : tensor<\1\2>", text)


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
        add(name, "hlo", rewriting(functools.partial(_swap, old, new),
                                   f"Every {old} compiles as {new}."), targets)
    add("hlo-sum-init-one", "hlo",
        rewriting(functools.partial(_reduce_inits, "add", value="1"),
                  "Sum reductions start from 1 instead of 0."),
        "test_kernels_reduce: test_reduce and sum-int32")
    add("hlo-max-init-zero", "hlo",
        rewriting(functools.partial(_reduce_inits, "maximum", value="0"),
                  "Max reductions start from 0 instead of the lowest value (wrong only when "
                  "every input is negative)."),
        "test_kernels_reduce: test_reduce and (max-float32 or max-int32)")
    add("hlo-bf16-convert-truncates", "hlo",
        rewriting(functools.partial(_bf16_rounding, None),
                  "float32->bfloat16 converts truncate (round toward zero)."),
        "test_kernels_convert: test_convert and float32-to-bf16")
    add("hlo-bf16-convert-ties-away", "hlo",
        rewriting(functools.partial(_bf16_rounding, 0x8000),
                  "float32->bfloat16 converts round half away from zero (wrong only on exact "
                  "ties)."),
        "test_kernels_convert: test_convert and float32-to-bf16")
    add("hlo-constant-one-nudged", "hlo",
        rewriting(_nudge_one, "Float constants 1.0 compile as 1 + 2**-10."),
        f"{ELEMENTWISE}: test_float_accuracy_in_ulp and float32")


_register()
