"""StableHLO modules written as text, for ops that jax does not lower (or lowers to
something else: ``logistic``, ``cholesky``, ``triangular_solve``, ``batch_norm_*``,
``map``, ``tuple``, ``if``, ``select_and_scatter``, ``after_all``).

Each builder takes the argument arrays (their shapes and dtypes type the module) and
returns the module text with one public ``@main``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: numpy / ml_dtypes dtype name -> MLIR element type.
ELEMENT = {"bool": "i1", "int4": "i4", "int8": "i8", "int16": "i16", "int32": "i32",
           "int64": "i64", "uint4": "ui4", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32",
           "uint64": "ui64", "bfloat16": "bf16", "float16": "f16", "float32": "f32",
           "float64": "f64", "complex64": "complex<f32>", "complex128": "complex<f64>",
           "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
           "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float8_e4m3fnuz": "f8E4M3FNUZ",
           "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3",
           "float8_e8m0fnu": "f8E8M0FNU"}


def tensor(shape: Sequence[int], dtype: Any) -> str:
    """MLIR tensor type of ``shape`` and ``dtype`` (KeyError naming an unknown dtype)."""
    name = np.dtype(dtype).name
    if name not in ELEMENT:
        raise KeyError(f"dtype {name!r} has no MLIR element type here; known: {sorted(ELEMENT)}")
    return "tensor<" + "".join(f"{d}x" for d in shape) + ELEMENT[name] + ">"


def module(args: Sequence[np.ndarray], results: Sequence[str], body: str) -> str:
    """A module whose ``@main`` takes ``args``' types as ``%arg0..``, returns ``results``
    (MLIR types) and has ``body`` (ending in ``return``)."""
    params = ", ".join(f"%arg{i}: {tensor(a.shape, a.dtype)}" for i, a in enumerate(args))
    return (f"module @stablehlo_ops {{\n  func.func public @main({params}) -> "
            f"({', '.join(results)}) {{\n{body}\n  }}\n}}\n")


def unary(op: str, x: np.ndarray, attrs: str = "") -> str:
    """``op`` (e.g. ``logistic``) of one argument, result of its type."""
    t = tensor(x.shape, x.dtype)
    return module([x], [t], f'    %0 = "stablehlo.{op}"(%arg0) {attrs}: ({t}) -> {t}\n'
                            f"    return %0 : {t}")


def cholesky(a: np.ndarray) -> str:
    """``cholesky`` of ``a`` (..., n, n), ``lower = true``."""
    return unary("cholesky", a, "{lower = true} ")


def triangular_solve(a: np.ndarray, b: np.ndarray) -> str:
    """Solve ``a x = b`` for lower-triangular ``a`` (n, n) and ``b`` (n, k)."""
    ta, tb = tensor(a.shape, a.dtype), tensor(b.shape, b.dtype)
    return module([a, b], [tb], (
        '    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) {left_side = true, lower = true, '
        "unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : "
        f"({ta}, {tb}) -> {tb}\n    return %0 : {tb}"))


def batch_norm(kind: str, x: np.ndarray, *vectors: np.ndarray, epsilon: float) -> str:
    """``batch_norm_<kind>`` (``inference``: x, scale, offset, mean, variance;
    ``training``: x, scale, offset; ``grad``: x, scale, mean, variance, grad_output),
    feature index the last dimension. Results: inference one tensor; training
    (normalized, mean, variance); grad (grad_x, grad_scale, grad_offset)."""
    tx, tv = tensor(x.shape, x.dtype), tensor(vectors[0].shape, x.dtype)
    outs = {"inference": [tx], "training": [tx, tv, tv], "grad": [tx, tv, tv]}[kind]
    args = [x, *vectors]
    names = ", ".join(f"%arg{i}" for i in range(len(args)))
    types = ", ".join(tensor(a.shape, a.dtype) for a in args)
    results = ", ".join(f"%0#{i}" for i in range(len(outs))) if len(outs) > 1 else "%0"
    return module(args, outs, (
        f'    %0{":" + str(len(outs)) if len(outs) > 1 else ""} = "stablehlo.batch_norm_{kind}"'
        f"({names}) {{epsilon = {epsilon!r} : f32, feature_index = {x.ndim - 1} : i64}} : "
        f"({types}) -> ({', '.join(outs)})\n    return {results} : {', '.join(outs)}"))


def map_add(x: np.ndarray, y: np.ndarray) -> str:
    """``map`` over all dimensions with a body that adds its two scalars."""
    t, s = tensor(x.shape, x.dtype), tensor((), x.dtype)
    dims = ", ".join(str(i) for i in range(x.ndim))
    return module([x, y], [t], (
        f'    %0 = "stablehlo.map"(%arg0, %arg1) ({{\n    ^bb0(%a: {s}, %b: {s}):\n'
        f'      %s = "stablehlo.add"(%a, %b) : ({s}, {s}) -> {s}\n'
        f'      "stablehlo.return"(%s) : ({s}) -> ()\n'
        f"    }}) {{dimensions = array<i64: {dims}>}} : ({t}, {t}) -> {t}\n"
        f"    return %0 : {t}"))


def tuple_second(x: np.ndarray, y: np.ndarray) -> str:
    """``tuple(x, y)`` then ``get_tuple_element`` 1 (returns ``y``) and 0 (``x``)."""
    tx, ty = tensor(x.shape, x.dtype), tensor(y.shape, y.dtype)
    return module([x, y], [ty, tx], (
        f'    %0 = "stablehlo.tuple"(%arg0, %arg1) : ({tx}, {ty}) -> tuple<{tx}, {ty}>\n'
        f'    %1 = "stablehlo.get_tuple_element"(%0) {{index = 1 : i32}} : '
        f"(tuple<{tx}, {ty}>) -> {ty}\n"
        f'    %2 = "stablehlo.get_tuple_element"(%0) {{index = 0 : i32}} : '
        f"(tuple<{tx}, {ty}>) -> {tx}\n    return %1, %2 : {ty}, {tx}"))


def if_select(pred: np.ndarray, x: np.ndarray, y: np.ndarray) -> str:
    """``if pred then x else y`` (``pred`` a 0-d bool array), through a token
    (``after_all``) and an ``optimization_barrier`` in the true branch."""
    t, p = tensor(x.shape, x.dtype), tensor((), np.bool_)
    return module([pred, x, y], [t], (
        f'    %0 = "stablehlo.if"(%arg0) ({{\n'
        f'      %tok = "stablehlo.after_all"() : () -> !stablehlo.token\n'
        f'      %tok2 = "stablehlo.after_all"(%tok, %tok) : (!stablehlo.token, !stablehlo.token)'
        f" -> !stablehlo.token\n"
        f'      %b:2 = "stablehlo.optimization_barrier"(%arg1, %tok2) : ({t}, !stablehlo.token)'
        f" -> ({t}, !stablehlo.token)\n"
        f'      "stablehlo.return"(%b#0) : ({t}) -> ()\n'
        f'    }}, {{\n      "stablehlo.return"(%arg2) : ({t}) -> ()\n'
        f"    }}) : ({p}) -> {t}\n    return %0 : {t}"))


def select_and_scatter_max_add(operand: np.ndarray, source: np.ndarray,
                               window: tuple[int, int]) -> str:
    """``select_and_scatter`` over 2-d ``operand`` with a VALID ``window`` of stride 1:
    select the first maximum (``GE``), scatter by addition onto zeros."""
    to, ts, s = (tensor(operand.shape, operand.dtype), tensor(source.shape, source.dtype),
                 tensor((), operand.dtype))
    direction = "GE"
    element = ELEMENT[np.dtype(operand.dtype).name]
    zero = "0.0" if element.startswith(("f", "bf", "complex")) else (
        "false" if element == "i1" else "0")
    return module([operand, source], [to], (
        f"    %init = stablehlo.constant dense<{zero}> : {s}\n"
        f'    %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %init) ({{\n'
        f"    ^bb0(%a: {s}, %b: {s}):\n"
        f'      %c = "stablehlo.compare"(%a, %b) {{comparison_direction = '
        f"#stablehlo<comparison_direction {direction}>}} : ({s}, {s}) -> tensor<i1>\n"
        f'      "stablehlo.return"(%c) : (tensor<i1>) -> ()\n'
        f"    }}, {{\n    ^bb0(%a: {s}, %b: {s}):\n"
        f'      %d = "stablehlo.add"(%a, %b) : ({s}, {s}) -> {s}\n'
        f'      "stablehlo.return"(%d) : ({s}) -> ()\n'
        f"    }}) {{window_dimensions = array<i64: {window[0]}, {window[1]}>, "
        f"window_strides = array<i64: 1, 1>}} : ({to}, {ts}, {s}) -> {to}\n"
        f"    return %0 : {to}"))
