"""Area programs: generated multi-op programs, where ops meet in fusion and layout.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once. Each example is a DAG of 2-30
StableHLO ops drawn by :mod:`conformance.programs.dag_strategy` (elementwise,
compare/select, broadcast, reduce, dot_general, transpose, reshape, slice,
concatenate, pad, reverse, convert, dynamic_slice/dynamic_update_slice,
gather/scatter, iota, reduce_window, cumsum, sort, while (bodies with a dot, a reduce or
a dynamic_update_slice among them) and case, and transposes and broadcasts feeding dots
and reductions along 64 or more elements), with several
outputs, compiled as ONE program (so the backend fuses, lays out and assigns buffers
across ops) and run on every device. Oracles (docs/programs.md):

- integer and data-movement programs: bit for bit against NumPy evaluating the same
  DAG (:func:`conformance.programs.dag.evaluate`);
- float programs: a float64 evaluation carrying Wilkinson's running error bound
  through the DAG (:mod:`conformance.programs.dag_bounds`), flush-to-zero included;
  float32 (core), and bfloat16 and float16 (tiers ``capability:bf16``/``capability:f16``,
  with mixed dots: float32 accumulation of bfloat16/float16 operands), each node's bound
  at its own dtype;
- on a failure, the same program op by op on the first device (each op its own
  executable, the thing the single-op areas validate): when that run passes the same
  oracle, the failure is the plugin compiler's (fusion, layout or buffer assignment)
  and the note says so; otherwise it names the first op that is wrong on its own.

Hypothesis shrinks a failing program to a minimal one; its jax source (the program
that ran, not a description of it) is attached to the failure, with its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction
from conformance.programs import compiled_programs
from conformance.programs import compiler_pass
from conformance.programs import dag, dag_bounds, dag_strategy


def _budget() -> int:
    """Elements of every value of a program: 4096 (ci, dev), 2**20 (nightly: one long
    axis up to a million elements)."""
    return strategies.element_budget(ci=2**12, nightly=2**20)


def check_outputs(program: dag.Program, outs: list[np.ndarray], inputs: list[np.ndarray],
                  idx: np.ndarray, where: str, controls: float_control_modes.FloatControls) -> None:
    """Hold ``outs`` (one host array per program output) to the family's oracle, float
    programs under the declared float ``controls`` (the session's resolved declaration:
    a flushed subnormal passes only where it flushes the node's dtype).
    AssertionError names the output and the node that computed it."""
    __tracebackhide__ = True
    if program.family == "float":
        nodes = dag_bounds.evaluate(program, inputs, idx, controls=controls)
        for k, (o, out) in enumerate(zip(program.outputs, outs)):
            expected, bound = dag_bounds.expected_and_bound(*nodes[o], program.nodes[o].dtype)
            assertions.assert_within_bound(out, expected, bound, call=f"{where}, output {k} (v{o})")
        return
    values = dag.evaluate(program, inputs, idx)
    for k, (o, out) in enumerate(zip(program.outputs, outs)):
        assertions.assert_bitwise_equal(out, values[o], call=f"{where}, output {k} (v{o})")


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def op_by_op(program_cache: compiled_programs.ProgramCache, program: dag.Program,
             inputs: list[np.ndarray], idx: np.ndarray,
             controls: float_control_modes.FloatControls) -> tuple[bool, str]:
    """The op-by-op verdict on the first device: every node run as its own executable on
    the previous nodes' device results. Returns whether the program passes that way, and
    one sentence for the failure note."""
    device = program_cache.client.local_devices()[0]
    values: list[np.ndarray] = []
    exact = dag.evaluate(program, inputs, idx) if program.family != "float" else None
    first_wrong = None
    for i, n in enumerate(program.nodes):
        if n.op == "param":
            values.append(inputs[n.attr("index")])
            continue
        fn, operands = program.node_function(i)
        args = [values[a] for a in operands] + [idx]
        outs, _ = program_cache.run(f"{program.name}_op{i}", fn, args, device)
        values.append(outs[0])
        if exact is not None and first_wrong is None:
            alone = dag.OPS[n.op].numpy(n, [values[a] for a in operands], idx)
            if not np.array_equal(_bits(outs[0]), _bits(alone)):
                first_wrong = i
    try:
        check_outputs(program, [values[o] for o in program.outputs], inputs, idx, "op by op",
                      controls)
    except AssertionError:
        culprit = ""
        if first_wrong is not None:
            node = program.nodes[first_wrong]
            code = dag.OPS[node.op].code(node, [f"v{a}" for a in node.args])
            culprit = f"; v{first_wrong} = {code} is wrong on its own"
        return False, (f"op by op on {device} (each op its own executable) the program "
                       f"fails too{culprit}: a single-op defect, see the single-op areas")
    return True, (f"op by op on {device} (each op its own executable) the same program "
                  f"passes the same oracle: the wrong result comes from compiling the ops "
                  f"together, a compiler defect of the plugin (the compiler pass line "
                  f"names the pass)")


def _on(isolated: Callable[..., str], device: Any) -> Callable[..., str]:
    """The ``isolated`` fixture bound to ``device``."""
    return lambda snippet, *, call, timeout: isolated(snippet, device=device, call=call,
                                                      timeout=timeout)


def passes_check(check: Callable[[list[np.ndarray]], Any]) -> Callable[[list[np.ndarray]], bool]:
    """``check(outputs)`` (raises AssertionError when wrong) as a predicate."""
    def passes(outs: list[np.ndarray]) -> bool:
        try:
            check(outs)
        except AssertionError:
            return False
        return True
    return passes


def run_program(program_cache: compiled_programs.ProgramCache, data: st.DataObject,
                family: str, controls: float_control_modes.FloatControls,
                isolated: Callable[..., str], dtype: str | None = None) -> None:
    """Draw a ``family`` program (of the float family's ``dtype``: None for float32) and
    its inputs, run it on every device and check it."""
    model_patterns = len(dag_strategy.MODEL_PATTERNS) if family == "float" and dtype is None else 0
    program = data.draw(dag_strategy.programs(family, budget=_budget(), dtype=dtype,
                                              model_patterns=model_patterns), label="program")
    inputs, idx = dag_strategy.inputs(data.draw, program)
    run_and_check(program_cache, program, program.name, inputs, idx, controls,
                  f"execute({dtype or family} program {program.name}: {program.n_ops} ops, "
                  f"{len(program.outputs)} outputs)", isolated)


def run_and_check(program_cache: compiled_programs.ProgramCache, program: dag.Program, name: str,
                  inputs: list[np.ndarray], idx: np.ndarray,
                  controls: float_control_modes.FloatControls, call: str,
                  isolated: Callable[..., str]) -> None:
    """``program`` on every device at once, each device's outputs held to the family's
    oracle; a failure gets the op-by-op verdict, the compiler pass that breaks it when op
    by op passes (recompiled in child processes by ``isolated``, the fixture), and the
    jax source as notes."""
    __tracebackhide__ = True
    args = inputs + [idx]
    base = dtype_helpers.BY_NAME[program.nodes[program.params[0]].dtype]
    outs, text = compiled_programs.run_everywhere(program_cache, name, program.function(),
                                                  args, base, call, n_outputs=len(program.outputs))
    per_output = [outs] if len(program.outputs) == 1 else outs
    with reproduction(call, program=text, inputs=args):
        for d in range(len(per_output[0])):
            device = per_output[0][d][0]
            try:
                check_outputs(program, [p[d][1] for p in per_output], inputs, idx,
                              f"{call} on {device}", controls)
            except AssertionError as err:
                alone, sentence = op_by_op(program_cache, program, inputs, idx, controls)
                err.add_note(sentence)
                if alone:   # compiling the ops together breaks it: which pass?
                    compiler_pass.attach(err, compiler_pass.find(
                        _on(isolated, device), text, args, passes_check(
                            lambda outs: check_outputs(program, outs, inputs, idx,
                                                       "one pass disabled", controls))))
                err.add_note("jax reproduction (inputs: p0.. in order, then idx):\n"
                             + program.source())
                raise


@given(data=st.data())
def test_integer_programs(program_cache, float_controls, isolated, data):
    """int32 programs (and int8/int16/uint8/uint32 after converts), bit for bit."""
    run_program(program_cache, data, "integer", float_controls, isolated)


@given(data=st.data())
def test_data_movement_programs(program_cache, float_controls, isolated, data):
    """Programs of data-movement ops on any bit pattern (NaN payloads, -0.0,
    subnormals), bit for bit."""
    run_program(program_cache, data, "data_movement", float_controls, isolated)


@given(data=st.data())
def test_float_programs(program_cache, float_controls, isolated, data):
    """float32 programs within the running error bound of their float64 evaluation, each
    ending in a dot epilogue, a softmax, a layer norm and a pooling (in a drawn order)."""
    run_program(program_cache, data, "float", float_controls, isolated)


@capabilities.requires("bf16")
@given(data=st.data())
def test_bfloat16_programs(program_cache, float_controls, isolated, data):
    """The float programs at bfloat16, with mixed dots (bfloat16 operands, float32
    accumulation and result), within the running error bound at each node's dtype."""
    run_program(program_cache, data, "float", float_controls, isolated, dtype="bfloat16")


@capabilities.requires("f16")
@given(data=st.data())
def test_float16_programs(program_cache, float_controls, isolated, data):
    """The float programs at float16, with mixed dots (float16 operands, float32
    accumulation and result), within the running error bound at each node's dtype."""
    run_program(program_cache, data, "float", float_controls, isolated, dtype="float16")


def _p(k: int, shape: tuple[int, ...], dtype: str) -> dag.Node:
    return dag.Node("param", (), (("index", k),), shape, dtype)


def _n(op: str, args: tuple[int, ...], shape: tuple[int, ...], dtype: str, **attrs) -> dag.Node:
    return dag.Node(op, args, tuple(sorted(attrs.items())), shape, dtype)


#: The compositions every run reaches, at tile remainders (129 = 128 + 1, 33, 17): the
#: generated programs draw them too, but only by chance.
PINNED = {
    "elementwise_into_reduce": dag.Program("float", (
        _p(0, (3, 129), "float32"), _n("multiply", (0, 0), (3, 129), "float32"),
        _n("add", (1, 0), (3, 129), "float32"),
        _n("reduce", (2,), (3,), "float32", axes=(1,), kind="add"),
        _n("reduce", (2,), (129,), "float32", axes=(0,), kind="max")), (3, 4)),
    "elementwise_into_dot": dag.Program("integer", (
        _p(0, (17, 33), "int32"), _p(1, (33, 9), "int32"),
        _n("negate", (0,), (17, 33), "int32"),
        _n("dot_general", (2, 1), (17, 9), "int32", contract=((1,), (0,)), batch=((), ()))),
        (3,)),
    "broadcast_into_elementwise": dag.Program("integer", (
        _p(0, (129,), "int32"), _p(1, (5, 129), "int32"),
        _n("broadcast_in_dim", (0,), (5, 129), "int32", dims=(1,)),
        _n("add", (2, 1), (5, 129), "int32")), (3,)),
    "two_dynamic_update_slice_outputs": dag.Program("integer", (
        _p(0, (65,), "int32"), _p(1, (9,), "int32"), _n("negate", (0,), (65,), "int32"),
        _n("dynamic_update_slice", (0, 1), (65,), "int32", starts=(0,)),
        _n("dynamic_update_slice", (2, 1), (65,), "int32", starts=(1,))), (3, 4)),
}


@pytest.mark.parametrize("name", list(PINNED))
def test_pinned_compositions(program_cache, float_controls, isolated, name):
    """A fused producer -> reduce, elementwise -> dot, broadcast -> elementwise and two
    dynamic_update_slice outputs of one program, at tile remainders, with the same
    oracles as the generated programs."""
    program = PINNED[name]
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-2, 2, program.nodes[i].shape).astype(np.float32)
              if program.family == "float" else
              rng.integers(-9, 10, program.nodes[i].shape).astype(np.int32)
              for i in program.params]
    idx = np.array([3, 60, 0, 0, 0, 0, 0, 0], np.int32)
    run_and_check(program_cache, program, f"pinned_{name}", inputs, idx, float_controls,
                  f"execute(pinned program {name}: {program.n_ops} ops, "
                  f"{len(program.outputs)} outputs)", isolated)


def _nested_dynamic_slice(x, i, j):
    from jax import lax
    zero = np.int32(0)  # one index type: jax 0.11 rejects int32 beside a 64-bit literal
    return lax.dynamic_slice(lax.dynamic_slice(x, [i, zero], (3, 1)), [j, zero], (2, 1))


def test_nested_dynamic_slice_clamps_each_start(program_cache, isolated):
    """``dynamic_slice(dynamic_slice(x, (0, 0)){3, 1}, (2, 0)){2, 1}`` of float32[8, 8]:
    each start is clamped to its own operand (StableHLO: the outer start 2 -> 3 - 2 = 1,
    so rows 1 and 2), also when the compiler merges the two slices. Pinned: the generated
    programs avoid a (dynamic) slice of a dynamic_slice, whose merge XLA clamps wrongly
    (openxla/xla#49121, jax-ml/jax#40849; docs/repro/nested_dynamic_slice_clamp.py), so
    that this defect is reported here, once."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    i, j = np.int32(0), np.int32(2)
    expected = x[1:3, 0:1]
    call = "execute(dynamic_slice(dynamic_slice(x, (0, 0)){3, 1}, (2, 0)){2, 1}, float32[8, 8])"
    outs, text = compiled_programs.run_everywhere(program_cache, "nested_dynamic_slice",
                                                  _nested_dynamic_slice, [x, i, j],
                                                  dtype_helpers.BY_NAME["float32"], call)
    with reproduction(call, program=text, inputs=[x, i, j]):
        for device, out in outs:
            try:
                assertions.assert_exact(out, expected, call=f"{call} on {device}")
            except AssertionError as err:
                compiler_pass.attach(err, compiler_pass.find(
                    _on(isolated, device), text, [x, i, j], passes_check(
                        lambda o: assertions.assert_exact(o[0], expected, call=call))))
                raise
