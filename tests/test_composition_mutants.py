"""The composition mutants (tests/mutants/composition.py) on programs lowered by the
installed jax: each breaks a program where two ops meet (the healthy CPU client computes
NumPy's result, the mutant does not) and leaves the single-op program alone."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.programs import sharded_programs
from conformance.programs.compiled_programs import ProgramCache, lower
from tests.mutants import CATALOG, stablehlo_rewrite
from tests.test_mutant_rewrite import _op_names, _run

RNG = np.random.default_rng(0)
X = RNG.integers(-4, 5, (3, 4)).astype(np.float32)     # small integers: exact float sums
B = RNG.integers(-4, 5, (4, 5)).astype(np.float32)
ROW = RNG.integers(-4, 5, (4,)).astype(np.float32)
PATCH = RNG.integers(10, 20, (2, 2)).astype(np.float32)
BIAS = RNG.integers(-4, 5, (3, 5)).astype(np.float32)
ROWS = np.repeat(RNG.integers(-4, 5, (3, 1)), 4, axis=1).astype(np.float32)
SIGNAL = np.arange(9, dtype=np.int32).reshape(1, 1, 9)
KERNEL = np.array([1, 2, 3, 4], np.int32).reshape(1, 1, 4)
#: bfloat16 rows whose sums (257, 259) float32 holds and bfloat16 rounds (256, 260).
#: Rows x, x - mean = +-1 or +-2: the variance (1, 4) and its rsqrt (1, 1/2) are exact.
NORM_ROWS = np.array([[3, 1, 3, 1], [6, 2, 6, 2], [-1, 1, 1, -1]], np.float32)
RAMP = np.arange(10, dtype=np.float32).reshape(2, 5)
WIDE_ROWS = np.array([[100, 100, 56, 1], [128, 64, 66, 1]], jnp.bfloat16)
ONES = np.ones((4, 3), jnp.bfloat16)
#: Twice a permutation: products of X and its powers stay small integers (exact).
DOUBLE_SWAP = 2 * np.eye(4, dtype=np.float32)[[1, 2, 3, 0]]
_WIDE_RNG = np.random.default_rng(1)   # its own: RNG's later draws stay as they were
TALL = _WIDE_RNG.integers(-4, 5, (70, 3)).astype(np.float32)    # 70 > 64 rows: past a tile
TALL_RHS = _WIDE_RNG.integers(-4, 5, (70, 2)).astype(np.float32)
VEC = _WIDE_RNG.integers(-4, 5, (3,)).astype(np.float32)


def _mixed(a, b, to=jnp.float32):
    return jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=to)


def _updated(x, u, at):
    out = x.copy()
    out[at:at + u.shape[0], at:at + u.shape[1]] = u
    return out


def _layer_norm(x):   # as the generator writes it (dag_norm_pool.layer_norm), eps = 0
    n = np.full((x.shape[0],), x.shape[1], np.float32)
    mean = jax.lax.div(jax.lax.reduce_sum(x, (1,)), n)
    centered = jax.lax.sub(x, jax.lax.broadcast_in_dim(mean, x.shape, (0,)))
    var = jax.lax.div(jax.lax.reduce_sum(jax.lax.mul(centered, centered), (1,)), n)
    return jax.lax.mul(centered, jax.lax.broadcast_in_dim(jax.lax.rsqrt(var), x.shape, (0,)))


def _looped(body, trips=2):
    return lambda x: jax.lax.fori_loop(0, trips, body, x)


def _trips(x, body, trips=2):   # NumPy: the same loop
    for i in range(trips):
        x = body(i, x.copy())
    return x


def _row_update(i, v):   # row i + 1 += row i, written back at i + 1 (dag_loops' dus body)
    return jax.lax.dynamic_update_slice_in_dim(
        v, jax.lax.dynamic_slice_in_dim(v, i + 1, 1, 0) + jax.lax.dynamic_slice_in_dim(v, i, 1, 0),
        i + 1, 0)


def _np_row_update(i, v):
    v[i + 1] += v[i]
    return v


def _contract(k):   # dot_general contracting a's axis k with b's axis 0
    return lambda a, b: jax.lax.dot_general(a, b, (((k,), (0,)), ((), ())))


def _max_pool(x):     # a window of 3, stride 1, 'SAME': one element of padding each side
    return jax.lax.reduce_window(x, np.float32(-np.inf), jax.lax.max, (1, 3), (1, 1), "SAME")


# mutant: (composed program, its arguments, NumPy's outputs, single-op program or None)
CASES = {
    "fused-reduce-drops-tail": (lambda x: jnp.sum(x * 2 + 1, axis=1), [X],
                                [np.sum(X * 2 + 1, axis=1)], lambda x: jnp.sum(x, axis=1)),
    "fused-dot-drops-last-contracting": (lambda a, b: (a * 2) @ b, [X, B], [(X * 2) @ B],
                                         lambda a, b: a @ b),
    "multi-output-aliasing": (
        lambda x, u: (jax.lax.dynamic_update_slice(x, u, (0, 0)),
                      jax.lax.dynamic_update_slice(x, u, (1, 1))),
        [X, PATCH], [_updated(X, PATCH, 0), _updated(X, PATCH, 1)],
        lambda x, u: jax.lax.dynamic_update_slice(x, u, (1, 1))),
    "fused-broadcast-reversed": (lambda x, y: x + y[None, :], [X, ROW], [X + ROW[None, :]],
                                 lambda x, y: jnp.broadcast_to(y, (3, 4))),
    "epilogue-drops-bias": (   # ReLU (max(x, 0)): integer-valued, exact
        lambda a, b, c: jax.lax.max(jax.lax.add(jnp.dot(a, b), c),
                                    jnp.zeros((3, 5), jnp.float32)), [X, B, BIAS],
        [np.maximum(X @ B + BIAS, 0)], lambda a, b, c: jax.lax.add(jnp.dot(a, b), c)),
    "softmax-drops-normalization": (   # constant rows: exp(0) = 1, four of them: 1/4 exact
        lambda x: jax.nn.softmax(x, axis=1), [ROWS], [np.full((3, 4), 0.25, np.float32)],
        lambda x: jnp.exp(x) / (x + 10)),
    "mixed-dot-accumulates-in-bf16": (   # a bfloat16 dot (bfloat16 result) is left alone
        _mixed, [WIDE_ROWS, ONES], [np.array([[257.0] * 3, [259.0] * 3], np.float32)],
        lambda a, b: _mixed(a, b, jnp.bfloat16)),
    "layernorm-variance-uncentered": (   # a square of x - max (no mean) is left alone
        _layer_norm, [NORM_ROWS], [np.array([[1, -1, 1, -1]] * 2 + [[-1, 1, 1, -1]],
                                            np.float32)],
        lambda x: jnp.square(x - jnp.max(x, axis=1, keepdims=True))),
    "pool-ignores-low-padding": (   # a cumsum's reduce_window (padding = window - 1) too
        _max_pool, [RAMP], [np.array([[1, 2, 3, 4, 4], [6, 7, 8, 9, 9]], np.float32)],
        lambda x: jax.lax.cumsum(x, 1)),
    "loop-dot-drops-last-trip": (   # a loop without a dot (v * 3 + 1) is left alone
        _looped(lambda i, v: v @ DOUBLE_SWAP), [X], [X @ DOUBLE_SWAP @ DOUBLE_SWAP],
        _looped(lambda i, v: v * 3 + 1)),
    "loop-reduce-drops-tail": (   # a reduce outside a loop is left alone
        _looped(lambda i, v: v + jnp.sum(v, axis=1, keepdims=True)), [X],
        [_trips(X, lambda i, v: v + v.sum(axis=1, keepdims=True))],
        lambda x: jnp.sum(x, axis=1)),
    "loop-update-slice-ignores-trip": (   # jax's scan stacking its outputs is left alone
        _looped(_row_update), [X], [_trips(X, _np_row_update)],
        lambda x: jax.lax.scan(lambda c, r: (c + r, c + r), x[0] * 0, x)[1]),
    "dot-reads-wide-transpose-untransposed": (   # a transpose of 60 rows is left alone
        lambda a, b: _contract(1)(jax.lax.transpose(a, (1, 0)), b), [TALL, TALL_RHS],
        [TALL.T @ TALL_RHS], lambda a, b: _contract(1)(jax.lax.transpose(a[:60], (1, 0)), b[:60])),
    "reduce-reads-wide-transpose-untransposed": (   # a reduce of the operand itself too
        lambda a: jnp.sum(jax.lax.transpose(a, (1, 0)), axis=1), [TALL], [TALL.sum(axis=0)],
        lambda a: jnp.sum(a, axis=0)),
    "broadcast-dot-drops-tail-tile": (   # a broadcast to 64 rows, one tile, is left alone
        lambda v, b: _contract(0)(jax.lax.broadcast_in_dim(v, (70, 3), (1,)), b), [VEC, TALL_RHS],
        [np.outer(VEC, TALL_RHS.sum(axis=0))],
        lambda v, b: _contract(0)(jax.lax.broadcast_in_dim(v, (64, 3), (1,)), b[:64])),
    "strided-conv-reverses-kernel": (
        lambda x: jax.lax.conv_general_dilated(x, KERNEL, (2,), ((1, 0),),
                                               dimension_numbers=("NCH", "OIH", "NCH")),
        [SIGNAL], [np.array([[[11, 30, 50, 70]]], np.int32)],
        lambda x: jax.lax.conv_general_dilated(x, KERNEL, (1,), ((1, 0),),
                                               dimension_numbers=("NCH", "OIH", "NCH"))),
}


@pytest.fixture(scope="module")
def client():
    from runtime._client import Client
    from runtime._compat import native

    return Client(native.make_cpu_client(num_devices=4))


def _lowered(client, fn, args):
    from runtime.xla_bridge import client_platform

    return lower(fn, args, client_platform(client))


def _outputs(client, mutant, name, fn, args):
    broken = CATALOG[mutant].client(client._native) if mutant else client
    outs, _ = ProgramCache(broken).run(name, fn, args, broken.local_devices()[0])
    return outs


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_composition_mutant_breaks_the_composed_program(client, mutant):
    fn, args, expected, _ = CASES[mutant]
    text = _lowered(client, fn, args)
    changed = stablehlo_rewrite.apply(text, CATALOG[mutant].client.mutation, mutant)
    assert changed is not None and changed != text
    for out, want in zip(_outputs(client, None, mutant, fn, args), expected, strict=True):
        np.testing.assert_array_equal(out, want)
    outs = _outputs(client, mutant, mutant, fn, args)
    assert any(not np.array_equal(o, w) for o, w in zip(outs, expected, strict=True)), (
        f"{mutant} computes the right result of a composed program")


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_composition_mutant_leaves_the_single_op_program_alone(client, mutant):
    _, args, _, single = CASES[mutant]
    text = _lowered(client, single, args)
    assert stablehlo_rewrite.apply(text, CATALOG[mutant].client.mutation, mutant) is None
    healthy = _outputs(client, None, "single", single, args)
    for out, want in zip(_outputs(client, mutant, "single", single, args), healthy, strict=True):
        np.testing.assert_array_equal(out, want)


def _sum_case(client, fn, spec, out_spec=PartitionSpec()):
    """(fn, x, in sharding, out sharding, expected, out shape, text) for ``_run``: ``fn`` of
    an int-valued float32[4, 8] sharded by ``spec`` over a 1-D mesh of 4 devices."""
    from runtime.xla_bridge import client_platform

    mesh = Mesh(np.array(client.local_devices()), ("d",))
    x = RNG.integers(-4, 5, (4, 8)).astype(np.float32)
    in_s, out_s = NamedSharding(mesh, spec), NamedSharding(mesh, out_spec)
    expected = np.asarray(fn(x))
    text = sharded_programs.lower(fn, [x], [in_s], out_s, client_platform(client))
    return fn, x, in_s, out_s, expected, expected.shape, text


def test_partitioner_mutant_returns_each_devices_local_partial_sum(client):
    mutant = CATALOG["partitioner-forgets-reduction"]
    case = _sum_case(client, lambda x: jnp.sum(x * 2, axis=1) + 1, PartitionSpec(None, "d"))
    changed = stablehlo_rewrite.apply(case[-1], mutant.client.mutation, mutant.name)
    assert "sdy.manual_computation" in _op_names(changed)
    healthy, problem = _run(None, client, case)
    assert not problem, problem
    np.testing.assert_array_equal(healthy, case[4])
    out, problem = _run(mutant.client, client, case)
    x = case[1]
    assert "disagree" in problem, problem          # replicas hold different partial sums
    partial = [np.sum(x[:, 2 * d:2 * d + 2] * 2, axis=1) + 1 for d in range(4)]
    assert any(np.array_equal(out, p) for p in partial), (out, partial)  # one device's


def test_partitioner_mutant_breaks_a_data_parallel_gradient_step(client):
    """A linear model's step, the batch sharded: the gradient's contraction over the
    batch (a dot_general) and the loss (a reduce) each lose their all-reduce."""
    from runtime import xla_client as xc
    from runtime.xla_bridge import client_platform

    mutant = CATALOG["partitioner-forgets-reduction"]
    mesh = Mesh(np.array(client.local_devices()), ("d",))
    w, x = ROW, RNG.integers(-4, 5, (8, 4)).astype(np.float32)
    y = RNG.integers(-4, 5, (8,)).astype(np.float32)

    def loss(w, x, y):
        return jnp.sum((x @ w - y) ** 2)

    shardings = [NamedSharding(mesh, PartitionSpec()), NamedSharding(mesh, PartitionSpec("d")),
                 NamedSharding(mesh, PartitionSpec("d"))]
    replicated = NamedSharding(mesh, PartitionSpec())
    for name, fn, want in [("loss", loss, np.sum((x @ w - y) ** 2)),
                           ("step", lambda w, x, y: w - jax.grad(loss)(w, x, y),
                            w - 2 * x.T @ (x @ w - y))]:
        text = sharded_programs.lower(fn, [w, x, y], shardings, replicated, client_platform(client))
        assert stablehlo_rewrite.apply(text, mutant.client.mutation, mutant.name) is not None, name
        outs = {}
        for broken in (None, mutant.client):
            c = broken(client._native) if broken else client
            outs[broken] = sharded_programs.ShardedRunner(c, xc).run(name, fn, [w, x, y], shardings,
                                                                     replicated, np.shape(want))[:2]
        healthy, problem = outs[None]
        assert not problem, problem
        np.testing.assert_array_equal(healthy, want)
        out, problem = outs[mutant.client]
        assert problem or not np.array_equal(out, want), name


@pytest.mark.parametrize("fn,spec", [
    (lambda x: jnp.sum(x, axis=1), None),                          # unsharded
    (lambda x: jnp.sum(x * 2, axis=0), PartitionSpec(None, "d")),  # sharded, kept axis
], ids=["unsharded", "sum-over-unsharded-axis"])
def test_partitioner_mutant_leaves_sums_over_unsharded_axes_alone(client, fn, spec):
    mutant = CATALOG["partitioner-forgets-reduction"]
    if spec is None:
        x = RNG.integers(-4, 5, (4, 8)).astype(np.float32)
        text = _lowered(client, fn, [x])
        assert stablehlo_rewrite.apply(text, mutant.client.mutation, mutant.name) is None
        out = _outputs(client, mutant.name, "unsharded", fn, [x])[0]
        np.testing.assert_array_equal(out, np.sum(x, axis=1))
        return
    case = _sum_case(client, fn, spec, PartitionSpec("d"))
    assert stablehlo_rewrite.apply(case[-1], mutant.client.mutation, mutant.name) is None
    out, problem = _run(mutant.client, client, case)
    assert not problem, problem
    np.testing.assert_array_equal(out, case[4])


def test_a_generated_program_with_a_strided_convolution_kills_the_conv_mutant(client):
    """The generator's convolutions (dag_strategy, integer family) reach the mutant: the
    first drawn integer program holding a strided convolution of 2 or more taps is right
    on the healthy client and wrong on ``strided-conv-reverses-kernel``. (Under the ci
    profile's 8 derandomized examples test_integer_programs draws none; the dev and
    nightly profiles do.)"""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st

    from conformance.programs import dag, dag_strategy

    @st.composite
    def with_inputs(draw):
        program = draw(dag_strategy.programs("integer", budget=512))
        return (program, *dag_strategy.inputs(draw, program))

    def as_the_mutant_computes(program):   # strided kernels reversed along their taps
        nodes = []
        for n in program.nodes:
            if n.op == "conv" and n.attr("stride") > 1:
                k = np.array(n.attr("kernel")).reshape(n.attr("kernel_shape"))[:, :, ::-1]
                attrs = dict(n.attrs, kernel=tuple(int(v) for v in k.ravel()))
                n = dataclasses.replace(n, attrs=tuple(sorted(attrs.items())))
            nodes.append(n)
        return dataclasses.replace(program, nodes=tuple(nodes))

    def told_apart(found):   # the NumPy evaluations differ: the mutant is observable
        program, inputs, idx = found
        if not any(n.op == "conv" and n.attr("stride") > 1 for n in program.nodes):
            return False
        right = dag.evaluate(program, inputs, idx)
        wrong = dag.evaluate(as_the_mutant_computes(program), inputs, idx)
        return any(not np.array_equal(right[k], wrong[k]) for k in program.outputs)

    program, inputs, idx = find(with_inputs(), told_apart,
                                settings=settings(max_examples=400, database=None,
                                                  derandomize=True, phases=[Phase.generate],
                                                  suppress_health_check=list(HealthCheck)))
    want = dag.evaluate(program, inputs, idx)
    results = {}
    for mutant in (None, "strided-conv-reverses-kernel"):
        results[mutant] = _outputs(client, mutant, f"conv_{mutant}", program.function(),
                                   inputs + [idx])
    assert all(np.array_equal(o, want[k]) for o, k in zip(results[None], program.outputs))
    assert any(not np.array_equal(o, want[k])
               for o, k in zip(results["strided-conv-reverses-kernel"], program.outputs))
