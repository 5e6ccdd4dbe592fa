"""Generated multi-op programs: a DAG of ops, its jax source and its NumPy evaluation.

A :class:`Program` is a list of :class:`Node` s in topological order (the data
parameters first, then ops reading earlier nodes) and the nodes it returns. Every
program also takes ``idx``, an int32[8] vector of drawn values: the start indices of
its ``dynamic_slice``/``dynamic_update_slice`` ops and the predicates of its ``cond``
ops read it, so the compiler cannot fold them into static slices.

One text is the truth: :meth:`Program.source` is the Python source of a jax
function (``jax.lax`` ops only, and ``jnp.take`` for gathers), and the program
under test is that source executed (:meth:`Program.function`). The same text is the
bundle's reproduction, ready to file upstream. :func:`evaluate` computes the same
DAG with NumPy, bit for bit for integer and data-movement programs (two's
complement wrap-around, clamped dynamic starts, clipped gather indices: XLA's
semantics); float programs are evaluated in float64 by
:mod:`conformance.programs.dag_bounds`, which also carries the error bound.

The op catalog (:data:`OPS`) is StableHLO's: elementwise unary and binary ops
(``logistic``, ``divide`` and ``relu`` as ``max(x, 0)`` in the epilogue and softmax
patterns of the float family),
compare/select, ``broadcast_in_dim``, ``reduce`` (add, mul, max, min over drawn
axes), ``dot_general`` (batch and contracting dimensions; ``dot_mixed``: bfloat16 or
float16 operands with ``preferred_element_type=float32``), ``transpose``,
``reshape``, ``slice``, ``concatenate``, ``pad`` (interior padding included),
``reverse``, ``convert``, ``dynamic_slice``, ``dynamic_update_slice``, ``gather``
and ``scatter`` (add and set), ``iota``, ``reduce_window`` (max), cumulative sums,
``sort``, and ``while`` (``fori_loop``: ``v * 3 + 1``, a roll, or a body holding a dot,
a reduce or a dynamic_update_slice, :mod:`conformance.programs.dag_loops`) and ``case``
(``cond``) regions. The float
family's layer-norm and pooling patterns add ``rsqrt``, ``constant`` (a literal array:
a splat or a vector, already rounded to the dtype) and ``pool`` (``reduce_window``
max or add over drawn windows, strides and ``'VALID'``/``'SAME'`` padding, as flax's
pooling lowers).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.helpers import dtype_helpers

#: The imports of every generated source (it runs standalone).
_HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n\n"
#: Length of the ``idx`` parameter every program takes.
IDX_LEN = 8
FAMILIES = ("integer", "data_movement", "float")


@dataclasses.dataclass(frozen=True)
class Node:
    """One value of a program: ``op`` (a key of :data:`OPS`, or ``param``), ``args``
    (indices of earlier nodes), ``attrs`` (static attributes, a tuple of (name, value)
    pairs), and the result's ``shape`` and ``dtype`` (a NumPy dtype name)."""

    op: str
    args: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...]
    shape: tuple[int, ...]
    dtype: str

    def attr(self, name: str) -> Any:
        return dict(self.attrs)[name]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclasses.dataclass(frozen=True)
class Program:
    """A DAG: ``nodes`` in topological order (params first), ``outputs`` (node indices,
    in the order the program returns them) and its ``family`` (one of
    :data:`FAMILIES`)."""

    family: str
    nodes: tuple[Node, ...]
    outputs: tuple[int, ...]

    @property
    def params(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.op == "param"]

    @property
    def n_ops(self) -> int:
        return len(self.nodes) - len(self.params)

    def source(self) -> str:
        """The program as the Python source of a jax function ``program(p0, ..., idx)``
        returning a tuple of its outputs (imports included, so it runs standalone)."""
        names = [f"p{n.attr('index')}" if n.op == "param" else f"v{i}"
                 for i, n in enumerate(self.nodes)]
        lines = [_HEADER + f"def program({', '.join([names[i] for i in self.params] + ['idx'])}):"]
        for i, n in enumerate(self.nodes):
            if n.op != "param":
                lines.append(f"    {names[i]} = {OPS[n.op].code(n, [names[a] for a in n.args])}")
        lines.append(f"    return ({''.join(names[i] + ', ' for i in self.outputs)})")
        return "\n".join(lines) + "\n"

    @property
    def name(self) -> str:
        """``<family>_<hash of the source>``: the module name of the compiled program."""
        return f"{self.family}_{hashlib.sha256(self.source().encode()).hexdigest()[:12]}"

    def function(self) -> Callable[..., Any]:
        """The jax function of :meth:`source` (the source executed)."""
        return _compiled_source(self.source())

    def node_function(self, i: int) -> tuple[Callable[..., Any], list[int]]:
        """Node ``i`` alone as a jax function of its operands (and ``idx``), and the
        indices of those operands: the op-by-op oracle runs each node as its own
        executable."""
        n = self.nodes[i]
        names = [f"a{k}" for k in range(len(n.args))]
        src = (_HEADER + f"def program({', '.join(names + ['idx'])}):\n"
               f"    return ({OPS[n.op].code(n, names)},)\n")
        return _compiled_source(src), list(n.args)


_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def _compiled_source(src: str) -> Callable[..., Any]:
    fn = _FUNCTIONS.get(src)
    if fn is None:
        scope: dict[str, Any] = {}
        exec(compile(src, "<generated program>", "exec"), scope)  # noqa: S102 - our own text
        fn = _FUNCTIONS[src] = scope["program"]
    return fn


def dtype_code(dtype: str) -> str:
    """A dtype in the generated source: ``np.float32``; ``jnp.bfloat16`` (NumPy has no
    bfloat16 of its own)."""
    return f"jnp.{dtype}" if dtype == "bfloat16" else f"np.{dtype}"


def literal(a: tuple[int, ...]) -> str:
    """An index tuple as an int32 NumPy literal of the source."""
    return f"np.array({[int(v) for v in a]!r}, np.int32)"


@dataclasses.dataclass(frozen=True)
class Op:
    """One op of the catalog: ``code(node, operand names)`` renders its jax
    expression; ``numpy(node, operands, idx)`` evaluates it exactly for the node's
    dtype (integer wrap-around, data movement bit for bit)."""

    code: Callable[[Node, list[str]], str]
    numpy: Callable[[Node, list[np.ndarray], np.ndarray], np.ndarray]


def _clamped_starts(node: Node, idx: np.ndarray, full: tuple[int, ...],
                    sizes: tuple[int, ...]) -> list[int]:
    """dynamic_slice/dynamic_update_slice starts as jax computes them: a negative
    ``idx[k]`` counts from the end (``+ d``, jax's rule), then StableHLO clamps the start
    to [0, d - size]."""
    out = []
    for k, d, s in zip(node.attr("starts"), full, sizes):
        start = int(idx[k]) + (d if int(idx[k]) < 0 else 0)
        out.append(min(max(start, 0), d - s))
    return out


def _pad(node: Node, x: np.ndarray) -> np.ndarray:
    cfg = node.attr("config")
    out = np.full(node.shape, np.array(node.attr("value")).astype(x.dtype), x.dtype)
    where = tuple(slice(lo, lo + (d - 1) * (it + 1) + 1, it + 1)
                  for (lo, _, it), d in zip(cfg, x.shape))
    out[where] = x
    return out


def _broadcast(node: Node, x: np.ndarray) -> np.ndarray:
    dims = node.attr("dims")
    shape = [1] * len(node.shape)
    for d, s in zip(dims, x.shape):
        shape[d] = s
    return np.broadcast_to(x.reshape(shape), node.shape).copy()


def _dot(node: Node, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    (cx, cy), (bx, by) = node.attr("contract"), node.attr("batch")
    return np.asarray(einsum_dot(x, y, cx, cy, bx, by, wide=True)).astype(node.dtype)


def einsum_dot(x: np.ndarray, y: np.ndarray, cx: tuple[int, ...], cy: tuple[int, ...],
               bx: tuple[int, ...], by: tuple[int, ...], *, wide: bool = False) -> np.ndarray:
    """dot_general's result (batch dims, then x's free dims, then y's) by ``np.einsum``;
    ``wide``: integers accumulate in 64 bits (the result then wraps to the dtype when
    converted back: 2**32 divides 2**64)."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in x.shape]
    ys = [next(letters) for _ in y.shape]
    for a, b in zip(cx + bx, cy + by):
        ys[b] = xs[a]
    out = [xs[a] for a in bx] + [c for k, c in enumerate(xs) if k not in cx + bx] + \
        [c for k, c in enumerate(ys) if k not in cy + by]
    if wide and x.dtype.kind in "iu":
        x, y = x.astype(np.int64), y.astype(np.int64)
    with np.errstate(over="ignore"):
        return np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)


def _reduce_window_max(node: Node, x: np.ndarray) -> np.ndarray:
    axis, window, stride = node.attr("axis"), node.attr("window"), node.attr("stride")
    view = np.lib.stride_tricks.sliding_window_view(x, window, axis=axis)
    return np.take(view.max(axis=-1), range(0, view.shape[axis], stride), axis=axis)


def same_pads(n: int, window: int, stride: int, padding: str) -> tuple[int, int]:
    """(low, high) padding of one dimension as ``lax.padtype_to_pads`` computes it:
    none for ``'VALID'``; for ``'SAME'`` ``ceil(n / stride)`` windows, the missing
    elements split with the smaller half low."""
    if padding == "VALID":
        return 0, 0
    total = max((-(-n // stride) - 1) * stride + window - n, 0)
    return total // 2, total - total // 2


def pool_shape(shape: tuple[int, ...], window: tuple[int, ...], strides: tuple[int, ...],
               padding: str) -> tuple[int, ...]:
    """The result shape of a ``reduce_window`` (windows fully inside the padded operand)."""
    return tuple((d + sum(same_pads(d, w, s, padding)) - w) // s + 1
                 for d, w, s in zip(shape, window, strides))


def windowed(x: np.ndarray, window: tuple[int, ...], strides: tuple[int, ...], padding: str,
             fn: Callable[..., np.ndarray], fill: float) -> np.ndarray:
    """``fn`` (``np.max``, ``np.sum``) over each window of ``x`` padded with ``fill``."""
    pads = [same_pads(d, w, s, padding) for d, w, s in zip(x.shape, window, strides)]
    view = np.lib.stride_tricks.sliding_window_view(np.pad(x, pads, constant_values=fill),
                                                    window)
    view = view[tuple(slice(None, None, s) for s in strides)]
    return fn(view, axis=tuple(range(x.ndim, 2 * x.ndim)))


def _pool(node: Node, x: np.ndarray) -> np.ndarray:
    fn, fill = (np.max, -np.inf) if node.attr("kind") == "max" else (np.sum, 0.0)
    return windowed(x, node.attr("window"), node.attr("strides"), node.attr("padding"), fn, fill)


def _constant(node: Node) -> np.ndarray:
    values = np.array(node.attr("values"), np.float64)
    return np.broadcast_to(values.reshape(node.shape) if values.size > 1 else values[0],
                           node.shape).astype(node.dtype)


def _constant_code(node: Node, a: list[str]) -> str:
    values = node.attr("values")
    if len(values) == 1:
        return f"np.full({node.shape}, {values[0]!r}, {dtype_code(node.dtype)})"
    return f"np.array({list(values)!r}, {dtype_code(node.dtype)}).reshape({node.shape})"


def _conv(node: Node, x: np.ndarray) -> np.ndarray:
    """``lax.conv_general_dilated`` of x (N, C, W) with the node's literal kernel
    (O, C, KW), NCH/OIH/NCH layouts: lhs dilation (zeros between input elements), edge
    padding, rhs dilation (zeros between kernel taps), stride; int64 sums (wrapping to the
    node's dtype by :func:`_wrap`)."""
    stride, (lo, hi) = node.attr("stride"), node.attr("padding")
    ld, rd = node.attr("lhs_dilation"), node.attr("rhs_dilation")
    k = np.array(node.attr("kernel"), np.int64).reshape(node.attr("kernel_shape"))
    n, c, w = x.shape
    xd = np.zeros((n, c, (w - 1) * ld + 1), np.int64)
    xd[:, :, ::ld] = x
    xd = np.pad(xd, ((0, 0), (0, 0), (lo, hi)))
    kd = np.zeros(k.shape[:2] + ((k.shape[2] - 1) * rd + 1,), np.int64)
    kd[:, :, ::rd] = k
    windows = np.lib.stride_tricks.sliding_window_view(xd, kd.shape[2], axis=2)[:, :, ::stride]
    with np.errstate(over="ignore"):
        return np.einsum("ncwk,ock->now", windows, kd)


def _conv_code(node: Node, a: list[str]) -> str:
    lo, hi = node.attr("padding")
    return (f"lax.conv_general_dilated({a[0]}, np.array({list(node.attr('kernel'))!r}, "
            f"{dtype_code(node.dtype)}).reshape({node.attr('kernel_shape')}), ({node.attr('stride')},), "
            f"(({lo}, {hi}),), lhs_dilation=({node.attr('lhs_dilation')},), "
            f"rhs_dilation=({node.attr('rhs_dilation')},), "
            f"dimension_numbers=('NCH', 'OIH', 'NCH'))")


def _scatter(node: Node, x: np.ndarray, u: np.ndarray) -> np.ndarray:
    out, at = x.copy(), np.asarray(node.attr("indices"))
    if node.attr("mode") == "add":
        with np.errstate(over="ignore"):
            np.add.at(out, at, u)
    else:
        out[at] = u
    return out


def loop_weights(node: Node) -> np.ndarray:
    """The literal k x k matrix of a ``loop`` node whose body holds a dot (``k``: the
    size of the contracted axis), as float64 or int64 values (exact in the dtype)."""
    k = node.shape[node.attr("axis")]
    wide = np.float64 if is_float(node.dtype) else np.int64
    return np.array(node.attr("weights"), wide).reshape(k, k)


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` (a NumPy dtype name, ``bfloat16`` included) is a float type."""
    return dtype_helpers.BY_NAME[dtype].kind == "float"


def loop_perm(node: Node) -> tuple[int, ...] | None:
    """The transpose that puts a loop dot's result (``v``'s other axes, then the
    weights' column) back in ``v``'s axis order; None where the contracted axis is last."""
    c, r = node.attr("axis"), len(node.shape)
    return None if c == r - 1 else tuple(range(c)) + (r - 1,) + tuple(range(c, r - 1))


def _loop_trip(node: Node, v: np.ndarray, i: int) -> np.ndarray:
    """Trip ``i`` of a loop's body on ``v``, in ``v``'s dtype (integers wrap)."""
    body, dt, floats = node.attr("body"), v.dtype, is_float(node.dtype)
    if body == "affine":
        return (v * np.array(3, dt) + np.array(1, dt)).astype(dt)
    if body == "roll":
        return np.roll(v, 1, axis=0)
    if body == "dot":
        d = einsum_dot(v, loop_weights(node), (node.attr("axis"),), (0,), (), (), wide=True)
        d = np.moveaxis(np.asarray(d), -1, node.attr("axis"))
        return (np.tanh(d) if floats else d).astype(dt)
    a = node.attr("axis")
    if body == "reduce":
        r = reduced(v, (a,), node.attr("kind"))
        if node.attr("scale") != 1:
            r = r * np.array(node.attr("scale"), dt)
        return (v + np.expand_dims(np.asarray(r, dt), a)).astype(dt)
    out = v.copy()   # dus: row i + 1 of the axis plus row i, written back at i + 1
    at = [slice(None)] * v.ndim
    at[a] = i + 1
    row = list(at)
    row[a] = i
    out[tuple(at)] = (v[tuple(at)] + v[tuple(row)]).astype(dt)
    return out


def _loop(node: Node, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    v = x.copy()
    with np.errstate(over="ignore"):
        for i in range(node.attr("trips")):
            v = _loop_trip(node, v, i)
    return v


def _loop_code(n: Node, a: list[str]) -> str:
    """``lax.fori_loop(0, trips, lambda i, v: body, x)`` of a ``loop`` node."""
    body, dt = n.attr("body"), dtype_code(n.dtype)
    if body == "affine":
        expr = f"lax.add(lax.mul(v, {dt}(3)), {dt}(1))"
    elif body == "roll":
        expr = "lax.concatenate([v[-1:], v[:-1]], 0)"
    elif body == "dot":
        c, k = n.attr("axis"), n.shape[n.attr("axis")]
        expr = (f"lax.dot_general(v, np.array({list(n.attr('weights'))!r}, {dt}).reshape(({k}, "
                f"{k})), ((({c},), (0,)), ((), ())), precision=lax.Precision.HIGHEST)")
        if loop_perm(n) is not None:
            expr = f"lax.transpose({expr}, {loop_perm(n)})"
        if is_float(n.dtype):
            expr = f"lax.tanh({expr})"
    elif body == "reduce":
        c = n.attr("axis")
        r = f"{_REDUCE[n.attr('kind')][0]}(v, ({c},))"
        if n.attr("scale") != 1:
            r = f"lax.mul({r}, {dt}({n.attr('scale')!r}))"
        kept = tuple(k for k in range(len(n.shape)) if k != c)
        expr = f"lax.add(v, lax.broadcast_in_dim({r}, {n.shape}, {kept}))"
    else:
        c = n.attr("axis")
        expr = (f"lax.dynamic_update_slice_in_dim(v, lax.add(lax.dynamic_slice_in_dim(v, i + 1, 1, "
                f"{c}), lax.dynamic_slice_in_dim(v, i, 1, {c})), i + 1, {c})")
    return f"lax.fori_loop(0, {n.attr('trips')}, lambda i, v: {expr}, {a[0]})"


def _cond(node: Node, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    if int(idx[node.attr("k")]) > 0:
        with np.errstate(over="ignore"):
            return (x + np.array(1, x.dtype)).astype(x.dtype) \
                if node.attr("body") == "affine" else np.flip(x, 0).copy()
    return (-x).astype(x.dtype) if node.attr("body") == "affine" else x.copy()


_UNARY = {"negate": ("lax.neg", np.negative), "abs": ("lax.abs", np.abs),
          "not": ("lax.bitwise_not", np.invert)}
_BINARY = {"add": ("lax.add", np.add), "subtract": ("lax.sub", np.subtract),
           "multiply": ("lax.mul", np.multiply), "maximum": ("lax.max", np.maximum),
           "minimum": ("lax.min", np.minimum), "and": ("lax.bitwise_and", np.bitwise_and),
           "or": ("lax.bitwise_or", np.bitwise_or), "xor": ("lax.bitwise_xor", np.bitwise_xor)}
_COMPARE = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
            "EQ": np.equal, "NE": np.not_equal}
_REDUCE = {"add": ("lax.reduce_sum", np.sum), "mul": ("lax.reduce_prod", np.prod),
           "max": ("lax.reduce_max", np.max), "min": ("lax.reduce_min", np.min)}
_CMP_CODE = {"LT": "lax.lt", "LE": "lax.le", "GT": "lax.gt", "GE": "lax.ge", "EQ": "lax.eq",
             "NE": "lax.ne"}


def _wrap(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def run(node: Node, ops: list[np.ndarray], idx: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(fn(node, *ops)).astype(node.dtype)
    return run


def reduced(x: np.ndarray, axes: tuple[int, ...], kind: str) -> np.ndarray:
    """``reduce`` ``kind`` (add, mul, max, min) of ``x`` over ``axes``; integer sums and
    products wrap in ``x``'s dtype."""
    fn = _REDUCE[kind][1]
    if kind in ("add", "mul") and x.dtype.kind in "iu":
        return fn(x, axis=axes, dtype=x.dtype)
    return fn(x, axis=axes)


def _reduce_np(node: Node, x: np.ndarray) -> np.ndarray:
    return reduced(x, node.attr("axes"), node.attr("kind"))


def _iota_select(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dim, mod, below = node.attr("dim"), node.attr("mod"), node.attr("below")
    shape = [1] * len(node.shape)
    shape[dim] = node.shape[dim]
    pred = (np.arange(node.shape[dim]).reshape(shape) % mod) < below
    return np.where(pred, a, b)


OPS: dict[str, Op] = {}
for _name, (_code, _fn) in _UNARY.items():
    OPS[_name] = Op(lambda n, a, c=_code: f"{c}({a[0]})", _wrap(lambda n, x, f=_fn: f(x)))
for _name, (_code, _fn) in _BINARY.items():
    OPS[_name] = Op(lambda n, a, c=_code: f"{c}({a[0]}, {a[1]})",
                    _wrap(lambda n, x, y, f=_fn: f(x, y)))
OPS.update({
    "tanh": Op(lambda n, a: f"lax.tanh({a[0]})", _wrap(lambda n, x: np.tanh(x))),
    "exp": Op(lambda n, a: f"lax.exp({a[0]})", _wrap(lambda n, x: np.exp(x))),
    "logistic": Op(lambda n, a: f"lax.logistic({a[0]})",
                   _wrap(lambda n, x: 1.0 / (1.0 + np.exp(-x)))),
    "relu": Op(lambda n, a: f"lax.max({a[0]}, lax.full_like({a[0]}, 0))",
               _wrap(lambda n, x: np.maximum(x, 0))),
    "divide": Op(lambda n, a: f"lax.div({a[0]}, {a[1]})", _wrap(lambda n, x, y: x / y)),
    "select": Op(lambda n, a: f"lax.select({_CMP_CODE[n.attr('dir')]}({a[0]}, {a[1]}), "
                              f"{a[2]}, {a[3]})",
                 _wrap(lambda n, p, q, x, y: np.where(_COMPARE[n.attr("dir")](p, q), x, y))),
    "select_iota": Op(lambda n, a: f"lax.select(lax.lt(lax.rem(lax.broadcasted_iota(np.int32, "
                                   f"{n.shape}, {n.attr('dim')}), np.int32({n.attr('mod')})), "
                                   f"np.int32({n.attr('below')})), {a[0]}, {a[1]})",
                      _wrap(_iota_select)),
    "reduce": Op(lambda n, a: f"{_REDUCE[n.attr('kind')][0]}({a[0]}, {n.attr('axes')})",
                 _wrap(_reduce_np)),
    "dot_general": Op(lambda n, a: f"lax.dot_general({a[0]}, {a[1]}, ({n.attr('contract')}, "
                                   f"{n.attr('batch')}), precision=lax.Precision.HIGHEST)",
                      _wrap(_dot)),
    "dot_mixed": Op(lambda n, a: f"lax.dot_general({a[0]}, {a[1]}, ({n.attr('contract')}, "
                                 f"{n.attr('batch')}), precision=lax.Precision.HIGHEST, "
                                 f"preferred_element_type={dtype_code(n.dtype)})",
                    _wrap(_dot)),
    "transpose": Op(lambda n, a: f"lax.transpose({a[0]}, {n.attr('perm')})",
                    _wrap(lambda n, x: np.transpose(x, n.attr("perm")))),
    "reshape": Op(lambda n, a: f"lax.reshape({a[0]}, {n.shape})",
                  _wrap(lambda n, x: x.reshape(n.shape))),
    "slice": Op(lambda n, a: f"lax.slice({a[0]}, {n.attr('start')}, {n.attr('limit')}, "
                             f"{n.attr('strides')})",
                _wrap(lambda n, x: x[tuple(slice(s, e, k) for s, e, k in zip(
                    n.attr("start"), n.attr("limit"), n.attr("strides")))])),
    "concatenate": Op(lambda n, a: f"lax.concatenate([{a[0]}, {a[1]}], {n.attr('dim')})",
                      _wrap(lambda n, x, y: np.concatenate([x, y], n.attr("dim")))),
    "pad": Op(lambda n, a: f"lax.pad({a[0]}, {dtype_code(n.dtype)}({n.attr('value')!r}), "
                           f"{list(n.attr('config'))})", _wrap(_pad)),
    "reverse": Op(lambda n, a: f"lax.rev({a[0]}, {n.attr('dims')})",
                  _wrap(lambda n, x: np.flip(x, n.attr("dims")))),
    "broadcast_in_dim": Op(lambda n, a: f"lax.broadcast_in_dim({a[0]}, {n.shape}, "
                                        f"{n.attr('dims')})", _wrap(_broadcast)),
    "convert": Op(lambda n, a: f"lax.convert_element_type({a[0]}, {dtype_code(n.dtype)})",
                  _wrap(lambda n, x: x.astype(n.dtype))),
    "iota": Op(lambda n, a: f"lax.broadcasted_iota({dtype_code(n.dtype)}, {n.shape}, "
                          f"{n.attr('dim')})",
               lambda n, ops, idx: np.broadcast_to(np.arange(n.shape[n.attr("dim")]).reshape(
                   [-1 if k == n.attr("dim") else 1 for k in range(len(n.shape))]),
                   n.shape).astype(n.dtype)),
    "dynamic_slice": Op(
        lambda n, a: f"lax.dynamic_slice({a[0]}, [{', '.join(f'idx[{k}]' for k in n.attr('starts'))}"
                     f"], {n.shape})",
        lambda n, ops, idx: ops[0][tuple(slice(s, s + d) for s, d in zip(
            _clamped_starts(n, idx, ops[0].shape, n.shape), n.shape))].copy()),
    "dynamic_update_slice": Op(
        lambda n, a: f"lax.dynamic_update_slice({a[0]}, {a[1]}, "
                     f"[{', '.join(f'idx[{k}]' for k in n.attr('starts'))}])",
        lambda n, ops, idx: _dus(n, ops[0], ops[1], idx)),
    "gather": Op(lambda n, a: f"jnp.take({a[0]}, {literal(n.attr('indices'))}, "
                              f"axis={n.attr('axis')}, mode='clip')",
                 _wrap(lambda n, x: np.take(x, np.clip(n.attr("indices"), 0,
                                                       x.shape[n.attr("axis")] - 1),
                                            axis=n.attr("axis")))),
    "scatter": Op(lambda n, a: f"{a[0]}.at[{literal(n.attr('indices'))}]."
                               f"{'add' if n.attr('mode') == 'add' else 'set'}({a[1]}, "
                               f"mode='promise_in_bounds')", _wrap(_scatter)),
    "cumsum": Op(lambda n, a: f"lax.cumsum({a[0]}, {n.attr('axis')}, "
                              f"reverse={n.attr('reverse')})",
                 _wrap(lambda n, x: _cumsum(n, x))),
    "reduce_window_max": Op(
        lambda n, a: f"lax.reduce_window({a[0]}, {dtype_code(n.dtype)}({_lowest(n.dtype)!r}), lax.max, "
                     f"{_window(n, 'window')}, {_window(n, 'stride')}, 'VALID')",
        _wrap(_reduce_window_max)),
    "conv": Op(_conv_code, _wrap(_conv)),
    "rsqrt": Op(lambda n, a: f"lax.rsqrt({a[0]})", _wrap(lambda n, x: 1.0 / np.sqrt(x))),
    "constant": Op(_constant_code, lambda n, ops, idx: _constant(n)),
    "pool": Op(lambda n, a: f"lax.reduce_window({a[0]}, {dtype_code(n.dtype)}("
                            f"{'-np.inf' if n.attr('kind') == 'max' else '0.0'}), "
                            f"lax.{n.attr('kind')}, {n.attr('window')}, {n.attr('strides')}, "
                            f"{n.attr('padding')!r})", _wrap(_pool)),
    "sort": Op(lambda n, a: f"lax.sort({a[0]}, dimension={n.attr('axis')})",
               _wrap(lambda n, x: np.sort(x, axis=n.attr("axis")))),
    "loop": Op(_loop_code, lambda n, ops, idx: _loop(n, ops[0], idx)),
    "cond": Op(lambda n, a: f"lax.cond(idx[{n.attr('k')}] > 0, "
                            + (f"lambda v: lax.add(v, {dtype_code(n.dtype)}(1)), lambda v: lax.neg(v)"
                               if n.attr("body") == "affine"
                               else "lambda v: lax.rev(v, (0,)), lambda v: v") + f", {a[0]})",
               lambda n, ops, idx: _cond(n, ops[0], idx)),
})


def _cumsum(node: Node, x: np.ndarray) -> np.ndarray:
    axis = node.attr("axis")
    flip = (lambda a: np.flip(a, axis)) if node.attr("reverse") else (lambda a: a)
    return flip(np.cumsum(flip(x), axis=axis, dtype=x.dtype))


def _window(node: Node, which: str) -> tuple[int, ...]:
    out = [1] * node.attr("rank")
    out[node.attr("axis")] = node.attr(which)
    return tuple(out)


def _lowest(dtype: str) -> Any:
    dt = np.dtype(dtype)
    return int(np.iinfo(dt).min) if dt.kind in "iu" else float("-inf")


def _dus(node: Node, x: np.ndarray, u: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = x.copy()
    starts = _clamped_starts(node, idx, x.shape, u.shape)
    out[tuple(slice(s, s + d) for s, d in zip(starts, u.shape))] = u
    return out


def evaluate(program: Program, inputs: list[np.ndarray], idx: np.ndarray) -> list[np.ndarray]:
    """Every node's value by NumPy, exact in the node's dtype (``inputs``: the data
    parameters in order; ``idx``: the int32[8] parameter). For integer and
    data-movement programs these are the expected results, bit for bit."""
    values: list[np.ndarray] = []
    for n in program.nodes:
        if n.op == "param":
            values.append(np.asarray(inputs[n.attr("index")]))
        else:
            values.append(OPS[n.op].numpy(n, [values[a] for a in n.args], idx))
    return values
