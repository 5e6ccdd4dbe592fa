"""Area execute: StableHLO elementwise programs compiled and run through runtime vs NumPy.

Programs are lowered from ``jax.lax`` functions for the platform under test,
compiled with ``Client.compile_and_load`` and run with
``LoadedExecutable.execute`` (the xla_client API), never through ``jax.jit`` dispatch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import shape_helpers
from conformance.helpers import strategies
from conformance.helpers import tolerances
from conformance.helpers.reproduction import reproduction
from conformance.programs import compiled_programs
from conformance.programs import catalog
from conformance.programs.catalog import ELEMENTWISE, Elementwise

CASES = [pytest.param(op, dt, id=f"{op.name}-{dt.name}",
                      marks=[pytest.mark.capability(dt.capability)] if dt.capability else [])
         for op in catalog.ops(catalog.EXECUTE)
         for dt in dtype_helpers.BOOL + dtype_helpers.NUMERIC_DTYPES if dt.kind in op.kinds]


def _safe_divisors(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Replace divisors whose result is implementation-defined: integer 0 and MIN/-1,
    complex 0 (C99 Annex G and NumPy disagree on the infinities)."""
    b = b.copy()
    b[b == 0] = 1
    if a.dtype.kind == "i":
        b[(a == np.iinfo(a.dtype).min) & (b == -1)] = 1
    return b


def _reference(op: Elementwise, dt: dtype_helpers.DType, args: list[np.ndarray]) -> np.ndarray:
    if dt.kind in ("int", "uint", "bool"):
        fn = op.int_reference or op.reference
        with np.errstate(over="ignore"):
            out = fn(*args)
    else:
        wide = [a.astype(dtype_helpers.reference_dtype(dt)) for a in args]
        with np.errstate(all="ignore"):
            out = op.reference(*wide)
    if op.returns_bool:
        return np.asarray(out, dtype=np.bool_)
    if op.name == "abs" and dt.kind == "complex":
        return np.asarray(out).astype(dtype_helpers.real_dtype(dt))
    with np.errstate(over="ignore"):  # overflow to inf is the IEEE result
        return np.asarray(out).astype(dt.dtype)


def _check(op: Elementwise, dt: dtype_helpers.DType, args: list[np.ndarray], out: np.ndarray,
           expected: np.ndarray, call: str, controls: float_control_modes.FloatControls) -> None:
    """Exact for integers, bools and IEEE-defined float ops (``tiny`` absolute where the
    declared float ``controls`` flush: a flushed subnormal); within the op's float64
    budget (:mod:`conformance.helpers.tolerances`) or the dtype's rtol otherwise, with an
    absolute part of rtol (times ``max(1, |x|)`` for argument-scaled ops); complex results
    in norm."""
    __tracebackhide__ = True
    if dt.kind in ("int", "uint", "bool") or op.returns_bool:
        assertions.assert_exact(out, expected, call=call)
    elif op.exact_on(dt.kind):
        tol = tolerances.bound("exact", dt.dtype, controls=controls)
        assertions.assert_allclose(out, expected, rtol=tol.rtol, atol=tol.atol, call=call)
    elif expected.dtype.kind == "c":
        # accurate in norm, not per component: re(a*b) may cancel catastrophically
        assertions.assert_within_bound(out, expected, tolerances.bound(
            "value_normwise", dt.dtype, op=op.name, expected=expected), call=call)
    else:
        tol = tolerances.bound("value", dt.dtype, op=op.name, scale=op.arg_scale(args))
        assertions.assert_allclose(out, expected, rtol=tol.rtol, atol=tol.atol, call=call)


@pytest.mark.parametrize("op,dt", CASES)
@given(data=st.data())
def test_elementwise(client, program_cache, float_controls, op, dt, data):
    """Each example runs on every local device (one SPMD executable, replicated inputs)."""
    shape = data.draw(st.sampled_from(shape_helpers.EXECUTE_SHAPES), label="shape")
    lo, hi = (op.rtol_domain or op.domain) if dt.kind in ("float", "complex") else (None, None)
    args = [data.draw(strategies.finite_arrays(dt, shape, min_value=lo, max_value=hi),
                      label=f"arg{i}") for i in range(op.arity)]
    if op.name == "divide" and dt.kind in ("int", "uint", "complex"):
        args[1] = _safe_divisors(args[0], args[1])
    call = f"execute({op.name}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, op.name, op.fn, args, dt, call)
    expected = _reference(op, dt, args)
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            _check(op, dt, args, out, expected, f"{call} on {device}", float_controls)


@pytest.mark.parametrize(
    "dt", [capabilities.param(d) for d in dtype_helpers.BOOL + dtype_helpers.NUMERIC_DTYPES])
@given(data=st.data())
def test_select(client, program_cache, dt, data):
    shape = data.draw(st.sampled_from(shape_helpers.EXECUTE_SHAPES), label="shape")
    pred = data.draw(strategies.finite_arrays(dtype_helpers.BY_NAME["bool"], shape), label="pred")
    a = data.draw(strategies.bit_patterns(dt, shape), label="on_true")
    b = data.draw(strategies.bit_patterns(dt, shape), label="on_false")
    call = f"execute(select, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, "select", lax.select,
                                                     [pred, a, b], dt, call)
    with reproduction(call, program=program, inputs=[pred, a, b]):
        for device, out in outs:
            # select moves data; XLA may quiet signaling NaNs, so payloads are not compared.
            assertions.assert_bitwise_equal(out, np.where(pred, a, b), call=f"{call} on {device}",
                                            nan_payloads=False)


@pytest.mark.parametrize("op", [ELEMENTWISE[n] for n in ("add", "tanh", "compare_lt")],
                         ids=lambda op: op.name)
@given(x=strategies.finite_arrays(dtype_helpers.BY_NAME["float32"],
                                  st.sampled_from(shape_helpers.EXECUTE_SHAPES),
                                  min_value=-5, max_value=5))
def test_single_device_executable(client, device, program_cache, float_controls, op, x):
    """An executable compiled for one device runs there (every device, one at a time)."""
    args = [x] * op.arity
    call = f"execute({op.name}, float32{list(x.shape)}) compiled for {device}"
    outs, program = program_cache.run(op.name, op.fn, args, device)
    with reproduction(call, program=program, inputs=args):
        f32 = dtype_helpers.BY_NAME["float32"]
        _check(op, f32, args, outs[0], _reference(op, f32, args), call, float_controls)


def _sum_and_product(x, y):
    return lax.add(x, y), lax.mul(x, y)


def test_multiple_outputs_are_a_list(client, device, program_cache):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.full((2, 3), 3, np.int32)
    call = f"execute(add and multiply, int32[2, 3]) on {device}"
    exe, _ = program_cache.get("sum_and_product", _sum_and_product, [x, y], device)
    outs = exe.execute([client.buffer_from_pyval(x, device), client.buffer_from_pyval(y, device)])
    assert isinstance(outs, list) and len(outs) == 2, (
        f"execute() returned {type(outs).__name__} of {len(outs)}, but should be a list of 2 "
        f"[{call}]")
    for out in outs:
        assert out.devices() == {device}, f"output on {out.devices()}, but should be on " \
                                          f"{{{device}}} [{call}]"
    assertions.assert_exact(np.asarray(outs[0]), x + y, call=call + " output 0")
    assertions.assert_exact(np.asarray(outs[1]), x * y, call=call + " output 1")


def test_inputs_not_mutated_by_execute(client, device, program_cache):
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    keep = x.copy()
    program_cache.run("negate", ELEMENTWISE["negate"].fn, [x], device)
    assertions.assert_bitwise_equal(
        x, keep, call=f"caller's input after execute(negate) on {device}")
