"""Self-tests of the oracles of the programs, programs_spmd and models areas.

Each oracle must fail on the wrong results a broken backend returns (a fused reduce
that drops its tail, a dot that drops a contracting index, a broadcast read in the
wrong order, a result off by more than the running error bound, a model step that
forgets a cross-device sum) and pass healthy results, flush-to-zero included; and
bad input gets a clear error.
"""

from __future__ import annotations

import dataclasses

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import dag, dag_bounds, dag_loops, dag_strategy, model_oracle, models
from conformance.programs import float_format
from conformance.programs.dag import Node, Program
from conformance.test_programs import check_outputs

pytestmark = pytest.mark.filterwarnings(
    "ignore::hypothesis.errors.NonInteractiveExampleWarning")
_SETTINGS = settings(max_examples=15, deadline=None, database=None, derandomize=True,
                     suppress_health_check=list(HealthCheck))


def _program(family: str, *nodes: Node, outputs=None) -> Program:
    return Program(family, tuple(nodes), outputs or (len(nodes) - 1,))


def _jax_outputs(program: Program, inputs, idx):
    with jax.default_device(jax.devices("cpu")[0]):
        return [np.asarray(o) for o in jax.jit(program.function())(*inputs, idx)]


IDX = np.zeros(dag.IDX_LEN, np.int32)


@_SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("family", dag.FAMILIES)
def test_generated_programs_agree_with_jax_cpu(family, data):
    """The NumPy evaluation (and, for floats, the bound) accepts what jax's own CPU
    backend computes for the same source: the oracle and the program are one."""
    program = data.draw(dag_strategy.programs(family, budget=256, max_ops=12))
    inputs, idx = dag_strategy.inputs(data.draw, program)
    check_outputs(program, _jax_outputs(program, inputs, idx), inputs, idx, "jax cpu",
                  float_control_modes.XLA_CPU)


@_SETTINGS
@given(data=st.data())
def test_float_programs_end_in_every_model_pattern(data, applied_model_patterns):
    """``model_patterns=4`` (``test_float_programs``): every program applies the four
    patterns of ``MODEL_PATTERNS`` after its drawn ops, and returns each result, whatever
    else the catalog draws gave: ``ci``'s 8 examples kill the patterns' mutants by
    structure, not by the luck of the draws (a change of the draws once left
    ``epilogue-drops-bias``, then ``softmax-drops-normalization``, with nothing to break)."""
    applied = applied_model_patterns
    applied.clear()
    program = data.draw(dag_strategy.programs("float", budget=4096, model_patterns=4))
    forced = applied[-4:]
    assert {kind for kind, _ in forced} == set(dag_strategy.MODEL_PATTERNS), applied
    assert all(out in program.outputs for _, out in forced), (forced, program.outputs)


@pytest.fixture(scope="module")
def applied_model_patterns():
    """The (kind, result) of every model pattern the builder applies, in order."""
    applied: list[tuple[str, int]] = []
    apply = dag_strategy._Builder.apply

    def recording(self, op, x):
        out = apply(self, op, x)
        if op in dag_strategy.MODEL_PATTERNS and out is not None:
            applied.append((op, out))
        return out
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dag_strategy._Builder, "apply", recording)
        yield applied


def _reduce_of_product(x: np.ndarray) -> Program:
    return _program("float", Node("param", (), (("index", 0),), x.shape, "float32"),
                    Node("multiply", (0, 0), (), x.shape, "float32"),
                    Node("reduce", (1,), (("axes", (1,)), ("kind", "add")), x.shape[:1],
                         "float32"))


def test_float_oracle_fails_a_reduce_that_drops_its_tail():
    x = np.random.default_rng(0).uniform(-2, 2, (3, 129)).astype(np.float32)
    program = _reduce_of_product(x)
    healthy = np.sum(x * x, axis=1, dtype=np.float32)
    check_outputs(program, [healthy], [x], IDX, "healthy", float_control_modes.XLA_CPU)
    dropped = np.sum((x * x)[:, :-1], axis=1, dtype=np.float32)
    with pytest.raises(AssertionError, match="running error bound"):
        check_outputs(program, [dropped], [x], IDX, "tail dropped", float_control_modes.XLA_CPU)


def test_float_oracle_accepts_flush_to_zero_and_rejects_one_ulp_per_element_bias():
    """Subnormal inputs read as zero and subnormal products flushed pass; a result
    moved by 8 ULP (past the two roundings of x*x + y) fails."""
    tiny = np.finfo(np.float32).tiny
    x = np.array([tiny / 4, -tiny / 2, 1.5, 3e-20], np.float32)
    program = _program("float", Node("param", (), (("index", 0),), (4,), "float32"),
                       Node("multiply", (0, 0), (), (4,), "float32"),
                       Node("add", (1, 0), (), (4,), "float32"))
    flushed = np.where(np.abs(x) < tiny, 0, x * x + x).astype(np.float32)
    flushed[3] = 0 + x[3]  # 9e-40 flushed to 0, then + x
    check_outputs(program, [flushed], [x], IDX, "ftz", float_control_modes.XLA_CPU)
    exact = (x.astype(np.float64) ** 2 + x).astype(np.float32)
    moved = np.nextafter(exact, np.float32(np.inf))
    for _ in range(7):
        moved = np.nextafter(moved, np.float32(np.inf))
    with pytest.raises(AssertionError):
        check_outputs(program, [moved], [x], IDX, "8 ulp", float_control_modes.XLA_CPU)


def test_exact_oracle_fails_a_dot_without_its_last_contracting_index():
    rng = np.random.default_rng(1)
    a = rng.integers(-5, 5, (4, 17)).astype(np.int32)
    program = _program("integer", Node("param", (), (("index", 0),), (4, 17), "int32"),
                       Node("negate", (0,), (), (4, 17), "int32"),
                       Node("dot_general", (1, 0), (("batch", ((), ())),
                                                    ("contract", ((1,), (1,)))), (4, 4),
                            "int32"))
    good = (-a) @ a.T
    check_outputs(program, [good.astype(np.int32)], [a], IDX, "healthy", float_control_modes.IEEE)
    bad = (-a[:, :-1]) @ a[:, :-1].T
    with pytest.raises(AssertionError, match="bitwise"):
        check_outputs(program, [bad.astype(np.int32)], [a],
                      IDX, "dropped", float_control_modes.IEEE)


def test_exact_oracle_fails_a_broadcast_read_in_reverse():
    v = np.arange(5, dtype=np.int32)
    program = _program("integer", Node("param", (), (("index", 0),), (5,), "int32"),
                       Node("broadcast_in_dim", (0,), (("dims", (1,)),), (3, 5), "int32"),
                       Node("add", (1, 1), (), (3, 5), "int32"))
    check_outputs(program, [np.broadcast_to(2 * v, (3, 5)).copy()], [v], IDX, "healthy",
                  float_control_modes.IEEE)
    with pytest.raises(AssertionError):
        check_outputs(program, [np.broadcast_to(2 * v[::-1], (3, 5)).copy()], [v], IDX,
                      "reversed", float_control_modes.IEEE)


def test_dynamic_starts_follow_jax_then_stablehlo():
    """A negative start counts from the end (jax), then clamps (StableHLO)."""
    x = np.arange(10, dtype=np.int32)
    node = Node("dynamic_slice", (0,), (("starts", (0,)),), (3,), "int32")
    for start, first in [(-1, 7), (-20, 0), (100, 7), (2, 2)]:
        idx = np.full(dag.IDX_LEN, start, np.int32)
        assert dag.OPS["dynamic_slice"].numpy(node, [x], idx).tolist() == [first, first + 1,
                                                                           first + 2]


def test_generated_source_is_the_program():
    """The source runs standalone and names every parameter and idx."""
    program = dag_strategy.programs("integer", budget=64).example()
    scope: dict = {}
    exec(program.source(), scope)  # noqa: S102
    import inspect
    assert list(inspect.signature(scope["program"]).parameters) == [
        f"p{k}" for k in range(len(program.params))] + ["idx"]


def test_strategy_and_bounds_reject_bad_input():
    with pytest.raises(ValueError, match="argument 'family'"):
        dag_strategy.programs("complex", budget=16).example()
    with pytest.raises(ValueError, match="budget"):
        dag_strategy.programs("float", budget=0).example()
    with pytest.raises(ValueError, match="over the budget"):
        dag_strategy.programs("float", budget=4, param_shapes=[(3, 3)]).example()
    with pytest.raises(ValueError, match="argument 'model_patterns'"):
        dag_strategy.programs("float", budget=16, model_patterns=5).example()
    with pytest.raises(ValueError, match="argument 'model_patterns'"):
        dag_strategy.programs("integer", budget=16, model_patterns=1).example()
    with pytest.raises(ValueError, match="float program"):
        dag_bounds.evaluate(_program("integer", Node("param", (), (("index", 0),), (1,),
                                                     "int32")), [np.zeros(1, np.int32)], IDX)


# ---- model oracle ----------------------------------------------------------------------
def test_model_oracle_passes_cpu_and_fails_a_forgotten_cross_device_sum():
    """XLA:CPU's own float32 result passes; the data-parallel step whose gradients sum
    only one device's rows of the batch (a partitioner that forgets the all-reduce)
    fails, and so does a bfloat16-rounded gradient."""
    model = models.MODELS["mlp_training_step"]
    args = models.data_parallel_args(np.random.default_rng(3), 4)
    ref, cpu = model_oracle.reference_outputs("selftest_mlp", model.fn, args)
    model_oracle.check(cpu, ref, cpu, model.outputs, model.reduction, "cpu itself")
    local = args[:6] + [args[6][:8], args[7][:8]]
    partial, _ = model_oracle.reference_outputs("selftest_mlp_local", model.fn, local)
    with pytest.raises(AssertionError, match="should be <="):
        model_oracle.check(partial, ref, cpu, model.outputs, model.reduction, "local sum")
    import ml_dtypes
    rounded = [c.astype(ml_dtypes.bfloat16).astype(np.float32) for c in cpu]
    with pytest.raises(AssertionError, match="should be <="):
        model_oracle.check(rounded, ref, cpu, model.outputs, model.reduction, "bf16")


def test_model_oracle_names_a_missing_output():
    with pytest.raises(AssertionError, match="returned 1 outputs, but the model has 2"):
        model_oracle.check([np.zeros(1)], [np.zeros(1)] * 2, [np.zeros(1)] * 2, ("a", "b"),
                           4, "count")


def test_model_bound_is_tight_enough_to_see_one_term():
    """Dropping one of ``n`` unit terms of a sum (relative 1/n) is far above the bound:
    with XLA:CPU's error e, K*e + n*eps*|ref| stays below 1e-2 relative for n <= 1024."""
    n = 1024
    allowed, _ = model_oracle.allowed_error(np.array([float(n)]), np.array([n * (1 + 2e-7)]),
                                            n)
    assert allowed < 1e-2 * n


def test_models_lower_at_both_widths():
    """Every model's float32 program computes in float32 (no float64 constants leak in):
    its outputs are float32."""
    for name, model in models.MODELS.items():
        args = model.args(np.random.default_rng(0))
        outs = jax.eval_shape(model.fn, *args)
        assert all(o.dtype == np.float32 for o in outs), name


def test_nodes_are_hashable_records():
    n = Node("reduce", (0,), (("axes", (0,)), ("kind", "add")), (), "int32")
    assert hash(n) == hash(dataclasses.replace(n))
    assert n.attr("kind") == "add"


def test_float_oracle_holds_an_ieee_backend_to_gradual_underflow():
    """``x + x`` of a subnormal flushed to zero passes under the flushing declaration
    (XLA:CPU's) and fails under ``ieee``, where the sum is exact."""
    from conformance.helpers import float_control_modes
    tiny = np.finfo(np.float32).tiny
    x = np.array([tiny / 8, 1.0], np.float32)
    program = _program("float", Node("param", (), (("index", 0),), (2,), "float32"),
                       Node("add", (0, 0), (), (2,), "float32"))
    flushed = np.array([0.0, 2.0], np.float32)
    check_outputs(program, [flushed], [x], IDX, "ftz", float_control_modes.XLA_CPU)
    check_outputs(program, [x + x], [x], IDX, "ieee exact", float_control_modes.IEEE)
    with pytest.raises(AssertionError):
        check_outputs(program, [flushed], [x], IDX, "flushed under ieee", float_control_modes.IEEE)


def test_add_insensitive_inputs_survive_an_add_of_zero():
    """What the sharded programs draw: x + 0.0 keeps every bit (no -0.0, no subnormal,
    no signaling NaN), and normal values, +-inf and quiet NaN payloads are kept."""
    bits = np.array([0x80000000, 0x80000001, 0x7F800001, 0xFF800005, 0x3F800000, 0x7F800000,
                     0xFFC00007, 0x00000001], np.uint32)
    x = dag_strategy.add_insensitive(bits.view(np.float32))
    assert x.view(np.uint32).tolist() == [0, 0, 0x7FC00001, 0xFFC00005, 0x3F800000,
                                          0x7F800000, 0xFFC00007, 0]
    with np.errstate(invalid="ignore"):
        assert np.array_equal((x + np.float32(0)).view(np.uint32), x.view(np.uint32))
    ints = np.array([-1, 0, 5], np.int16)
    assert np.array_equal(dag_strategy.add_insensitive(ints), ints)


@_SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("dtype", dag_strategy.LOW_PRECISION)
def test_low_precision_programs_agree_with_jax_cpu(dtype, data):
    """bfloat16 and float16 programs (mixed dots included): the bound at each node's
    dtype accepts jax's own CPU results."""
    program = data.draw(dag_strategy.programs("float", budget=256, max_ops=12, dtype=dtype))
    inputs, idx = dag_strategy.inputs(data.draw, program)
    check_outputs(program, _jax_outputs(program, inputs, idx), inputs, idx, "jax cpu",
                  float_control_modes.XLA_CPU)


def test_float_format_constants_come_from_finfo():
    """One helper for every dtype: float32's growth factor is ``n eps`` for every
    program size (the float32 bounds unchanged), bfloat16's the exact worst case past
    ``n eps/2 = 1``."""
    f32, bf16, f16 = (float_format.of(n) for n in ("float32", "bfloat16", "float16"))
    assert (f32.eps, f32.tiny, f32.denorm_min) == (2.0**-23, 2.0**-126, 2.0**-149)
    assert (bf16.eps, bf16.tiny, bf16.denorm_min) == (2.0**-7, 2.0**-126, 2.0**-133)
    assert (f16.eps, f16.tiny, f16.denorm_min, f16.max) == (2.0**-10, 2.0**-14, 2.0**-24, 65504.0)
    assert f32.growth(2**20) == 2**20 * f32.eps
    assert bf16.growth(1024) > 1024 * bf16.eps
    with pytest.raises(ValueError, match="float64"):
        float_format.of("float64")


def _mixed_dot(a: np.ndarray, b: np.ndarray) -> Program:
    p = [Node("param", (), (("index", k),), x.shape, "bfloat16") for k, x in enumerate((a, b))]
    return _program("float", *p, Node("dot_mixed", (0, 1), (("batch", ((), ())),
                                                             ("contract", ((1,), (0,)))),
                                      (a.shape[0], b.shape[1]), "float32"))


def test_mixed_dot_bound_accepts_float32_accumulation_and_fails_a_bfloat16_result():
    """bfloat16 operands, float32 result: jax CPU's float32 accumulation passes; the
    same result rounded to bfloat16 (mixed-dot-accumulates-in-bf16) does not."""
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-2, 2, s).astype(ml_dtypes.bfloat16) for s in ((5, 24), (24, 7)))
    program = _mixed_dot(a, b)
    out = _jax_outputs(program, [a, b], IDX)[0]
    assert out.dtype == np.float32
    check_outputs(program, [out], [a, b], IDX, "jax cpu", float_control_modes.XLA_CPU)
    rounded = out.astype(ml_dtypes.bfloat16).astype(np.float32)
    with pytest.raises(AssertionError):
        check_outputs(program, [rounded], [a, b], IDX, "bf16 result", float_control_modes.XLA_CPU)


def _layer_norm_program(shape: tuple[int, int], eps: float) -> Program:
    """A layer norm along axis 1 of a float32 ``shape`` parameter, as dag_norm_pool draws it."""
    rows, f32 = shape[:1], "float32"
    return _program(
        "float", Node("param", (), (("index", 0),), shape, f32),
        Node("constant", (), (("values", (float(shape[1]),)),), rows, f32),       # 1: n
        Node("reduce", (0,), (("axes", (1,)), ("kind", "add")), rows, f32),
        Node("divide", (2, 1), (), rows, f32),                                    # 3: mean
        Node("broadcast_in_dim", (3,), (("dims", (0,)),), shape, f32),
        Node("subtract", (0, 4), (), shape, f32),                                 # 5: c
        Node("multiply", (5, 5), (), shape, f32),
        Node("reduce", (6,), (("axes", (1,)), ("kind", "add")), rows, f32),
        Node("divide", (7, 1), (), rows, f32),                                    # 8: var
        Node("constant", (), (("values", (eps,)),), rows, f32),
        Node("add", (8, 9), (), rows, f32),
        Node("rsqrt", (10,), (), rows, f32),
        Node("broadcast_in_dim", (11,), (("dims", (0,)),), shape, f32),
        Node("multiply", (5, 12), (), shape, f32))


def test_layer_norm_bound_accepts_jax_cpu_and_fails_an_uncentered_variance():
    """The rsqrt bound carries a layer norm: jax CPU passes; the same normalization with
    the variance of x uncentered (layernorm-variance-uncentered) does not; an rsqrt of a
    value within its bound of 0 allows anything."""
    x = np.random.default_rng(1).uniform(-1, 2, (6, 16)).astype(np.float32)
    program = _layer_norm_program(x.shape, float(np.float32(1e-5)))
    out = _jax_outputs(program, [x], IDX)[0]
    check_outputs(program, [out], [x], IDX, "jax cpu", float_control_modes.XLA_CPU)
    wide = x.astype(np.float64)
    c = wide - wide.mean(axis=1, keepdims=True)
    wrong = (c / np.sqrt((wide * wide).mean(axis=1, keepdims=True) + 1e-5)).astype(np.float32)
    with pytest.raises(AssertionError):
        check_outputs(program, [wrong], [x], IDX, "uncentered", float_control_modes.XLA_CPU)
    f = float_format.of("float32")
    node = Node("rsqrt", (0,), (), (3,), "float32")
    v, e = dag_bounds._node(node, [np.array([4.0, 1e-3, 1e-3])], [np.array([0.0, 1e-4, 1e-3])],
                            IDX, f, f.tiny)
    k = tolerances.ulp_bound("rsqrt", "float32")
    assert e[0] == pytest.approx((k + 1) * f.eps * 0.5 + f.tiny)
    assert e[1] >= 1e-4 / (2 * 9e-4 ** 1.5) and np.isinf(e[2])


def test_pool_bound_accepts_jax_cpu_and_fails_a_window_that_ignores_low_padding():
    """Max and average pooling ('SAME', a window of 3: one element of padding low) pass
    from jax CPU; the windows shifted to the unpadded origin
    (pool-ignores-low-padding) fail."""
    x = np.random.default_rng(2).uniform(-2, 2, (5, 7)).astype(np.float32)
    how = (("padding", "SAME"), ("strides", (1, 2)), ("window", (3, 3)))
    out_shape = dag.pool_shape(x.shape, (3, 3), (1, 2), "SAME")
    param = Node("param", (), (("index", 0),), x.shape, "float32")
    for kind in ("max", "add"):
        program = _program("float", param, Node("pool", (0,), (("kind", kind),) + how,
                                                out_shape, "float32"))
        out = _jax_outputs(program, [x], IDX)[0]
        check_outputs(program, [out], [x], IDX, "jax cpu", float_control_modes.XLA_CPU)
        shifted = np.pad(x, ((0, 2), (0, 2)), constant_values=-np.inf if kind == "max" else 0)
        fn = np.max if kind == "max" else np.sum
        view = np.lib.stride_tricks.sliding_window_view(shifted, (3, 3))[:, ::2]
        wrong = fn(view, axis=(2, 3)).astype(np.float32)
        with pytest.raises(AssertionError):
            check_outputs(program, [wrong], [x], IDX, kind, float_control_modes.XLA_CPU)


def _loop(x: np.ndarray, trips: int, **body) -> Program:
    return _program("float", Node("param", (), (("index", 0),), x.shape, "float32"),
                    Node("loop", (0,), tuple(sorted(dict(body, trips=trips).items())), x.shape,
                         "float32"))


_LOOP_BODIES = {
    "dot": dict(body="dot", axis=0, weights=tuple(
        np.random.default_rng(3).choice(dag_loops.weight_grid("float32", 5), 25).tolist())),
    "reduce": dict(body="reduce", axis=1, kind="add", scale=0.125),
    "dus": dict(body="dus", axis=0),
}


@pytest.mark.parametrize("body", sorted(_LOOP_BODIES))
def test_loop_bound_accepts_jax_cpu_and_fails_one_trip_fewer(body):
    """Float loops whose body holds a dot (``tanh(v @ W)`` along axis 0, then a transpose
    back), a reduce or a dynamic_update_slice, their bound charged trip by trip: jax CPU's
    result passes; the result of one trip fewer (loop-dot-drops-last-trip) fails, and so
    do the reduce without its last term (loop-reduce-drops-tail) and the update written
    at row 0 (loop-update-slice-ignores-trip)."""
    x = np.random.default_rng(4).uniform(-2, 2, (5, 8)).astype(np.float32)
    program = _loop(x, 4, **_LOOP_BODIES[body])
    assert "lax.fori_loop(0, 4, lambda i, v: " in program.source()
    out = _jax_outputs(program, [x], IDX)[0]
    check_outputs(program, [out], [x], IDX, "jax cpu", float_control_modes.XLA_CPU)
    wrong = {"short": _jax_outputs(_loop(x, 3, **_LOOP_BODIES[body]), [x], IDX)[0]}
    v = x.astype(np.float64)
    if body == "reduce":
        for _ in range(4):
            v = v + 0.125 * v[:, :-1].sum(axis=1, keepdims=True)
        wrong["tail"] = v.astype(np.float32)
    if body == "dus":
        for i in range(4):
            v[0] = v[i + 1] + v[i]
        wrong["at 0"] = v.astype(np.float32)
    for how, result in wrong.items():
        with pytest.raises(AssertionError):
            check_outputs(program, [result], [x], IDX, how, float_control_modes.XLA_CPU)
