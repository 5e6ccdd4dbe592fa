"""Area kernels_elementwise: StableHLO unary/binary math on special values and in ULP.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``) with XLA's code generation, every device at once (one SPMD
executable, replicated inputs):

- IEEE-defined float ops (``+ - * / sqrt``, rounding, sign, min/max, compares)
  on every pair of special values (signed zeros, infinities, NaN, subnormals,
  the largest finite values) at 0 ULP. Platforms that flush subnormals (XLA's
  CPU and GPU default to FTZ/DAZ) may return the flushed result there; what
  arithmetic does with subnormals is the backend's declared float controls
  (``--float-controls``, :mod:`conformance.helpers.float_control_modes`), checked
  on every device by ``test_denormals_as_declared``.
- Transcendental ops at the special values and on Hypothesis-drawn values in
  their domain, within the op's budget in :mod:`conformance.helpers.tolerances`
  (against mpmath's correctly rounded result), over shapes that cross the 128-element
  tile and end their rows in a vector tail (``ACCURACY_SHAPES``).
- Integer ops at the extremes of every integer type: two's complement
  wraparound, shifts by >= the bit width (StableHLO: 0, or the sign for
  arithmetic right shifts), popcount and clz: exact.
- Integer division by zero and ``MIN / -1`` are implementation-defined in
  StableHLO; XLA's documented convention is checked as informational.
"""

from __future__ import annotations

import functools
import itertools

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
from conformance.helpers import mpmath_reference, tolerances, ulp
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction
from conformance.programs import compiled_programs
from conformance.programs import catalog
from conformance.programs.catalog import Elementwise

FLOATS = dtype_helpers.FLOATS
INTEGERS = dtype_helpers.INTS + dtype_helpers.UINTS


def _float_specials(dtype: np.dtype) -> np.ndarray:
    fi = ml_dtypes.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -7.25, float(fi.max), -float(fi.max),
              float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal),
              -float(fi.smallest_subnormal), 1.0 + float(fi.eps), np.inf, -np.inf, np.nan]
    return np.array(values, np.float64).astype(dtype)


def _special_args(op: Elementwise, dtype: np.dtype) -> list[np.ndarray]:
    """Every special value (unary) or every ordered pair of them (binary)."""
    s = _float_specials(dtype)
    if op.arity == 1:
        return [s]
    a, b = zip(*itertools.product(s, s))
    return [np.array(a, dtype), np.array(b, dtype)]


def _float_reference(op: Elementwise, args: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op.exact:  # numpy's float16/32/64 (and ml_dtypes' via float32) round correctly
            return np.asarray(op.reference(*args)).astype(dtype)
        return np.asarray(op.reference(*[a.astype(np.float64) for a in args])).astype(dtype)


def _check_ieee_or_flushed(op: Elementwise, out: np.ndarray, args: list[np.ndarray],
                           dtype: np.dtype, call: str,
                           controls: float_control_modes.FloatControls) -> None:
    """``out`` is the IEEE result, or, where the declared float ``controls`` flush
    ``dtype``, the result with the inputs (DAZ) and the output (FTZ) flushed as declared,
    element by element, within 0 ULP (exact ops) or the ULP table. Under an IEEE
    declaration a flushed subnormal fails."""
    __tracebackhide__ = True
    max_ulp = (tolerances.bound("exact", dtype) if op.exact else tolerances.bound(
        "ulp", dtype, op=op.name, reference="numpy")).max_ulp
    ieee = _float_reference(op, args, dtype)
    daz = functools.partial(float_control_modes.flushed, controls=controls, inputs=True)
    flushed = float_control_modes.flushed(_float_reference(op, [daz(a) for a in args], dtype),
                                          controls, inputs=False)
    picked = np.where(_matches(out, flushed, max_ulp, op.signed_zeros) &
                      ~_matches(out, ieee, max_ulp, op.signed_zeros), flushed, ieee)
    if op.name in ("maximum", "minimum") and float_control_modes.flushes_inputs_of(controls, dtype):
        # a selection compared under DAZ may return the unflushed input that ties with
        # the expected value (XLA CPU, jaxlib 0.11)
        tie = np.zeros(out.shape, bool)
        for a in args:
            same = out.view(f"u{out.dtype.itemsize}") == a.view(f"u{a.dtype.itemsize}")
            tie |= same & (daz(out).astype(np.float64) == daz(ieee).astype(np.float64))
        picked = np.where(tie, out, picked)
    assertions.assert_ulp_close(out, picked.astype(dtype), max_ulp=max_ulp, call=call,
                                signed_zeros=op.exact and op.signed_zeros)


def _matches(out: np.ndarray, want: np.ndarray, max_ulp: int, signed_zeros: bool) -> np.ndarray:
    o, w = out.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.where(np.isnan(o) | np.isnan(w), np.isnan(o) & np.isnan(w),
                      ulp.ulp_distance(out, want.astype(out.dtype)) <= max_ulp)
        if signed_zeros:
            ok &= np.where((o == 0) & (w == 0), np.signbit(o) == np.signbit(w), True)
    return ok


FLOAT_CASES = [pytest.param(op, dt, id=f"{op.name}-{dt.name}",
                            marks=[pytest.mark.capability(dt.capability)] if dt.capability
                            else [])
               for op in catalog.ops(catalog.FLOAT_KERNELS) for dt in FLOATS]


@pytest.mark.parametrize("op,dt", FLOAT_CASES)
def test_float_special_values(program_cache, float_controls, op, dt):
    args = _special_args(op, dt.dtype)
    call = f"execute({op.name}, {dt.name} special values)"
    outs, program = compiled_programs.run_everywhere(
        program_cache, f"{op.name}", op.fn, args, dt, call)
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            _check_ieee_or_flushed(op, out, args, dt.dtype, f"{call} on {device}",
                                   float_controls)


ACCURACY_CASES = [c for c in FLOAT_CASES if not c.values[0].exact]

#: Shapes of test_float_accuracy_in_ulp, at most 258 elements. Each crosses the 128-element
#: tile (it has a flat index 127 mod 128 and elements past it) and ends every row in a
#: vector tail (its last axis, over 8 and not a multiple of 8, is one below or one past a
#: ``strategies.BOUNDARY_SIZES`` width: 17, 65, 127, 129, 255, 257), the remainders where a
#: vendor's vectorized kernel goes wrong. (64,) reached neither.
ACCURACY_SHAPES = ((255,), (2, 129), (257,), (3, 65), (129,), (9, 17), (2, 127))
#: Values drawn for each argument (``strategies.finite_arrays``), repeated over the shape.
ACCURACY_VALUES = 64
#: Each case's own shape, the case's index in ACCURACY_CASES modulo 7 (prime to the 4 float
#: dtypes: every dtype gets every shape over the ops), one compile per case in every
#: profile but ``nightly``.
ACCURACY_SHAPE_OF = {(c.values[0].name, c.values[1].name):
                     ACCURACY_SHAPES[i % len(ACCURACY_SHAPES)]
                     for i, c in enumerate(ACCURACY_CASES)}


def accuracy_shapes(op: Elementwise,
                    dt: dtype_helpers.DType) -> st.SearchStrategy[tuple[int, ...]]:
    """The shapes test_float_accuracy_in_ulp draws for ``op`` and ``dt``: the case's own
    shape (``ACCURACY_SHAPE_OF``) under every profile but ``nightly``, every one of
    :data:`ACCURACY_SHAPES` (the case's own first) under ``nightly``. Each shape is a
    compile (~0.1 s on XLA:CPU, ~40% of a case's ``ci`` time; two shapes a case made the
    test 1.6-1.8x slower), so a case's ``ci`` examples share one."""
    own = ACCURACY_SHAPE_OF[(op.name, dt.name)]
    if strategies.profile_name() != "nightly":
        return st.just(own)
    return st.sampled_from((own,) + tuple(s for s in ACCURACY_SHAPES if s != own))


@pytest.mark.parametrize("op,dt", ACCURACY_CASES)
@given(data=st.data())
def test_float_accuracy_in_ulp(program_cache, op, dt, data):
    """Drawn values in the op's domain within the op's ULP budget
    (:func:`conformance.helpers.tolerances.ulp_bound`) of the correctly rounded mpmath
    result: 64 for each argument, repeated over the case's shape of :data:`ACCURACY_SHAPES`
    (:func:`accuracy_shapes`), which crosses the 128-element tile and ends each row in a
    vector tail.

    Periodic ops (tolerance class ``ARGUMENT_SCALED``: sin, cos, tan) may instead be within
    an absolute error of ``eps * max(1, |x|)``: near a multiple of pi range reduction makes
    their relative error unbounded on every implementation. Other ops get only ``tiny`` (a
    result in the subnormal range, flushed or not: ``tolerances.bound("ulp", ...)``).
    """
    fi = ml_dtypes.finfo(dt.dtype)
    lo, hi = max(op.domain[0], -float(fi.max)), min(op.domain[1], float(fi.max))
    if lo > 0:  # a positive domain stays positive and normal after rounding to dt
        lo = max(lo, float(fi.tiny))
    shape = data.draw(accuracy_shapes(op, dt), label="shape")
    args = [
        np.resize(data.draw(strategies.finite_arrays(dt, (ACCURACY_VALUES,), min_value=lo,
                                                     max_value=hi), label=f"arg{i}"), shape)
        for i in range(op.arity)
    ]
    call = f"execute({op.name}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, op.name, op.fn, args, dt, call)
    expected = mpmath_reference.correctly_rounded(op.name, args, dt.dtype)
    tol = tolerances.bound("ulp", dt.dtype, op=op.name,
                           scale=op.arg_scale(args) if op.tolerance == catalog.ARGUMENT_SCALED
                           else None)
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            assertions.assert_ulp_close(out, expected, max_ulp=tol.max_ulp, atol=tol.atol,
                                        call=f"{call} on {device}")


def _denormal_probes(dtype: np.dtype) -> dict[str, tuple[list[np.ndarray], bool]]:
    """Programs whose only subnormal is their result (``ftz``: normal * 0.5) or their
    input (``daz``: subnormal * 4, a normal result), each exact in IEEE 754: name ->
    (arguments, whether the subnormal is the input)."""
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    normal = np.array([tiny, -tiny, 1.5 * tiny, -1.5 * tiny], np.float64).astype(dtype)
    sub = np.array([tiny / 2, -tiny / 2, 0.75 * tiny, -0.75 * tiny], np.float64).astype(dtype)
    return {"ftz": ([normal, np.full(4, 0.5, dtype)], False),
            "daz": ([sub, np.full(4, 4.0, dtype)], True)}


@pytest.mark.parametrize("dt", [capabilities.param(d) for d in FLOATS])
def test_denormals_as_declared(program_cache, float_controls, dt):
    """Arithmetic handles subnormals as the backend declares (``--float-controls``): a
    subnormal result is kept (IEEE 754) or flushed to a zero of its sign (FTZ), a
    subnormal input is used or read as zero (DAZ), the same on every device."""
    declared = (f"declared {dt.name}={float_controls.mode(dt.name)} [{float_controls.source}]"
                + ("; a backend that flushes subnormals declares it with --float-controls "
                   "(e.g. --float-controls=xla-cpu for an XLA CPU plugin; "
                   "docs/float-controls.md)" if float_controls.source.startswith("auto")
                   else ""))
    for probe, (args, on_input) in _denormal_probes(dt.dtype).items():
        exact = (args[0].astype(np.float64) * args[1].astype(np.float64)).astype(dt.dtype)
        want = float_control_modes.expected(args[0], exact, float_controls, on_input)
        call = f"execute(multiply, {dt.name} {probe} probe)"
        outs, program = compiled_programs.run_everywhere(program_cache, f"denormals_{probe}",
                                                         lax.mul, args, dt, call)
        with reproduction(call, program=program, inputs=args):
            for device, out in outs:
                assertions.assert_bitwise_equal(out, want, call=f"{call} on {device}: {declared}")


# -- integers ------------------------------------------------------------------------------

def _int_specials(dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    values = {0, 1, 2, 7, int(info.max), int(info.max) - 1, int(info.min), int(info.min) + 1,
              (int(info.max) >> 1) + 1}
    if info.min < 0:
        values |= {-1, -2, -7}
    return np.array(sorted(values), dtype)


def _int_args(op: Elementwise, dtype: np.dtype) -> list[np.ndarray]:
    s = _int_specials(dtype)
    if op.arity == 1:
        return [s]
    if op.name.startswith("shift"):
        bits = np.dtype(dtype).itemsize * 8
        amounts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, int(np.iinfo(dtype).max)]
        if np.iinfo(dtype).min < 0:
            amounts.append(-1)
        a, b = zip(*itertools.product(s, catalog.wrap_ints(amounts, dtype)))
    else:
        a, b = zip(*itertools.product(s, s))
    return [np.array(a, dtype), np.array(b, dtype)]


INT_CASES = [pytest.param(op, dt, id=f"{op.name}-{dt.name}")
             for op in catalog.ops(catalog.INT_KERNELS) for dt in INTEGERS
             if dt.kind in op.kinds]


@pytest.mark.parametrize("op,dt", INT_CASES)
def test_integer_extremes(program_cache, op, dt):
    args = _int_args(op, dt.dtype)
    expected = op.int_reference(*args)
    call = f"execute({op.name}, {dt.name} extremes)"
    outs, program = compiled_programs.run_everywhere(program_cache, op.name, op.fn, args, dt, call)
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            assertions.assert_exact(out, expected.astype(out.dtype) if op.name in ("popcnt", "clz")
                                    else expected, call=f"{call} on {device}")


def _xla_divide(a: int, b: int, dtype: np.dtype) -> int:
    """XLA's convention: x / 0 = -1 (all bits set), MIN / -1 = MIN, else truncation."""
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _xla_remainder(a: int, b: int, dtype: np.dtype) -> int:
    """XLA's convention: x % 0 = x, MIN % -1 = 0, else the sign of the dividend."""
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return -r if a < 0 else r


@pytest.mark.informational
@pytest.mark.parametrize("name", ["divide", "remainder"])
@pytest.mark.parametrize("dt", INTEGERS, ids=lambda d: d.name)
def test_integer_division_by_zero_follows_xla(program_cache, name, dt):
    """StableHLO leaves x/0 and MIN/-1 implementation-defined; XLA documents its choice."""
    s = _int_specials(dt.dtype)
    a, b = (np.array(v, dt.dtype) for v in zip(*itertools.product(s, s)))
    ref = _xla_divide if name == "divide" else _xla_remainder
    expected = catalog.wrap_ints([ref(int(x), int(y), dt.dtype) for x, y in zip(a, b)],
                                 dt.dtype)
    call = f"execute({name}, {dt.name} incl. division by zero and MIN/-1)"
    fn = lax.div if name == "divide" else lax.rem
    outs, program = compiled_programs.run_everywhere(program_cache, name, fn, [a, b], dt, call)
    with reproduction(call, program=program, inputs=[a, b]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")


def _scaled_complex(rng: np.random.Generator, dtype: np.dtype, exponent: np.ndarray
                    ) -> np.ndarray:
    """Complex values of ``dtype`` whose components are 0 or normal with binary exponents
    within 6 below ``exponent`` (per element): ``m * 2**e``, ``m`` in [1, 2)."""
    real = dtype_helpers.real_dtype(dtype_helpers.BY_NAME[np.dtype(dtype).name])
    fi = ml_dtypes.finfo(real)
    parts = []
    for _ in range(2):
        e = np.clip(exponent - rng.integers(0, 7, exponent.shape), int(fi.minexp),
                    int(fi.maxexp) - 1)
        m = rng.uniform(1, 2, exponent.shape) * rng.choice([-1.0, 1.0], exponent.shape)
        v = np.ldexp(m, e).astype(real)
        parts.append(np.where(rng.random(exponent.shape) < 0.1, 0.0, v).astype(real))
    z = np.empty(exponent.shape, dtype)
    z.real, z.imag = parts
    z[z == 0] = np.array(1, real) * 2.0 ** int(exponent.flat[0])  # no zero divisor
    return z


def exact_quotient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` per element, each component the exact rational rounded once to float64
    (Python's Fraction division), never through ``|b|**2`` in floating point."""
    from fractions import Fraction

    out = np.empty(a.shape, np.complex128)
    for i, (x, y) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())):
        ar, ai, br, bi = (Fraction(float(v)) for v in (x.real, x.imag, y.real, y.imag))
        den = br * br + bi * bi
        out.flat[i] = complex(float((ar * br + ai * bi) / den), float((ai * br - ar * bi) / den))
    return out


#: Normwise relative error of a complex quotient, in units of eps: a scaled (Smith's or
#: Baudin-Smith) division is within a few eps in norm; 8 leaves room for an extra
#: rescaling step and the reference's rounding to the dtype.
COMPLEX_DIVIDE_ROUNDINGS = 8


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("complex64", "complex128")])
@given(data=st.data())
def test_complex_divide_by_huge_and_tiny_divisors(program_cache, float_controls, dt, data):
    """``a / b`` for divisors near the top (``|b|**2`` overflows) and the bottom (``|b|**2``
    underflows; components still normal) of the exponent range, numerators scaled with them
    so that the quotient is moderate (``|a/b|`` within about 2**+-10; every component
    below max/4 and 2**30 above the smallest normal): the textbook
    ``a * conj(b) / |b|**2`` returns inf/NaN or 0 there; a scaled division returns the
    quotient within ``8 * eps * |a/b|`` in norm (the tiny part: flush-to-zero of a
    subnormal component) of the exact quotient (:func:`exact_quotient`, rational arithmetic)."""
    real = dtype_helpers.real_dtype(dt)
    fi = ml_dtypes.finfo(real)
    n = 64
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    huge = data.draw(st.booleans(), label="huge divisors")
    # |b|**2 overflows (|b| > 2**(maxexp/2)) or underflows (|b| < 2**(minexp/2)); tiny
    # divisors stay 2**30 above the smallest normal, so that no product of the division
    # (components times ratios of at most 2**-7) is subnormal and flushed (FTZ); every
    # component stays below max/4, so that the sums of a scaled division (|re| + |im| of
    # a or b) cannot overflow either
    top = int(fi.maxexp) - 3
    lo, hi = ((int(fi.maxexp) // 2 + 1, top) if huge else
              (int(fi.minexp) + 30, int(fi.minexp) // 2 - 2))
    e_b = data.draw(st.integers(lo, hi), label="divisor exponent") + rng.integers(-2, 3, n)
    e_b = np.clip(e_b, lo, hi)
    shift = data.draw(st.integers(-4, 4), label="quotient exponent")
    e_a = np.clip(e_b + shift + rng.integers(-4, 5, n), int(fi.minexp) + 30, top)
    b = _scaled_complex(rng, dt.dtype, e_b)
    a = _scaled_complex(rng, dt.dtype, e_a)
    call = f"execute(divide, {dt.name}[{n}] with {'huge' if huge else 'tiny'} divisors)"
    outs, program = compiled_programs.run_everywhere(
        program_cache, "divide", lax.div, [a, b], dt, call)
    exact = exact_quotient(a, b)
    bound = tolerances.bound("rounding", dt.dtype, magnitude=np.abs(exact),
                             roundings=COMPLEX_DIVIDE_ROUNDINGS, underflows=2,
                             controls=float_controls, name="8*eps*|a/b| + 2*tiny (normwise)")
    with reproduction(call, program=program, inputs=[a, b]):
        for device, out in outs:
            assertions.assert_within_bound(out, exact.astype(dt.dtype), bound,
                                           call=f"{call} on {device}")


#: Ops of test_float_ops_past_64_elements: name -> (operand range of each argument). The
#: exact ops (0 ULP) and a few transcendental ones whose vectorized code has a remainder loop.
LONG_OPS = {"add": ((-1e3, 1e3), (-1e3, 1e3)), "multiply": ((-1e3, 1e3), (-1e3, 1e3)),
            "divide": ((-1e3, 1e3), (0.5, 1e3)), "sqrt": ((0.0, 1e3),),
            "exp": ((-10.0, 10.0),), "log": ((1e-3, 1e3),), "tanh": ((-10.0, 10.0),),
            "sin": ((-100.0, 100.0),)}


@functools.lru_cache(maxsize=None)  # one function per signature: the program cache keys on it
def _long_ops():
    ops = [catalog.ELEMENTWISE[n] for n in LONG_OPS]

    def every(*args):
        it = iter(args)
        return tuple(op.fn(*[next(it) for _ in range(op.arity)]) for op in ops)
    return every


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("float32", "bfloat16", "float16")])
@given(data=st.data())
def test_float_ops_past_64_elements(program_cache, float_controls, dt, data):
    """add, multiply, divide, sqrt (0 ULP, or the flushed result) and exp, log, tanh, sin
    (the op's ULP budget against mpmath, sin with its argument-scaled allowance) on one
    long axis (``strategies.axis_sizes``: the vector and tile boundaries 63..4097 and any size up
    to the element budget, 4097; 2**16 under the nightly profile), so that a kernel's
    vectorized body and its remainder loop both run. One program computes all eight."""
    n = data.draw(
        strategies.axis_sizes(strategies.element_budget(ci=4097, nightly=2**16), min_size=65),
        label="size")
    args, names = [], []
    for name, ranges in LONG_OPS.items():
        for i, (lo, hi) in enumerate(ranges):
            args.append(data.draw(strategies.seeded_arrays(dt, (n,), min_value=lo, max_value=hi),
                                  label=f"{name} arg{i}"))
            names.append(name)
    call = f"execute(add/multiply/divide/sqrt/exp/log/tanh/sin, {dt.name}[{n}])"
    outs, program = compiled_programs.run_everywhere(program_cache, "long_ops", _long_ops(), args,
                                                     dt, call, n_outputs=len(LONG_OPS))
    with reproduction(call, program=program, inputs=args):
        it = iter(args)
        for k, name in enumerate(LONG_OPS):
            op = catalog.ELEMENTWISE[name]
            op_args = [next(it) for _ in range(op.arity)]
            if not op.exact:
                expected = mpmath_reference.correctly_rounded(name, op_args, dt.dtype)
                tol = tolerances.bound(
                    "ulp", dt.dtype, op=name,
                    scale=op.arg_scale(op_args) if op.tolerance == catalog.ARGUMENT_SCALED
                    else None)
            for device, out in outs[k]:
                where = f"{call} on {device} ({name})"
                if op.exact:
                    _check_ieee_or_flushed(op, out, op_args, dt.dtype, where, float_controls)
                else:
                    assertions.assert_ulp_close(out, expected, max_ulp=tol.max_ulp, atol=tol.atol,
                                                call=where)
