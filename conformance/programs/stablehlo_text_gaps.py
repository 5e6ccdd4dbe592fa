"""StableHLO text for the spec ops jax does not emit: the dynamic-shape ops (with
constant shape operands, on static shapes), ``get_dimension_size``, ``composite``,
``async_start``/``async_done`` and ``rng``.

Each builder takes the argument arrays (their shapes and dtypes type the module) and
returns module text with one public ``@main`` (see :mod:`stablehlo_text`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.programs.stablehlo_text import module, tensor


def _i64(values: Sequence[int], name: str) -> str:
    """A ``%name`` constant of a 1-d i64 tensor of ``values``."""
    vals = ", ".join(str(int(v)) for v in values)
    return f"    %{name} = stablehlo.constant dense<[{vals}]> : tensor<{len(values)}xi64>\n"


def get_dimension_size(x: np.ndarray, dims: Sequence[int]) -> str:
    """``get_dimension_size`` of ``x`` along each of ``dims``: one 0-d i32 result each."""
    t = tensor(x.shape, x.dtype)
    lines = [f"    %d{i} = stablehlo.get_dimension_size %arg0, dim = {d} : ({t}) -> tensor<i32>"
             for i, d in enumerate(dims)]
    names = ", ".join(f"%d{i}" for i in range(len(dims)))
    types = ", ".join("tensor<i32>" for _ in dims)
    return module([x], ["tensor<i32>"] * len(dims),
                  "\n".join(lines) + f"\n    return {names} : {types}")


def dynamic_iota(x: np.ndarray, dim: int) -> str:
    """``dynamic_iota`` of ``x``'s shape and dtype along ``dim`` (``x`` only types it)."""
    t = tensor(x.shape, x.dtype)
    return module([x], [t], _i64(x.shape, "s") + (
        f"    %0 = stablehlo.dynamic_iota %s, dim = {dim} : (tensor<{x.ndim}xi64>) -> {t}\n"
        f"    return %0 : {t}"))


def dynamic_broadcast_in_dim(x: np.ndarray, lead: int) -> str:
    """``x`` broadcast to ``(lead, *x.shape)`` (``broadcast_dimensions`` 1..ndim)."""
    t, out = tensor(x.shape, x.dtype), (lead, *x.shape)
    to = tensor(out, x.dtype)
    dims = ", ".join(str(i + 1) for i in range(x.ndim))
    return module([x], [to], _i64(out, "s") + (
        f"    %0 = stablehlo.dynamic_broadcast_in_dim %arg0, %s, dims = [{dims}] : "
        f"({t}, tensor<{len(out)}xi64>) -> {to}\n    return %0 : {to}"))


def dynamic_reshape(x: np.ndarray, shape: Sequence[int]) -> str:
    """``x`` reshaped (row-major) to ``shape`` through a constant shape operand."""
    t, to = tensor(x.shape, x.dtype), tensor(shape, x.dtype)
    return module([x], [to], _i64(shape, "s") + (
        f"    %0 = stablehlo.dynamic_reshape %arg0, %s : ({t}, tensor<{len(shape)}xi64>) -> "
        f"{to}\n    return %0 : {to}"))


def pad_shape(shape: Sequence[int], low: Sequence[int], high: Sequence[int],
              interior: Sequence[int]) -> tuple[int, ...]:
    """The result shape of ``pad`` (non-negative padding amounts)."""
    return tuple(lo + hi + d + max(d - 1, 0) * i
                 for d, lo, hi, i in zip(shape, low, high, interior))


def dynamic_pad(x: np.ndarray, value: np.ndarray, low: Sequence[int], high: Sequence[int],
                interior: Sequence[int]) -> str:
    """``dynamic_pad`` of ``x`` with the 0-d ``value`` and constant padding amounts."""
    t, ts = tensor(x.shape, x.dtype), tensor((), x.dtype)
    to = tensor(pad_shape(x.shape, low, high, interior), x.dtype)
    ti = f"tensor<{x.ndim}xi64>"
    return module([x, value], [to], _i64(low, "lo") + _i64(high, "hi") + _i64(interior, "in") + (
        f"    %0 = stablehlo.dynamic_pad %arg0, %arg1, %lo, %hi, %in : "
        f"({t}, {ts}, {ti}, {ti}, {ti}) -> {to}\n    return %0 : {to}"))


def dynamic_gather_rows(x: np.ndarray, rows: np.ndarray) -> str:
    """Rows ``rows[:, 0]`` of 2-d ``x`` (``rows``: (k, 1) int32), slice sizes
    ``[1, x.shape[1]]`` as a constant operand: result (k, x.shape[1])."""
    t, ti = tensor(x.shape, x.dtype), tensor(rows.shape, rows.dtype)
    to = tensor((rows.shape[0], x.shape[1]), x.dtype)
    return module([x, rows], [to], _i64((1, x.shape[1]), "ss") + (
        '    %0 = "stablehlo.dynamic_gather"(%arg0, %arg1, %ss) {dimension_numbers = '
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false} : "
        f"({t}, {ti}, tensor<2xi64>) -> {to}\n    return %0 : {to}"))


def composite_add_multiply(x: np.ndarray, y: np.ndarray) -> str:
    """``stablehlo.composite "conformance.add_multiply"`` of ``x, y`` whose decomposition
    ``@add_multiply`` computes ``(x + y) * y``."""
    t = tensor(x.shape, x.dtype)
    main = module([x, y], [t], (
        '    %0 = stablehlo.composite "conformance.add_multiply" %arg0, %arg1 {'
        "composite_attributes = {note = 1 : i64}, decomposition = @add_multiply, "
        f"version = 1 : i32}} : ({t}, {t}) -> {t}\n    return %0 : {t}"))
    decomposition = (
        f"  func.func private @add_multiply(%a: {t}, %b: {t}) -> {t} {{\n"
        f"    %0 = stablehlo.add %a, %b : {t}\n    %1 = stablehlo.multiply %0, %b : {t}\n"
        f"    return %1 : {t}\n  }}\n}}\n")
    return main.rstrip().removesuffix("}") + decomposition


def async_all_reduce(x: np.ndarray) -> str:
    """``async_start`` of a region holding an ``all_reduce`` over the one-member group
    of each replica (the identity: the program has one replica), then ``async_done``.
    XLA accepts only collectives in an async region."""
    t, s = tensor(x.shape, x.dtype), tensor((), x.dtype)
    return module([x], [t], (
        f'    %0 = "stablehlo.async_start"(%arg0) ({{\n    ^bb0(%a: {t}):\n'
        f'      %r = "stablehlo.all_reduce"(%a) ({{\n      ^bb0(%p: {s}, %q: {s}):\n'
        f"        %sum = stablehlo.add %p, %q : {s}\n"
        f'        "stablehlo.return"(%sum) : ({s}) -> ()\n'
        f"      }}) {{replica_groups = dense<[[0]]> : tensor<1x1xi64>}} : ({t}) -> {t}\n"
        f'      "stablehlo.return"(%r) : ({t}) -> ()\n'
        f"    }}) : ({t}) -> !stablehlo.future<{t}>\n"
        f'    %1 = "stablehlo.async_done"(%0) : (!stablehlo.future<{t}>) -> {t}\n'
        f"    return %1 : {t}"))


def rng(a: np.ndarray, b: np.ndarray, shape: Sequence[int], distribution: str, *,
        replicated: bool = False) -> str:
    """``rng`` of ``shape`` with ``distribution`` (``UNIFORM``: [a, b); ``NORMAL``: mean
    ``a``, standard deviation ``b``); ``a``, ``b`` 0-d arrays of the result dtype.
    ``replicated``: the arguments and the result carry ``mhlo.sharding = "{replicated}"``
    (what jax's lowering states for a replicated SPMD program: without it XLA's SPMD
    partitioner may place an unannotated ``rng`` on device 0 alone, and the other
    partitions' results are then not defined). Raises ValueError for another distribution."""
    if distribution not in ("UNIFORM", "NORMAL"):
        raise ValueError(f"distribution: expected 'UNIFORM' or 'NORMAL', got {distribution!r}")
    ts, to = tensor((), a.dtype), tensor(shape, a.dtype)
    text = module([a, b], [to], _i64(shape, "s") + (
        f"    %0 = stablehlo.rng %arg0, %arg1, %s, distribution = {distribution} : "
        f"({ts}, {ts}, tensor<{len(shape)}xi64>) -> {to}\n    return %0 : {to}"))
    if not replicated:
        return text
    rep = ' {mhlo.sharding = "{replicated}"}'
    head = f"@main(%arg0: {ts}, %arg1: {ts}) -> ({to})"
    if head not in text:
        raise AssertionError(f"rng: unexpected signature in {text.splitlines()[1]!r}")
    return text.replace(head, f"@main(%arg0: {ts}{rep}, %arg1: {ts}{rep}) -> ({to}{rep})", 1)


def dynamic_conv_1d(x: np.ndarray, w: np.ndarray, padding: tuple[int, int]) -> str:
    """``dynamic_conv`` of ``x`` (batch, feature, width) with ``w`` (out, in, width),
    stride 1, constant ``padding`` (low, high) of the spatial dimension."""
    tx, tw = tensor(x.shape, x.dtype), tensor(w.shape, w.dtype)
    width = x.shape[2] + sum(padding) - w.shape[2] + 1
    to = tensor((x.shape[0], w.shape[0], width), x.dtype)
    return module([x, w], [to], (
        f"    %p = stablehlo.constant dense<[[{padding[0]}, {padding[1]}]]> : tensor<1x2xi64>\n"
        '    %0 = "stablehlo.dynamic_conv"(%arg0, %arg1, %p) {dimension_numbers = '
        "#stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, "
        f"batch_group_count = 1 : i64}} : ({tx}, {tw}, tensor<1x2xi64>) -> {to}\n"
        f"    return %0 : {to}"))


def quant_type(scale: float, zero_point: int) -> str:
    """``!quant.uniform<i8:f32, scale:zero_point>``."""
    return f"!quant.uniform<i8:f32, {scale!r}:{int(zero_point)}>"


def uniform_round_trip(x: np.ndarray, scale: float, zero_point: int) -> str:
    """float32 ``x`` -> ``uniform_quantize`` (i8, ``scale``, ``zero_point``) ->
    ``uniform_dequantize``; results: the dequantized values and the storage bits (i8)."""
    t, q = tensor(x.shape, x.dtype), quant_type(scale, zero_point)
    shape = "".join(f"{d}x" for d in x.shape)
    tq, ti = f"tensor<{shape}{q}>", f"tensor<{shape}i8>"
    return module([x], [t, ti], (
        f"    %0 = stablehlo.uniform_quantize %arg0 : ({t}) -> {tq}\n"
        f"    %1 = stablehlo.uniform_dequantize %0 : ({tq}) -> {t}\n"
        f"    %2 = stablehlo.bitcast_convert %0 : ({tq}) -> {ti}\n"
        f"    return %1, %2 : {t}, {ti}"))


def uniform_dequantize(q: np.ndarray, scale: float, zero_point: int) -> str:
    """int8 storage ``q`` as ``!quant.uniform<i8:f32, scale:zero_point>`` (a
    ``bitcast_convert``), then ``uniform_dequantize`` to float32."""
    ti, qt = tensor(q.shape, q.dtype), quant_type(scale, zero_point)
    shape = "".join(f"{d}x" for d in q.shape)
    tq, tf = f"tensor<{shape}{qt}>", f"tensor<{shape}f32>"
    return module([q], [tf], (
        f"    %0 = stablehlo.bitcast_convert %arg0 : ({ti}) -> {tq}\n"
        f"    %1 = stablehlo.uniform_dequantize %0 : ({tq}) -> {tf}\n"
        f"    return %1 : {tf}"))
