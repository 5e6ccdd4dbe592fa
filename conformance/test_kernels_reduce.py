"""Area kernels_reduce: reductions, arg-reductions and cumulative sums vs NumPy.

Seed 000 (Compile and Execute), every device at once. Axes are drawn by
Hypothesis from a bounded set of shapes, so each signature compiles once.

- Integer and boolean reductions are exact (sums wrap in two's complement).
- Float sums and products are held to the classical error bound of recursive
  summation in any order: ``|out - ref| <= n * eps * sum(|x|)`` per output
  (``n``: number of terms, ``eps`` of the dtype, so accumulating in it or in a
  wider type both pass; products: relative ``(n + 1) * eps``), which scales
  with the number of summed terms.
- max/min are exact and propagate NaN; argmax/argmin return the first index
  among ties (NumPy's rule, and jax's).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions as ph
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers as dh
from conformance.programs import cache as programs
from conformance.helpers import strategies as hh
from conformance.helpers.reproduction import reproduction

SHAPES = ((12,), (3, 5), (2, 3, 4), (0, 4))
DTYPES = [dh.BY_NAME[n] for n in ("int8", "int32", "uint16", "int64", "float16", "bfloat16",
                                  "float32", "float64", "complex64")]


def _axes(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.sampled_from(range(len(shape))), unique=True, max_size=len(shape)).map(
        lambda a: tuple(sorted(a)))


def _sum_bound(x: np.ndarray, axes: tuple[int, ...], dt: dh.DType) -> np.ndarray:
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    eps = float(ml_dtypes.finfo(dh.real_dtype(dt)).eps)  # accumulation in dt or wider
    mag = np.sum(np.abs(x.astype(np.complex128 if dt.kind == "complex" else np.float64)),
                 axis=axes)
    return max(n, 2) * eps * mag  # (n-1) roundings of partial sums + the final one


def _reduce_fn(name: str, axes: tuple[int, ...]):
    import jax.numpy as jnp

    fns = {"sum": lambda x: jnp.sum(x, axis=axes, dtype=x.dtype),
           "prod": lambda x: jnp.prod(x, axis=axes, dtype=x.dtype),
           "max": lambda x: lax.reduce_max(x, axes),
           "min": lambda x: lax.reduce_min(x, axes)}
    return fns[name]


CASES = [pytest.param(name, dt, id=f"{name}-{dt.name}",
                      marks=[pytest.mark.capability(dt.capability)] if dt.capability else [])
         for name in ("sum", "prod", "max", "min") for dt in DTYPES
         if not (name in ("max", "min") and dt.kind == "complex")]


@pytest.mark.parametrize("name,dt", CASES)
@given(data=st.data())
def test_reduce(program_cache, name, dt, data):
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    axes = data.draw(_axes(shape), label="axes")
    bound = 2.0 if name == "prod" else 1e3  # products of O(1) values stay representable
    x = data.draw(hh.finite_arrays(dt, shape, min_value=-bound, max_value=bound), label="x")
    call = f"execute(reduce_{name} over {axes}, {dt.name}{list(shape)})"
    fn = _reduce_fn(name, axes)
    ref = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[name]
    if name in ("max", "min") and x.size == 0 and axes:
        expected = np.full([s for i, s in enumerate(shape) if i not in axes],
                           _identity(name, dt), dt.dtype)
    elif dt.kind in ("int", "uint"):  # sums and products wrap
        with np.errstate(over="ignore"):
            expected = np.asarray(ref(x, axis=axes, dtype=dt.dtype) if name in ("sum", "prod")
                                  else ref(x, axis=axes))
    else:
        wide = x.astype(np.complex128 if dt.kind == "complex" else np.float64)
        with np.errstate(over="ignore"):
            expected = np.asarray(ref(wide, axis=axes)).astype(dt.dtype)
    outs, program = programs.run_everywhere(program_cache, f"reduce_{name}_{axes}", fn, [x], dt,
                                            call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            where = f"{call} on {device}"
            if dt.kind in ("int", "uint") or name in ("max", "min"):
                ph.assert_exact(out, expected.astype(dt.dtype), call=where)
            elif name == "sum":
                ph.assert_within_bound(out, expected, _sum_bound(x, axes, dt),
                                       bound_name="n*eps*sum|x|", call=where)
            else:  # products: relative (n + 1) * eps of prod(|x|); complex products x2
                n = int(np.prod([shape[a] for a in axes])) if axes else 1
                eps = float(ml_dtypes.finfo(dh.real_dtype(dt)).eps)
                mag = np.prod(np.abs(x.astype(np.complex128)), axis=axes)
                scale = 2 if dt.kind == "complex" else 1
                ph.assert_within_bound(out, expected, scale * (n + 1) * eps * mag,
                                       bound_name="(n+1)*eps*prod|x|", call=where)


def _identity(name: str, dt: dh.DType):
    if dt.kind == "float":
        return -np.inf if name == "max" else np.inf
    info = np.iinfo(dt.dtype)
    return info.min if name == "max" else info.max


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduce_max_min_propagate_nan(program_cache, name):
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf]], np.float32)
    dt = dh.BY_NAME["float32"]
    fn = _reduce_fn(name, (1,))
    call = f"execute(reduce_{name} over (1,), float32[2, 3] with NaN)"
    outs, program = programs.run_everywhere(program_cache, f"reduce_{name}_nan", fn, [x], dt,
                                            call)
    expected = np.array([np.nan, np.inf if name == "max" else -np.inf], np.float32)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            ph.assert_ulp_close(out, expected, max_ulp=0, call=f"{call} on {device}")


@pytest.mark.parametrize("op", ["and", "or"])
@given(data=st.data())
def test_reduce_bool(program_cache, op, data):
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    axes = data.draw(_axes(shape), label="axes")
    x = data.draw(hh.finite_arrays(dh.BY_NAME["bool"], shape), label="x")
    fn = (lambda a: lax.reduce_and(a, axes)) if op == "and" else (lambda a: lax.reduce_or(a, axes))
    call = f"execute(reduce_{op} over {axes}, bool{list(shape)})"
    outs, program = programs.run_everywhere(program_cache, f"reduce_{op}_{axes}", fn, [x],
                                            dh.BY_NAME["bool"], call)
    expected = np.asarray(np.all(x, axis=axes) if op == "and" else np.any(x, axis=axes))
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            ph.assert_exact(out, expected, call=f"{call} on {device}")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", [capabilities.param(dh.BY_NAME[n])
                                for n in ("int8", "int32", "float16", "float32")])
@given(data=st.data())
def test_arg_reduction_picks_the_first_of_ties(program_cache, name, dt, data):
    """Values drawn from 3 distinct numbers, so ties are the rule, not the exception."""
    import jax.numpy as jnp

    shape = data.draw(st.sampled_from(((16,), (4, 6), (3, 2, 5))), label="shape")
    axis = data.draw(st.sampled_from(range(len(shape))), label="axis")
    x = data.draw(hh.finite_arrays(dt, shape, min_value=-1, max_value=1), label="x")
    x = np.round(x).astype(dt.dtype)
    fn = (lambda a: jnp.argmax(a, axis=axis)) if name == "argmax" else (
        lambda a: jnp.argmin(a, axis=axis))
    call = f"execute({name} over {axis}, {dt.name}{list(shape)})"
    outs, program = programs.run_everywhere(program_cache, f"{name}_{axis}", fn, [x], dt, call)
    expected = (np.argmax if name == "argmax" else np.argmin)(x, axis=axis).astype(np.int32)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            ph.assert_exact(out.astype(np.int32), expected, call=f"{call} on {device}")


@pytest.mark.parametrize("dt", [capabilities.param(dh.BY_NAME[n])
                                for n in ("int32", "float32", "float64")])
@given(data=st.data())
def test_cumsum(program_cache, dt, data):
    shape = data.draw(st.sampled_from(((17,), (4, 6))), label="shape")
    axis = data.draw(st.sampled_from(range(len(shape))), label="axis")
    reverse = data.draw(st.booleans(), label="reverse")
    x = data.draw(hh.finite_arrays(dt, shape, min_value=-100, max_value=100), label="x")
    fn = lambda a: lax.cumsum(a, axis=axis, reverse=reverse)  # noqa: E731
    call = f"execute(cumsum axis={axis} reverse={reverse}, {dt.name}{list(shape)})"
    outs, program = programs.run_everywhere(program_cache, f"cumsum_{axis}_{reverse}", fn, [x],
                                            dt, call)
    flip = (lambda a: np.flip(a, axis)) if reverse else (lambda a: a)
    with np.errstate(over="ignore"):
        expected = flip(np.cumsum(flip(x.astype(dh.reference_dtype(dt))), axis=axis))
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            if dt.kind == "int":
                ph.assert_exact(out, expected.astype(dt.dtype), call=f"{call} on {device}")
            else:
                n = shape[axis]
                eps = float(ml_dtypes.finfo(dt.dtype).eps)
                mag = flip(np.cumsum(flip(np.abs(x.astype(np.float64))), axis=axis))
                ph.assert_within_bound(out, expected.astype(dt.dtype), (n + 1) * eps * mag,
                                       bound_name="(n+1)*eps*cumsum|x|",
                                       call=f"{call} on {device}")
