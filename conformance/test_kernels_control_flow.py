"""Area kernels_control_flow: ``while``, ``if`` (cond) and ``case`` programs vs Python.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once: a data-dependent while
loop (Collatz steps, its trip count varies per element), a conditional and an
n-way case on drawn predicates and indices (``lax.switch`` clamps an
out-of-range index into the branches before the ``case`` op).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.programs import compiled_programs
from conformance.helpers.reproduction import reproduction

I32, F32 = dtype_helpers.BY_NAME["int32"], dtype_helpers.BY_NAME["float32"]


def _collatz_steps(n):
    def cond(state):
        return state[0] != 1

    def body(state):
        x, steps = state
        return lax.select(x % 2 == 0, x // 2, 3 * x + 1), steps + 1

    return lax.while_loop(cond, body, (n, np.int32(0)))[1]


def _collatz_reference(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@given(n=st.integers(1, 10_000))
def test_while_loop_runs_a_data_dependent_trip_count(program_cache, n):
    x = np.array(n, np.int32)
    call = f"execute(while collatz({n}), int32[])"
    outs, program = compiled_programs.run_everywhere(program_cache, "collatz", _collatz_steps, [x],
                                                     I32, call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_exact(out, np.array(_collatz_reference(n), np.int32),
                                    call=f"{call} on {device}")


def _cond(p, x):
    return lax.cond(p, lambda v: v * 2.0 + 1.0, lambda v: -v, x)


@given(p=st.booleans(), v=st.floats(-100, 100, width=32))
def test_cond_takes_the_predicated_branch(program_cache, p, v):
    pred, x = np.array(p), np.array([v, -v, 0.5], np.float32)
    call = f"execute(cond pred={p}, float32[3])"
    outs, program = compiled_programs.run_everywhere(
        program_cache, "cond", _cond, [pred, x], F32, call)
    expected = (x * np.float32(2) + np.float32(1)) if p else -x
    with reproduction(call, program=program, inputs=[pred, x]):
        for device, out in outs:
            assertions.assert_exact(out, expected.astype(np.float32), call=f"{call} on {device}")


BRANCHES = (lambda v: v + 1, lambda v: v * 3, lambda v: v - 7, lambda v: -v)


def _case(i, x):
    return lax.switch(i, BRANCHES, x)


@given(i=st.integers(-3, 7), v=st.integers(-1000, 1000))
def test_case_selects_the_indexed_branch(program_cache, i, v):
    index, x = np.array(i, np.int32), np.array([v, v + 1], np.int32)
    call = f"execute(case index={i}, int32[2])"
    outs, program = compiled_programs.run_everywhere(
        program_cache, "case", _case, [index, x], I32, call)
    chosen = min(max(i, 0), len(BRANCHES) - 1)  # lax.switch clamps the index
    expected = np.asarray(BRANCHES[chosen](x.astype(np.int64))).astype(np.int32)
    with reproduction(call, program=program, inputs=[index, x]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")
