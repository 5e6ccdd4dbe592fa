"""Area kernels_reduce: reductions, arg-reductions and cumulative sums vs NumPy.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once. Shapes are drawn from a
small set or with one long axis across the tile/vector/block boundaries
(``strategies.long_axis_shapes``: up to 2**17 elements, 2**21 under the nightly
profile), axes from every subset; every run also reduces each boundary size of
``strategies.BOUNDARY_SIZES``, 65,537 terms and several axes at once with every kind
(``test_every_reduction_at_block_boundaries``).

- Integer and boolean reductions are exact (sums wrap in two's complement).
- Float sums and products are held to the classical error bounds of
  ``error_bounds`` for any order: sums ``n * eps * sum(|x|)`` per output
  (``n``: number of terms, ``eps`` of the dtype, so accumulating in it or in a
  wider type both pass), exact for integer-valued terms below ``2**digits``;
  products relative ``(n + 1) * eps``; both with the flush-to-zero, subnormal
  and overflow allowances of ``error_bounds``.
- max/min are exact and propagate NaN; argmax/argmin return the first index
  among ties (NumPy's rule, and jax's).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.programs import moves
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction

SHAPES = ((12,), (3, 5), (2, 3, 4), (0, 4))
DTYPES = [
    dtype_helpers.BY_NAME[n] for n in ("int8", "int32", "uint16", "int64", "float16", "bfloat16",
                                       "float32", "float64", "complex64")
]
#: Pinned in every run: each boundary size of strategies.BOUNDARY_SIZES as a reduced axis, at least
#: 65,536 terms, and several axes at once; (shape, axes, dtype).
PINNED = [(pair, axes, dt) for i, pair in enumerate(strategies.BOUNDARY_PAIRS)
          for axes, dt in [[((1,), "float32"), ((0,), "int32"), ((0, 1), "float64")][i % 3]]] + [
    ((65537,), (0,), "float32"), ((2, 129, 257), (0, 2), "int32")]


def _axes(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.sampled_from(range(len(shape))), unique=True, max_size=len(shape)).map(
        lambda a: tuple(sorted(a)))


def _shapes() -> st.SearchStrategy[tuple[int, ...]]:
    """SHAPES, or one long axis across the block boundaries (2**17 elements; nightly 2**21)."""
    budget = strategies.element_budget(ci=2**17, nightly=2**21)
    return st.one_of(st.sampled_from(SHAPES), strategies.long_axis_shapes(budget))


def _values(data, dt: dtype_helpers.DType, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Terms of a reduction: within +-1e3 and small enough that partial sums of the
    dtype cannot overflow (unsigned: the whole range, sums wrap); products: within +-2,
    and for many terms +-1 apart from 8."""
    size = int(np.prod(shape))
    if name == "prod":
        if size <= 24:
            return data.draw(strategies.finite_arrays(dt, shape, min_value=-2, max_value=2),
                             label="x")
        return data.draw(strategies.seeded_arrays(dt, shape, min_value=-2, max_value=2,
                                                  values=(-1.0, 1.0)), label="x")
    if dt.kind == "uint":  # the whole range (sums wrap): a signed compare picks wrong
        top = int(np.iinfo(dt.dtype).max)
        if size <= 64:
            return data.draw(strategies.finite_arrays(dt, shape, min_value=0, max_value=top),
                             label="x")
        return data.draw(strategies.seeded_arrays(dt, shape, min_value=0, max_value=top), label="x")
    bound = 1e3 if dt.kind not in ("float", "complex") else min(
        1e3, float(ml_dtypes.finfo(dtype_helpers.real_dtype(dt)).max) / (4 * max(size, 1)))
    if size <= 64:
        return data.draw(strategies.finite_arrays(dt, shape, min_value=-bound, max_value=bound),
                         label="x")
    if data.draw(st.booleans(), label="integers within +-3") and bound >= 3:
        bound = 3  # exact float sums in any order (below 2**digits), ties for argmax/argmin
    return data.draw(strategies.seeded_arrays(dt, shape, min_value=-bound, max_value=bound,
                                              integral=True if bound == 3 else dt.kind == "int"),
                     label="x")


@functools.lru_cache(maxsize=None)  # one function per signature: the program cache keys on it
def _reduce_fn(name: str, axes: tuple[int, ...], reverse: bool = False):
    """The jax function of reduction ``name`` over ``axes`` (argmax/argmin/cumsum: axes[0])."""
    import jax.numpy as jnp

    fns = {"sum": lambda x: jnp.sum(x, axis=axes, dtype=x.dtype),
           "prod": lambda x: jnp.prod(x, axis=axes, dtype=x.dtype),
           "max": lambda x: lax.reduce_max(x, axes),
           "min": lambda x: lax.reduce_min(x, axes),
           "and": lambda x: lax.reduce_and(x, axes), "or": lambda x: lax.reduce_or(x, axes),
           "argmax": lambda x: jnp.argmax(x, axis=axes[0]),
           "argmin": lambda x: jnp.argmin(x, axis=axes[0]),
           "cumsum": lambda x: lax.cumsum(x, axis=axes[0], reverse=reverse)}
    return fns[name]


def _expected(name: str, x: np.ndarray, axes: tuple[int, ...],
              dt: dtype_helpers.DType) -> np.ndarray:
    ref = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[name]
    if name in ("max", "min") and x.size == 0 and axes:
        return np.full([s for i, s in enumerate(x.shape) if i not in axes],
                       _identity(name, dt), dt.dtype)
    with np.errstate(over="ignore"):
        if dt.kind in ("int", "uint"):  # sums and products wrap
            return np.asarray(ref(x, axis=axes, dtype=dt.dtype) if name in ("sum", "prod")
                              else ref(x, axis=axes))
        wide = x.astype(np.complex128 if dt.kind == "complex" else np.float64)
        return np.asarray(ref(wide, axis=axes)).astype(dt.dtype)


def _check(name: str, out: np.ndarray, x: np.ndarray, axes: tuple[int, ...],
           dt: dtype_helpers.DType, where: str,
           controls: float_control_modes.FloatControls) -> None:
    __tracebackhide__ = True
    expected = _expected(name, x, axes, dt)
    if dt.kind in ("int", "uint") or name in ("max", "min"):
        assertions.assert_exact(out, expected.astype(dt.dtype), call=where)
    elif name == "sum":
        assertions.assert_within_bound(out, expected, tolerances.bound(
            "summation", x.dtype, x=x, axes=axes, controls=controls), call=where)
    else:
        assertions.assert_within_bound(out, expected, tolerances.bound(
            "product", x.dtype, x=x, axes=axes, controls=controls), call=where)


CASES = [pytest.param(name, dt, id=f"{name}-{dt.name}",
                      marks=[pytest.mark.capability(dt.capability)] if dt.capability else [])
         for name in ("sum", "prod", "max", "min") for dt in DTYPES
         if not (name in ("max", "min") and dt.kind == "complex")]


@pytest.mark.parametrize("name,dt", CASES)
@given(data=st.data())
def test_reduce(program_cache, float_controls, name, dt, data):
    shape = data.draw(_shapes(), label="shape")
    axes = data.draw(_axes(shape), label="axes")
    x = _values(data, dt, shape, name)
    _reduce_everywhere(program_cache, name, axes, x, dt,
                       f"execute(reduce_{name} over {axes}, {dt.name}{list(shape)})",
                       float_controls)


def _reduce_everywhere(program_cache, name: str, axes: tuple[int, ...], x: np.ndarray,
                       dt: dtype_helpers.DType, call: str,
                       controls: float_control_modes.FloatControls) -> None:
    """Reduction ``name`` of ``x`` over ``axes`` on every device, held to ``_check``."""
    __tracebackhide__ = True
    outs, program = compiled_programs.run_everywhere(program_cache, f"reduce_{name}_{axes}",
                                                     _reduce_fn(name, axes), [x], dt, call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            _check(name, out, x, axes, dt, f"{call} on {device}", controls)


@functools.lru_cache(maxsize=None)
def _every_reduction(axes: tuple[int, ...]):
    import jax.numpy as jnp

    last = axes[-1]

    def every(a, b):
        return (jnp.sum(a, axis=axes, dtype=a.dtype), jnp.prod(b, axis=axes, dtype=a.dtype),
                lax.reduce_max(a, axes), lax.reduce_min(a, axes), lax.reduce_and(a > 0, axes),
                lax.reduce_or(a > 0, axes), jnp.argmax(a, axis=last), jnp.argmin(a, axis=last),
                lax.cumsum(a, axis=last))
    return every


@pytest.mark.parametrize("shape,axes,dt", [
    pytest.param(shape, axes, dtype_helpers.BY_NAME[dt], id="x".join(map(str, shape)) + f"-{dt}",
                 marks=[pytest.mark.capability(dtype_helpers.BY_NAME[dt].capability)]
                 if dtype_helpers.BY_NAME[dt].capability else []) for shape, axes, dt in PINNED])
@given(data=st.data())
def test_every_reduction_at_block_boundaries(program_cache, float_controls, shape, axes, dt,
                                             data):
    """sum, prod, max, min, and, or, argmax, argmin and cumsum of one array in one program.

    Values: integer-valued within +-3 (exact sums, many ties) or uniform; the
    product's operand is +-1 apart from 8 drawn values within +-2.
    """
    x = _values(data, dt, shape, "sum")
    y = _values(data, dt, shape, "prod")
    last = axes[-1]
    every = _every_reduction(axes)
    call = f"execute(sum/prod/max/min/and/or over {axes}, argmax/argmin/cumsum over {last}, " \
           f"{dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"every_reduction_{axes}",
                                                     every, [x, y], dt, call, n_outputs=9)
    with reproduction(call, program=program, inputs=[x, y]):
        for i, (device, _) in enumerate(outs[0]):
            where = f"{call} on {device}"
            for name, k, operand in (("sum", 0, x), ("prod", 1, y), ("max", 2, x), ("min", 3, x)):
                _check(name, outs[k][i][1], operand, axes, dt, f"{where} ({name})",
                       float_controls)
            assertions.assert_exact(outs[4][i][1], np.all(x > 0, axis=axes), call=f"{where} (and)")
            assertions.assert_exact(outs[5][i][1], np.any(x > 0, axis=axes), call=f"{where} (or)")
            for k, arg in ((6, np.argmax), (7, np.argmin)):
                assertions.assert_exact(outs[k][i][1].astype(np.int64), arg(x, axis=last),
                                        call=f"{where} ({arg.__name__})")
            _check_cumsum(outs[8][i][1], x, last, False, dt, f"{where} (cumsum)",
                          float_controls)
    moves.check_moves(program_cache, x, dt, call)  # x moved on the device, bit for bit


def _identity(name: str, dt: dtype_helpers.DType):
    if dt.kind == "float":
        return -np.inf if name == "max" else np.inf
    info = np.iinfo(dt.dtype)
    return info.min if name == "max" else info.max


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduce_max_min_propagate_nan(program_cache, name):
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf]], np.float32)
    dt = dtype_helpers.BY_NAME["float32"]
    fn = _reduce_fn(name, (1,))
    call = f"execute(reduce_{name} over (1,), float32[2, 3] with NaN)"
    outs, program = compiled_programs.run_everywhere(program_cache, f"reduce_{name}_nan", fn, [x],
                                                     dt, call)
    expected = np.array([np.nan, np.inf if name == "max" else -np.inf], np.float32)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_ulp_close(out, expected,
                                        max_ulp=tolerances.bound("exact", x.dtype).max_ulp,
                                        call=f"{call} on {device}")


@pytest.mark.parametrize("op", ["and", "or"])
@given(data=st.data())
def test_reduce_bool(program_cache, op, data):
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    axes = data.draw(_axes(shape), label="axes")
    x = data.draw(strategies.finite_arrays(dtype_helpers.BY_NAME["bool"], shape), label="x")
    fn = _reduce_fn(op, axes)
    call = f"execute(reduce_{op} over {axes}, bool{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"reduce_{op}_{axes}", fn, [x],
                                                     dtype_helpers.BY_NAME["bool"], call)
    expected = np.asarray(np.all(x, axis=axes) if op == "and" else np.any(x, axis=axes))
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("int8", "int32", "float16", "float32")])
@given(data=st.data())
def test_arg_reduction_picks_the_first_of_ties(program_cache, name, dt, data):
    """Values drawn from 3 distinct numbers, so ties are the rule, not the exception;
    rows of up to 4097 (at least 1024 in half the shapes); floats get NaNs (the first
    NaN wins, NumPy's and jax's rule)."""

    shape = data.draw(st.sampled_from(((16,), (4, 6), (3, 2, 5), (1025,), (3, 4097))),
                      label="shape")
    axis = data.draw(st.sampled_from(range(len(shape))), label="axis")
    x = data.draw(strategies.seeded_arrays(dt, shape, min_value=-1, max_value=1, integral=True)
                  if np.prod(shape) > 64 else
                  strategies.finite_arrays(dt, shape, min_value=-1, max_value=1), label="x")
    x = np.round(x).astype(dt.dtype)
    if dt.kind == "float":
        holes = data.draw(st.lists(st.integers(0, x.size - 1), max_size=3), label="NaN at")
        x.reshape(-1)[holes] = np.nan
    fn = _reduce_fn(name, (axis,))
    call = f"execute({name} over {axis}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(
        program_cache, f"{name}_{axis}", fn, [x], dt, call)
    expected = (np.argmax if name == "argmax" else np.argmin)(x, axis=axis).astype(np.int32)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_exact(out.astype(np.int32), expected, call=f"{call} on {device}")


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("int32", "float32", "float64")])
@given(data=st.data())
def test_cumsum(program_cache, float_controls, dt, data):
    """cumsum along a drawn axis, forward or reversed: small shapes, and one long axis
    across the block boundaries (4097 elements; 2**17 under the nightly profile, whose
    axis sizes include 2**14, 2**15, 2**16 and 2**17 and their neighbours: the regime of
    jax-ml/jax#39103, a CPU scan wrong only from n >= 16,385)."""
    budget = strategies.element_budget(ci=4097, nightly=2**17)
    shape = data.draw(st.sampled_from(((17,), (4, 6)))
                      | strategies.long_axis_shapes(budget, max_dims=2), label="shape")
    axis = data.draw(st.sampled_from(range(len(shape))), label="axis")
    reverse = data.draw(st.booleans(), label="reverse")
    x = data.draw(strategies.finite_arrays(dt, shape, min_value=-100, max_value=100), label="x")
    fn = _reduce_fn("cumsum", (axis,), reverse)
    call = f"execute(cumsum axis={axis} reverse={reverse}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"cumsum_{axis}_{reverse}", fn,
                                                     [x], dt, call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            _check_cumsum(out, x, axis, reverse, dt, f"{call} on {device}", float_controls)


def _check_cumsum(out: np.ndarray, x: np.ndarray, axis: int, reverse: bool, dt: dtype_helpers.DType,
                  where: str, controls: float_control_modes.FloatControls) -> None:
    __tracebackhide__ = True
    flip = (lambda a: np.flip(a, axis)) if reverse else (lambda a: a)
    with np.errstate(over="ignore"):
        expected = flip(np.cumsum(flip(x.astype(dtype_helpers.reference_dtype(dt))), axis=axis))
    if dt.kind in ("int", "uint"):
        assertions.assert_exact(out, expected.astype(dt.dtype), call=where)
        return
    mag = flip(np.cumsum(flip(np.abs(x.astype(np.float64))), axis=axis))
    bound = tolerances.bound("rounding", dt.dtype, magnitude=mag, roundings=x.shape[axis] + 1,
                             controls=controls, name="(n+1)*eps*cumsum|x| + (n+1)*tiny")
    assertions.assert_within_bound(out, expected.astype(dt.dtype), bound, call=where)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dt", [capabilities.param(d) for d in dtype_helpers.UINTS])
@given(data=st.data())
def test_unsigned_max_min_over_the_whole_range(program_cache, float_controls, name, dt, data):
    """max/min of unsigned integers drawn over the whole range, every reduced row holding
    a value with the top bit set (>= 2**(bits-1), negative if compared as signed) and one
    without: a signed compare returns the other one, so this fails every row of a backend
    that compares unsigned values as signed. Rows of up to 4097 terms."""
    info = np.iinfo(dt.dtype)
    half = int(info.max) // 2 + 1  # 2**(bits-1)
    shape = data.draw(st.sampled_from(((2,), (3, 17), (2, 3, 5), (4, 65), (2, 1025),
                                       (4097,))), label="shape")
    axes = tuple(sorted(set(data.draw(_axes(shape), label="axes")) | {len(shape) - 1}))
    drawn = strategies.seeded_arrays if np.prod(shape) > 64 else strategies.finite_arrays
    x = data.draw(drawn(dt, shape, min_value=0, max_value=int(info.max)), label="x")
    high = data.draw(st.integers(half, int(info.max)), label="top-bit value")
    low = data.draw(st.integers(0, half - 1), label="low value")
    where = data.draw(st.integers(0, shape[-1] - 1), label="top-bit position")
    x[..., where] = high  # every row of the last axis (always reduced) gets both
    x[..., (where + 1) % shape[-1]] = low
    _reduce_everywhere(program_cache, name, axes, x, dt,
                       f"execute(reduce_{name} over {axes}, {dt.name}{list(shape)}, "
                       f"whole range)", float_controls)
