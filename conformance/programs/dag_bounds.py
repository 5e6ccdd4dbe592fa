"""The float oracle of generated programs: float64 evaluation with a running error bound.

Wilkinson's running error analysis, carried through the DAG node by node. Every node
gets its float64 value ``v`` (computed from the program's inputs) and a bound ``e``
such that a healthy backend's result ``d`` in the node's dtype satisfies ``|d - v| <= e``
elementwise, whatever order and fusion it chose. The constants are the node's dtype's
(float32, bfloat16 or float16: :func:`conformance.programs.float_format.of`, one helper
for all): ``u = eps`` (twice the unit roundoff, so fused multiply-adds, wider
accumulators and a narrow op computed in float32 and rounded once are covered) and
``tiny`` its smallest normal (each rounding may flush a subnormal result to zero,
and a subnormal input may be read as zero: flush-to-zero and denormals-are-zero; a
backend that declares the dtype IEEE (``--float-controls``) gets half the smallest
subnormal per rounding instead of ``tiny``, and exact inputs). ``g(n)`` is the
format's growth factor of ``n`` roundings (``n u`` while ``n u/2 <= 1``, every float32
case; ``(1 + u/2)**n - 1`` past it):

==================  ========================================================================
node                bound ``e`` of the result (operands ``a``, ``b`` with bounds ``ea``, ``eb``)
==================  ========================================================================
parameter           ``|x|`` where ``x`` is subnormal (read as 0 under DAZ), else 0
negate, abs         ``ea`` (exact)
add, subtract       ``ea + eb + u (|v| + ea + eb) + tiny`` (one rounding of the computed sum)
multiply            ``p + u (|v| + p) + tiny`` with ``p = |a| eb + |b| ea + ea eb``
maximum, minimum    ``max(ea, eb)`` (1-Lipschitz, no rounding)
tanh                ``min(ea, 2) + k u (|v| + ea) + tiny`` (``|tanh'| <= 1``; ``k``: the
                    dtype's ULP budget of the tolerance table)
exp                 ``p + k u (v + p) + tiny`` with ``p = exp(a) (exp(ea) - 1)`` (mean value)
logistic            ``min(ea / 4, 1) + k u (v + ea / 4) + tiny`` (``|logistic'| <= 1/4``)
relu (max(x, 0))    ``ea`` (1-Lipschitz, no rounding)
divide              ``p + u (|v| + p) + tiny`` with ``p = (ea + |v| eb) / (|b| - eb)``, any
                    value (``inf``) where ``|b| <= eb`` (the divisor may be zero)
select(a < b, c, d) the chosen operand's bound; where ``|a - b| <= ea + eb`` the device may
                    choose the other one: ``max(ec, ed) + |c - d|``
reduce add (n)      ``sum(e) + g(n) sum(|v| + e) + n tiny`` (any order, any tree)
reduce max/min      ``max(e)``
rsqrt (of s)        ``p + (k + 1) u (v + p) + tiny`` with ``p = es / (2 (s - es)**1.5)``
                    (``|rsqrt'(t)| = 1 / (2 t**1.5)``, largest at ``t = s - es``), any value
                    (``inf``) where ``s <= es``; ``k``: the tolerance table's rsqrt ULP
                    budget, ``+ 1``: the correctly rounded value's half ULP and the ULP to
                    relative conversion
pool max (window)   ``max(e)`` over the window (``reduce_window`` max, padding ``-inf``)
pool add (k)        ``sum(e) + g(k) sum(|v| + e) + k tiny`` over the window (padding 0),
                    ``k`` the window's elements; average pooling divides it by a constant
constant            as a parameter (the literal is already rounded to the dtype)
dot_general (K)     ``p + g(K) (|A|@|B| + p) + 2 K tiny`` with ``p = |A|@eB + eA@|B| + eA@eB``
mixed dot (K)       ``p + g(K - 1) (|A|@|B| + p) + 2 K tiny``, ``u``/``tiny`` of the result
                    type (float32): bfloat16/float16 operands, ``preferred_element_type``
                    float32; their products are exact in float32 (8 + 8 and 11 + 11
                    significant bits <= 24), only the ``K - 1`` sums round
cumsum (n)          ``cumsum(e) + g(n) cumsum(|v| + e) + n tiny`` (any scan order)
loop (``trips``)    its body's ops charged by their rules on every trip, in order:
                    ``v * 3 + 1`` (multiply, add); ``tanh(v @ W)`` (dot_general of ``K`` =
                    the contracted axis, ``W`` an exact literal: ``eW = 0``; then tanh);
                    ``v + broadcast(reduce(v) * 2**-m)`` (reduce, multiply, add); a row
                    update ``v[i + 1] += v[i]`` (add on that row, the others unchanged).
                    A dot's error compounds, carried from trip to trip. Each
                    intermediate is held to the overflow rule below, and an ``inf``
                    stays ``inf`` through the body's ``tanh`` (a NaN is possible there)
iota                0 where the index is exact in the dtype, else ``u |v|`` (bfloat16 past 256,
                    float16 past 2048: one rounding of the index)
data movement       the operand's bound moved the same way (pad: 0 in the padding)
==================  ========================================================================

The sums of a reduce, a dot and a cumsum are charged at the result dtype's ``u``: a
bfloat16 reduce may accumulate in bfloat16 (StableHLO's reduce body is a bfloat16 add;
XLA:CPU's bfloat16 cumsum does), so the bound assumes nothing wider. Where a program asks
for float32 accumulation (the mixed dot), the float32 ``u`` applies.

An element whose bound reaches the dtype's range (``|v| + e >= max``) may overflow:
any value, an infinity or NaN is accepted there, and so downstream (``e = inf``).
The float64 reference's own rounding (``2**-53`` relative per op) is covered by the
``u`` of every rounding node; the non-rounding nodes are exact in both.
The comparison adds the rounding of the expected value to the dtype
(``eps/2 |v| + smallest subnormal``). Derivation and sources: docs/programs.md.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.helpers.error_bounds import ErrorBound
from conformance.programs import dag
from conformance.programs import float_format
from conformance.programs.dag import Node, Program


def _moved(node: Node, arrays: list[np.ndarray], idx: np.ndarray, pad: float | None = None
           ) -> np.ndarray:
    """A data-movement op applied to float64 arrays (values or bounds)."""
    wide = dataclasses.replace(node, dtype="float64")
    if pad is not None:
        wide = dataclasses.replace(wide, attrs=tuple((k, pad if k == "value" else v)
                                                     for k, v in node.attrs))
    return dag.OPS[node.op].numpy(wide, arrays, idx)


def _node(node: Node, vals: list[np.ndarray], errs: list[np.ndarray], idx: np.ndarray,
          f: float_format.FloatFormat, under: float) -> tuple[np.ndarray, np.ndarray]:
    """``(v, e)`` of ``node`` from its operands', in format ``f`` (the node's dtype) with
    the underflow allowance ``under`` of one rounding."""
    op, k_ulp, U = node.op, f.ulp, f.eps

    def _rnd(mag: np.ndarray) -> np.ndarray:
        return U * mag + under
    if op in ("negate", "abs"):
        return (-vals[0] if op == "negate" else np.abs(vals[0])), errs[0]
    if op in ("add", "subtract"):
        v = vals[0] + vals[1] if op == "add" else vals[0] - vals[1]
        e = errs[0] + errs[1]
        return v, e + _rnd(np.abs(v) + e)
    if op == "multiply":
        (a, b), (ea, eb) = vals, errs
        v = a * b
        p = np.abs(a) * eb + np.abs(b) * ea + ea * eb
        return v, p + _rnd(np.abs(v) + p)
    if op in ("maximum", "minimum"):
        return (np.maximum if op == "maximum" else np.minimum)(*vals), np.maximum(*errs)
    if op == "tanh":
        v = np.tanh(vals[0])
        return v, np.minimum(errs[0], 2.0) + k_ulp * U * (np.abs(v) + errs[0]) + under
    if op == "logistic":  # |logistic'| <= 1/4, values in (0, 1)
        v = 1.0 / (1.0 + np.exp(-vals[0]))
        return v, np.minimum(errs[0] / 4, 1.0) + k_ulp * U * (v + errs[0] / 4) + under
    if op == "relu":
        return np.maximum(vals[0], 0.0), errs[0]
    if op == "divide":  # |a/b - a'/b'| <= (ea + |v| eb) / (|b| - eb) while |b| > eb
        (a, b), (ea, eb) = vals, errs
        v = a / b
        room = np.abs(b) - eb
        p = np.where(room > 0, (ea + np.abs(v) * eb) / np.where(room > 0, room, 1.0), np.inf)
        return v, p + _rnd(np.abs(v) + p)
    if op == "exp":
        v = np.exp(vals[0])
        p = v * np.expm1(errs[0])
        return v, p + k_ulp * U * (v + p) + under
    if op == "select":
        a, b, c, d = vals
        ea, eb, ec, ed = errs
        pred = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
                "EQ": np.equal, "NE": np.not_equal}[node.attr("dir")](a, b)
        near = ea + eb
        amb = (near > 0) & (np.abs(a - b) <= near)
        e = np.where(amb, np.maximum(ec, ed) + np.abs(c - d), np.where(pred, ec, ed))
        return np.where(pred, c, d), e
    if op == "reduce":
        axes, kind = node.attr("axes"), node.attr("kind")
        if kind in ("max", "min"):
            fn = np.max if kind == "max" else np.min
            return fn(vals[0], axis=axes), np.max(errs[0], axis=axes)
        n = int(np.prod([vals[0].shape[a] for a in axes]))
        s = np.sum(np.abs(vals[0]) + errs[0], axis=axes)
        return np.sum(vals[0], axis=axes), np.sum(errs[0], axis=axes) + f.growth(n) * s + n * under
    if op == "rsqrt":  # mean value theorem on [s - es, s + es], s - es > 0
        s, es = vals[0], errs[0]
        v = 1.0 / np.sqrt(s)
        room = s - es
        p = np.where(room > 0, es / (2 * np.where(room > 0, room, 1.0) ** 1.5), np.inf)
        k = tolerances.ulp_bound("rsqrt", node.dtype)
        return v, p + (k + 1) * U * (v + p) + under
    if op == "pool":
        how = (node.attr("window"), node.attr("strides"), node.attr("padding"))
        if node.attr("kind") == "max":
            return dag.windowed(vals[0], *how, np.max, -np.inf), \
                dag.windowed(errs[0], *how, np.max, 0.0)
        k = int(np.prod(node.attr("window")))
        s = dag.windowed(np.abs(vals[0]) + errs[0], *how, np.sum, 0.0)
        return dag.windowed(vals[0], *how, np.sum, 0.0), \
            dag.windowed(errs[0], *how, np.sum, 0.0) + f.growth(k) * s + k * under
    if op in ("dot_general", "dot_mixed"):
        (cx, cy), (bx, by) = node.attr("contract"), node.attr("batch")
        k = int(np.prod([vals[0].shape[a] for a in cx]))

        def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return dag.einsum_dot(x, y, cx, cy, bx, by)
        (a, b), (ea, eb) = vals, errs
        p = dot(np.abs(a), eb) + dot(ea, np.abs(b)) + dot(ea, eb)
        sums = f.growth(k - 1 if op == "dot_mixed" else k)   # mixed: exact products
        return dot(a, b), p + sums * (dot(np.abs(a), np.abs(b)) + p) + 2 * k * under
    if op == "cumsum":
        axis, rev = node.attr("axis"), node.attr("reverse")
        n = vals[0].shape[axis]
        flip = (lambda x: np.flip(x, axis)) if rev else (lambda x: x)

        def cum(x: np.ndarray) -> np.ndarray:
            return flip(np.cumsum(flip(x), axis=axis))
        return cum(vals[0]), cum(errs[0]) + f.growth(n) * cum(np.abs(vals[0]) + errs[0]) + \
            n * under
    if op == "loop":
        return _loop(node, vals[0], errs[0], idx, f, under)
    if op == "pad":
        return _moved(node, vals, idx), _moved(node, errs, idx, pad=0.0)
    if op == "iota":   # an index the dtype cannot hold is rounded once
        v = _moved(node, [], idx)
        return v, np.where(f.round(v) == v, 0.0, U * np.abs(v))
    # data movement: the values and their bounds move alike
    return _moved(node, vals, idx), _moved(node, errs, idx)


def _may_overflow(v: np.ndarray, e: np.ndarray, f: float_format.FloatFormat) -> np.ndarray:
    """``e``, infinite where the value may have overflowed (``|v| + e`` reaches the
    format's largest value) or is not finite."""
    return np.where(~np.isfinite(v) | ~np.isfinite(e) | (np.abs(v) + e >= f.max), np.inf, e)


def _loop(node: Node, v: np.ndarray, e: np.ndarray, idx: np.ndarray,
          f: float_format.FloatFormat, under: float) -> tuple[np.ndarray, np.ndarray]:
    """``(v, e)`` of a ``loop`` node: its body's ops charged by their own rules on every
    trip, each intermediate held to the overflow rule (an intermediate that may overflow
    leaves any value downstream, ``tanh`` included: its NaN is possible)."""
    body, dt = node.attr("body"), node.dtype

    def step(op: str, vals: list[np.ndarray], errs: list[np.ndarray], **attrs: object
             ) -> tuple[np.ndarray, np.ndarray]:
        one = Node(op, (), tuple(sorted(attrs.items())), np.shape(vals[0]), dt)
        out_v, out_e = _node(one, vals, errs, idx, f, under)
        out_v = np.asarray(out_v, np.float64)
        return out_v, _may_overflow(out_v, np.asarray(out_e, np.float64), f)
    exact = np.zeros(())
    for i in range(node.attr("trips")):
        if body == "affine":        # v * 3 + 1
            v, e = step("multiply", [v, np.full((), 3.0)], [e, exact])
            v, e = step("add", [v, np.ones(())], [e, exact])
        elif body == "dot":         # tanh(v @ W) along the axis, W exact
            a, w = node.attr("axis"), dag.loop_weights(node)
            v, e = step("dot_general", [v, w], [e, np.zeros_like(w)],
                        contract=((a,), (0,)), batch=((), ()))
            v, e = np.moveaxis(v, -1, a), np.moveaxis(e, -1, a)
            inf = np.isinf(e)
            v, e = step("tanh", [v], [e])
            e = np.where(inf, np.inf, e)
        elif body == "reduce":      # v + broadcast(reduce(v) * scale)
            a = node.attr("axis")
            r, er = step("reduce", [v], [e], axes=(a,), kind=node.attr("kind"))
            if node.attr("scale") != 1:
                r, er = step("multiply", [r, np.full((), float(node.attr("scale")))], [er, exact])
            spread = [np.broadcast_to(np.expand_dims(x, a), v.shape) for x in (r, er)]
            v, e = step("add", [v, spread[0]], [e, spread[1]])
        elif body == "dus":         # row i + 1 += row i, written back
            a = node.attr("axis")
            at = (slice(None),) * a
            row_v, row_e = step("add", [v[at + (i + 1,)], v[at + (i,)]],
                                [e[at + (i + 1,)], e[at + (i,)]])
            v, e = v.copy(), e.copy()
            v[at + (i + 1,)], e[at + (i + 1,)] = row_v, row_e
        else:
            raise ValueError(f"dag_bounds: a float loop has no body {body!r}")
    return v, e


def evaluate(program: Program, inputs: list[np.ndarray], idx: np.ndarray, *,
             ftz: bool = True, daz: bool = True,
             controls: float_control_modes.FloatControls | None = None
             ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(v, e)`` of every node of a float program (float64 arrays): the float64 value
    and the running error bound, each node at its own dtype's constants
    (:func:`float_format.of`). ``e`` is ``inf`` where the value may have overflowed.
    ``ftz``/``daz``: the backend's declared controls for every dtype; ``controls`` (the
    ``float_controls`` fixture's declaration), when given, decides them per dtype
    instead: a flushing dtype may lose ``tiny`` per rounding and a subnormal input, an
    IEEE one half the smallest subnormal per rounding and nothing on input. Raises
    ValueError for a program of another family."""
    if program.family != "float":
        raise ValueError(f"dag_bounds.evaluate: argument 'program' must be a float program, "
                         f"got family {program.family!r}")

    def flushes(dtype: str) -> tuple[bool, bool]:
        if controls is None:
            return ftz, daz
        return controls.flushes_results(dtype), controls.flushes_inputs(dtype)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for n in program.nodes:
            f = float_format.of(n.dtype)
            results, reads = flushes(n.dtype)
            if n.op in ("param", "constant"):
                x = np.asarray(inputs[n.attr("index")] if n.op == "param" else
                               dag.OPS["constant"].numpy(n, [], idx)).astype(np.float64)
                out.append((x, np.where((np.abs(x) < f.tiny) & reads, np.abs(x), 0.0)))
                continue
            v, e = _node(n, [out[a][0] for a in n.args], [out[a][1] for a in n.args], idx,
                         f, f.under(results))
            v, e = np.asarray(v, np.float64), np.asarray(e, np.float64)
            out.append((v, _may_overflow(v, e, f)))
    return out


def expected_and_bound(v: np.ndarray, e: np.ndarray, dtype: str = "float32"
                       ) -> tuple[np.ndarray, ErrorBound]:
    """The expected result in ``dtype`` (the node's) and the :class:`ErrorBound` to hold a
    device's result to, from a node's ``(v, e)``: ``e`` plus the rounding of ``v`` to
    ``dtype``; any value (infinities and NaN included) where ``e`` is infinite."""
    f = float_format.of(dtype)
    free = ~np.isfinite(e)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = np.where(free, 0.0, v).astype(f.dtype)
        allowed = np.where(free, np.inf, e + 0.5 * f.eps * np.abs(v) + f.denorm_min)
    return expected, ErrorBound(allowed, "running error bound (Wilkinson) of the program",
                                overflow=free, nan=free)
