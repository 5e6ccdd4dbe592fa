"""Area stablehlo_ops: spec ops generated from ``programs.stablehlo_catalog``, two oracles.

Every case of :data:`conformance.programs.stablehlo_catalog.CASES` runs in every dtype
it lists, on every device at once (one SPMD executable, replicated inputs). Each result
is checked against the case's NumPy/ml_dtypes/SciPy reference; the StableHLO reference
interpreter (:mod:`conformance.programs.interpreter`) evaluates the same module on the
same inputs and must agree with that reference. When the two disagree, a device result
that matches neither still fails (a wrong result); one that matches either leaves
``OracleDisagreement`` (a suite defect, status ``fail_error``). A capability dtype the
platform declines cleanly at compile is ``not_supported``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import sharding_helpers
from conformance.helpers.reproduction import placement, reproduction
from conformance.programs import compiled_programs
from conformance.programs import coverage, interpreter, rng_and_ids, sharded_programs
from conformance.programs import stablehlo_catalog
from conformance.programs import stablehlo_compare
from conformance.programs import stablehlo_text_gaps

#: Ops a platform may refuse to compile (``OpCase.optional``) are informational: their
#: ``not_supported`` lists the op among the coverage gaps without failing certification.
PARAMS = [pytest.param(case, dtype_helpers.BY_NAME[d], id=f"{case.id}-{d}",
                       marks=[*capabilities.param(dtype_helpers.BY_NAME[d]).marks,
                              *([pytest.mark.informational] if case.optional else [])])
          for case in stablehlo_catalog.CASES for d in case.dtypes]


@pytest.mark.parametrize("case, dt", PARAMS)
@given(data=st.data())
def test_op(program_cache, float_controls, case: stablehlo_catalog.OpCase, dt: dtype_helpers.DType,
            data) -> None:
    args = case.inputs(data, dt)
    call = f"{case.op} ({case.variant}) in {dt.name}"
    with capabilities.optional_op(case.op, call, case.optional):
        results, text = compiled_programs.run_everywhere(
            program_cache, f"stablehlo_ops_{case.op}", case.program(args), args, dt, call,
            n_outputs=case.outputs)
    per_output = results if case.outputs > 1 else [results]
    expected = case.reference(args)
    compare = stablehlo_compare.comparison(case, dt, args, expected, controls=float_controls)
    with reproduction(call, program=text, inputs=args):
        interpreter.check_oracles(text, args, expected, compare, call=call,
                                  device_results=per_output)


RNG_ALGORITHMS = ("DEFAULT", "THREE_FRY", "PHILOX")
RNG_DTYPES = [dtype_helpers.BY_NAME[n] for n in ("uint8", "uint16", "uint32", "uint64")]


@pytest.mark.parametrize("dt", RNG_DTYPES, ids=str)
@pytest.mark.parametrize("algorithm", RNG_ALGORITHMS)
@given(data=st.data())
def test_rng_bit_generator(program_cache, algorithm: str, dt: dtype_helpers.DType, data) -> None:
    """The spec leaves each algorithm's variant implementation-defined, so no bit-exact
    reference: the output is a deterministic function of the state (every device, two
    states), the state advances, and the bits are balanced (within 6 sigma)."""
    state = np.array([data.draw(st.integers(0, 2**64 - 1), label=f"s{i}") for i in (0, 1)],
                     np.uint64)
    other = state ^ np.array([0, 1], np.uint64)  # the counter word, one bit flipped
    results = {}
    for name, s in (("state", state), ("other", other), ("again", state.copy())):
        call = f"rng_bit_generator({algorithm}) -> {dt.name}[64, 64] from {name}"
        (new_states, bits), text = compiled_programs.run_everywhere(
            program_cache, f"stablehlo_ops_rng_{algorithm}", rng_and_ids.rng_program(algorithm, dt),
            [s], dt, call, n_outputs=2)
        results[name] = (new_states, bits)
    first_state, first_bits = results["state"][0][0][1], results["state"][1][0][1]
    with reproduction(f"rng_bit_generator({algorithm}) -> {dt.name}", program=text,
                      inputs=[state]):
        assertions.assert_shape(first_bits.shape, (64, 64), call="output")
        assertions.assert_dtype(first_bits.dtype, dt.dtype, call="output")
        for new_states, bits in (results["state"], results["again"]):
            for (device, s), (_, b) in zip(new_states, bits):
                assertions.assert_bitwise_equal(s, first_state, call=f"output_state on {device}")
                assertions.assert_bitwise_equal(b, first_bits, call=f"output on {device}")
        assert not np.array_equal(first_state, state), "output_state equals initial_state"
        ones = rng_and_ids.fraction_of_ones(first_bits)
        sigma = 0.5 / np.sqrt(first_bits.size * dt.dtype.itemsize * 8)
        assert abs(ones - 0.5) <= 6 * sigma, f"fraction of one bits {ones:.5f}, 6 sigma {sigma:.5f}"
        differing = rng_and_ids.fraction_of_ones(first_bits ^ results["other"][1][0][1])
        assert differing >= 0.25, f"another state changed only {differing:.3f} of the bits"


@pytest.mark.capability("multi_device")
def test_partition_and_replica_id(program_cache, client, xc, two_devices) -> None:
    """``partition_id`` (jax's axis_index in a shard_map) is each device's position in the
    mesh; ``replica_id`` (the same module with the op swapped) is 0 on every device of a
    one-replica, N-partition program (the runtime's default compile options)."""
    n = len(two_devices)
    x = np.arange(2 * n, dtype=np.int32) * 10
    want_partition = x + np.repeat(np.arange(n, dtype=np.int32), 2)
    runner = sharded_programs.ShardedRunner(client, xc, cache=program_cache)
    fn, sharding = rng_and_ids.partition_id_program(two_devices)
    out, problem, text, _ = runner.run("stablehlo_ops_partition_id", fn, [x], [sharding],
                                       sharding, x.shape)
    with reproduction("partition_id in a shard_map", program=text, inputs=[x],
                      sharding=placement([sharding], sharding)):
        assert not problem, problem
        assertions.assert_bitwise_equal(out, want_partition, call="partition_id")
    replica_text = rng_and_ids.as_replica_id(text)
    exe, _ = program_cache.load("stablehlo_ops_replica_id", replica_text, [x], two_devices)
    arrays = [sharding_helpers.put_sharded(x, sharding, xc=xc)]
    per_output = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
    coverage.note_executed(replica_text)
    out, problem = sharded_programs.assemble(per_output[0], sharding, x.shape)
    with reproduction("replica_id in a shard_map", program=replica_text, inputs=[x],
                      sharding=placement([sharding], sharding)):
        assert not problem, problem
        assertions.assert_bitwise_equal(out, x, call="replica_id (one replica)")


RNG_CASES = [("UNIFORM", "float32"), ("UNIFORM", "float64"), ("UNIFORM", "int32"),
             ("NORMAL", "float32"), ("NORMAL", "float64")]


def _rng_parameters(data: Any, distribution: str, dt: Any) -> tuple[int, int, list]:
    """(a, b, [a, b] as 0-d arrays of ``dt``): UNIFORM's [a, b) with b - a in 2..40, or
    NORMAL's mean a in -50..50 and standard deviation b in 1..20."""
    if distribution == "UNIFORM":
        a = data.draw(st.integers(-50, 50), label="a")
        b = a + data.draw(st.integers(2, 40), label="b - a")
    else:
        a = data.draw(st.integers(-50, 50), label="mu")
        b = data.draw(st.integers(1, 20), label="sigma")
    return a, b, [np.array(a, dt.dtype), np.array(b, dt.dtype)]


@pytest.mark.parametrize("distribution, dtype", RNG_CASES, ids=[f"{d}-{t}" for d, t in RNG_CASES])
@given(data=st.data())
def test_rng(program_cache, distribution: str, dtype: str, data) -> None:
    """``rng`` (StableHLO text; values implementation-defined): every device's result has
    the requested shape and dtype; UNIFORM values lie in [a, b) with the mean of the
    range; NORMAL values have mean ``mu`` and standard deviation ``sigma`` (6 sigma
    bounds of the sample statistics)."""
    dt = dtype_helpers.BY_NAME[dtype]
    a, b, args = _rng_parameters(data, distribution, dt)
    shape = (64, 64)
    call = f"rng({distribution}) -> {dtype}{list(shape)} with {a}, {b}"
    program = stablehlo_text_gaps.rng(*args, shape, distribution)
    # One single-device program per device (the replicated SPMD program, annotated as
    # jax lowers it, is test_rng_in_replicated_program).
    for device in program_cache.client.local_devices():
        (got,), text = program_cache.run(f"stablehlo_ops_rng_{distribution}", program, args,
                                         device)
        with reproduction(call, program=text, inputs=args):
            rng_and_ids.check_rng_sample(got, distribution, a, b, shape, dt.dtype,
                                         call=f"{call} on {device}")


@pytest.mark.parametrize("distribution, dtype", RNG_CASES, ids=[f"{d}-{t}" for d, t in RNG_CASES])
@given(data=st.data())
def test_rng_in_replicated_program(program_cache, distribution: str, dtype: str, data) -> None:
    """``rng`` in one replicated SPMD program over every local device (as ``jax.jit`` runs
    it on a replicated mesh, with the replicated sharding annotations jax's lowering
    writes): each device's result is a valid sample of the distribution
    (the checks of :func:`test_rng`). The spec leaves the values implementation-defined
    ("they may or may not be deterministic"), so the replicas need not agree, but no device
    may return a constant (zeros) instead of a draw."""
    dt = dtype_helpers.BY_NAME[dtype]
    a, b, args = _rng_parameters(data, distribution, dt)
    shape = (64, 64)
    call = f"rng({distribution}) -> {dtype}{list(shape)} with {a}, {b}, replicated"
    outs, text = compiled_programs.run_everywhere(
        program_cache, f"stablehlo_ops_rng_{distribution}",
        stablehlo_text_gaps.rng(*args, shape, distribution, replicated=True), args, dt, call)
    problems, spec = [], False
    for device, got in outs:  # every device checked, so the message names all bad ones
        try:
            rng_and_ids.check_rng_sample(got, distribution, a, b, shape, dt.dtype,
                                         call=f"{call} on {device}")
        except AssertionError as err:
            spec |= isinstance(err, assertions.SpecPropertyViolation)
            problems.append(f"{str(err).splitlines()[0]}, {np.unique(got).size} distinct "
                            f"values, first {got.reshape(-1)[0]!r}")
    with reproduction(call, program=text, inputs=args):
        if problems:  # a value outside [a, b) stays a spec violation (never flaky)
            raise (assertions.SpecPropertyViolation if spec else AssertionError)(
                f"{len(problems)} of {len(outs)} devices returned no valid draw:\n"
                + "\n".join(problems))



#: rng UNIFORM pinned at the top of the range: [2**p - 2, 2**p) holds only two values of a
#: float type with p significand bits (2**p - 2 and 2**p - 1), and a + (b - a) * u with u
#: in [0, 1) rounds to b for about a quarter of the u's unless the kernel excludes it.
RNG_EDGE = {"float32": 24, "float64": 53}


@pytest.mark.parametrize("dtype", list(RNG_EDGE))
def test_rng_uniform_never_returns_b(program_cache, dtype: str) -> None:
    """``rng`` UNIFORM (StableHLO spec: the interval [a, b), half-open) with a = 2**p - 2,
    b = 2**p (p: the dtype's significand bits), 64x64 values on every device: no value
    may equal b. A kernel that rounds ``a + (b - a) * u`` to b does so for about 25% of
    the values, so its chance to pass is 0.75**4096 (no draw: the check is certain).
    A failure is a spec violation, never ``flaky``."""
    dt = dtype_helpers.BY_NAME[dtype]
    p = RNG_EDGE[dtype]
    a, b = 2.0**p - 2, 2.0**p
    args = [np.array(a, dt.dtype), np.array(b, dt.dtype)]
    shape = (64, 64)
    call = f"rng(UNIFORM) -> {dtype}{list(shape)} with a = 2**{p} - 2, b = 2**{p}"
    for device in program_cache.client.local_devices():
        (got,), text = program_cache.run("stablehlo_ops_rng_UNIFORM",
                                         stablehlo_text_gaps.rng(*args, shape, "UNIFORM"), args,
                                         device)
        with reproduction(call, program=text, inputs=args):
            assertions.assert_shape(got.shape, shape, call=call)
            assertions.assert_dtype(got.dtype, dt.dtype, call=call)
            rng_and_ids.check_uniform_interval(got, a, b, call=f"{call} on {device}")


@pytest.mark.capability("multi_device")
@pytest.mark.parametrize("dtype", ["int32"], ids=lambda d: f"collective_broadcast-{d}")
def test_collective_broadcast(program_cache, client, xc, two_devices, dtype) -> None:
    """``collective_broadcast`` over all partitions of an SPMD program (a shard_map's
    ``collective_permute`` swapped for it): every device's shard becomes the first
    device's. A platform that cannot compile the op reports ``not_supported``."""
    n = len(two_devices)
    x = np.arange(2 * n, dtype=dtype) * 10
    fn, sharding = rng_and_ids.ring_permute_program(two_devices)
    lowered = compiled_programs.lower(fn, [x], client.platform, in_shardings=[sharding],
                                      out_shardings=sharding)
    text = rng_and_ids.as_collective_broadcast(lowered, n)
    call = f"collective_broadcast over {n} partitions"
    with capabilities.optional_op("collective_broadcast", call):
        exe, _ = program_cache.load("stablehlo_ops_collective_broadcast", text, [x],
                                    two_devices)
    per_output = exe.execute_sharded([sharding_helpers.put_sharded(x, sharding, xc=xc)]
                                     ).disassemble_into_single_device_arrays()
    coverage.note_executed(text)
    out, problem = sharded_programs.assemble(per_output[0], sharding, x.shape)
    with reproduction(call, program=text, inputs=[x], sharding=placement([sharding], sharding)):
        assert not problem, problem
        assertions.assert_bitwise_equal(out, np.tile(x[:2], n), call="collective_broadcast")
