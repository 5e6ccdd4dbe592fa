"""Area kernels_convert: ``stablehlo.convert`` between dtypes and ``bitcast_convert``.

The xla_client API's types, compile and execute. One program converts a source array to
every destination of one capability group (so each program needs one
capability), on every device at once:

- float -> float rounds to nearest even (fp8 without infinities: overflow is
  NaN, ml_dtypes' rule), subnormals may be flushed; int -> int wraps (two's
  complement); int -> float rounds to nearest even; float -> int truncates
  toward zero for values in the destination's range; anything -> bool is
  ``!= 0``; bool -> anything is 0/1; real -> complex has a zero imaginary part.
  Out-of-range float -> int is implementation-defined and not compared.
- ``bitcast_convert`` between dtypes of one width is bit-exact (``ndarray.view``).
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
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.helpers import ulp
from conformance.helpers.reproduction import reproduction

_FP8 = [d for d in dtype_helpers.FP8 if d.name in ("float8_e4m3fn", "float8_e5m2")]
SOURCES = (dtype_helpers.BOOL + dtype_helpers.INTS + dtype_helpers.UINTS + dtype_helpers.FLOATS
           + _FP8 + dtype_helpers.COMPLEX)
#: Destination groups: every program needs at most one capability.
GROUPS: dict[str, list[dtype_helpers.DType]] = {
    "core": (dtype_helpers.BOOL + dtype_helpers.INTS + dtype_helpers.UINTS
             + [dtype_helpers.BY_NAME["float32"]]),
    "f16": [dtype_helpers.BY_NAME["float16"]], "bf16": [dtype_helpers.BY_NAME["bfloat16"]],
    "f64": [dtype_helpers.BY_NAME["float64"]], "fp8": _FP8, "complex": dtype_helpers.COMPLEX,
}


def _values(dt: dtype_helpers.DType) -> np.ndarray:
    """Special values of ``dt``: extremes, signed zeros, subnormals, halfway cases."""
    if dt.kind == "bool":
        return np.array([False, True], np.bool_)
    if dt.kind in ("int", "uint"):
        info = np.iinfo(dt.dtype)
        vals = {0, 1, 2, 3, 127, 128, 255, 256, 2**24 + 1, 2**31 - 1, 2**53 + 1,
                int(info.max), int(info.max) - 1, int(info.min), int(info.min) + 1, -1, -128,
                -(2**24) - 1}
        return np.array(sorted(v for v in vals if info.min <= v <= info.max), dt.dtype)
    real = dtype_helpers.real_dtype(dt)
    fi = ml_dtypes.finfo(real)
    vals = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 100.7, -100.7, 65504.0, 65520.0, 3e38,
            float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal), 1.0 + float(fi.eps), 1.0 / 3.0, 2.0**31, -(2.0**31),
            2.0**63, 1e300, np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        x = np.array(vals, np.float64).astype(real)
    if dt.kind == "complex":
        z = np.empty(x.shape, dt.dtype)
        z.real, z.imag = x, x[::-1]
        return z
    return x


def _reference(x: np.ndarray, src: dtype_helpers.DType,
               dst: dtype_helpers.DType) -> tuple[np.ndarray, np.ndarray]:
    """(expected, compared mask) for ``convert(x, dst)``."""
    mask = np.ones(x.shape, bool)
    with np.errstate(all="ignore"):
        if dst.kind == "bool":
            return (x != 0) if src.kind != "complex" else (x != 0), mask
        if src.kind == "bool":
            return x.astype(np.int8).astype(dst.dtype), mask
        if src.kind in ("int", "uint") and dst.kind in ("int", "uint"):
            bits = 8 * dst.dtype.itemsize
            wrapped = [int(v) & ((1 << bits) - 1) for v in x]
            return np.array(wrapped, f"u{dst.dtype.itemsize}").view(dst.dtype), mask
        if src.kind in ("int", "uint"):  # exact integers rounded once to the destination
            return np.array([round_int_to_float(int(v), dtype_helpers.real_dtype(dst)) for v in x],
                            np.float64).astype(dst.dtype), mask
        if dst.kind in ("int", "uint"):  # truncation toward zero; out of range not compared
            w = x.real.astype(np.float64) if src.kind == "complex" else x.astype(np.float64)
            info = np.iinfo(dst.dtype)  # bounds as exact powers of two
            lo, past_hi = float(int(info.min)), float(int(info.max) + 1)
            mask = np.isfinite(w) & (np.trunc(w) >= lo) & (np.trunc(w) < past_hi)
            return np.where(mask, np.trunc(np.where(mask, w, 0)), 0).astype(dst.dtype), mask
        if src.kind == "complex" and dst.kind != "complex":
            return x.real.astype(dst.dtype), mask
        return x.astype(dst.dtype), mask


def _check(out: np.ndarray, x: np.ndarray, src: dtype_helpers.DType, dst: dtype_helpers.DType,
           call: str, controls: float_control_modes.FloatControls) -> None:
    """``out`` is ``x`` converted exactly (0 ULP, signed zeros), a zero of the right sign
    allowed only where the declared float ``controls`` flush: a subnormal input of ``src``
    (DAZ), or a value below ``dst``'s smallest normal (FTZ, also where it rounds up to
    it)."""
    __tracebackhide__ = True
    expected, mask = _reference(x, src, dst)

    def parts(a: np.ndarray) -> list[np.ndarray]:
        return [a.real, a.imag] if a.dtype.kind == "c" else [a]

    if dst.kind == "bool":  # a flushed (DAZ) subnormal input is zero
        zero_under_daz = [float_control_modes.flushed(p, controls, inputs=True) == 0
                          for p in parts(x)]
        expected = np.where(np.logical_and.reduce(zero_under_daz) & ~out, False, expected)
    if dst.kind in ("float", "complex"):
        src_parts = parts(x) if x.dtype.kind == "c" else [x, np.zeros(x.shape, np.float32)]
        pairs = zip(parts(out), parts(expected), src_parts) if dst.kind == "complex" else \
            [(out, expected, src_parts[0])]
        tiny = float(ml_dtypes.finfo(dtype_helpers.real_dtype(dst)).tiny)  # FTZ: a value below the
        daz = float_control_modes.flushes_inputs_of(controls, x.dtype)
        ftz = float_control_modes.flushes_results_of(controls, dst.dtype)
        fixed = [np.where(((ulp.is_subnormal(src) & daz)
                           | ((ulp.is_subnormal(e)  # destination's tiny may flush even where
                               | (np.abs(src.astype(np.float64)) < tiny)) & ftz))  # it rounds
                          & (o == 0), o, e)  # up to tiny
                 for o, e, src in pairs]
        expected = fixed[0].astype(dst.dtype)
        if dst.kind == "complex":
            expected.imag = fixed[1]
        assertions.assert_ulp_close(out[mask], expected.astype(dst.dtype)[mask],
                                    max_ulp=tolerances.bound("exact", dst.dtype).max_ulp,
                                    signed_zeros=True, call=call)
    else:
        assertions.assert_exact(out[mask], expected[mask].astype(out.dtype), call=call)


CASES = [pytest.param(src, group, id=f"{src.name}-to-{group}",
                      marks=[pytest.mark.capability(c) for c in sorted(
                          {src.capability, group} - {None, "core"})][:1])
         for src in SOURCES for group in GROUPS
         if not (src.kind == "complex" and group != "complex")]


@pytest.mark.parametrize("src,group", CASES)
def test_convert(program_cache, float_controls, src, group):
    _convert_and_check(program_cache, _values(src), src, GROUPS[group], f"{src.name}_to_{group}",
                       "convert", float_controls)


def _convert_and_check(program_cache, x: np.ndarray, src: dtype_helpers.DType,
                       dests: list[dtype_helpers.DType], name: str, what: str,
                       controls: float_control_modes.FloatControls) -> None:
    """Convert ``x`` to every dtype of ``dests`` in one program, check each result."""
    def convert_all(a):
        return tuple(lax.convert_element_type(a, d.dtype) for d in dests)

    gate = [src, *dests]  # a clean refusal names every capability of the conversion
    call = f"execute({what} {src.name}[{x.size}] -> {[d.name for d in dests]})"
    outs, program = compiled_programs.run_everywhere(program_cache,
                                                     f"{what.replace(' ', '_')}_{name}",
                                                     convert_all, [x], gate, call,
                                                     n_outputs=len(dests))
    outs = outs if len(dests) > 1 else [outs]
    with reproduction(call, program=program, inputs=[x]):
        for dst, per_device in zip(dests, outs):
            for device, out in per_device:
                _check(out, x, src, dst, f"{what} {src.name} -> {dst.name} on {device}",
                       controls)


_BY_WIDTH = {w: [d for d in dtype_helpers.INTS + dtype_helpers.UINTS + dtype_helpers.FLOATS + _FP8
                 if d.dtype.itemsize == w] for w in (1, 2, 4, 8)}
BITCAST_CASES = [pytest.param(a, b, id=f"{a.name}-to-{b.name}",
                              marks=[pytest.mark.capability(c) for c in
                                     sorted({a.capability, b.capability} - {None})][:1])
                 for w, group in _BY_WIDTH.items() for a, b in itertools.permutations(group, 2)
                 if a.kind != b.kind or a.capability or b.capability]


@pytest.mark.parametrize("src,dst", BITCAST_CASES)
def test_bitcast_convert(program_cache, src, dst):
    x = np.arange(64, dtype=np.uint64).astype(f"u{src.dtype.itemsize}") * np.array(
        0x9E3779B97F4A7C15 & ((1 << (8 * src.dtype.itemsize)) - 1),
        f"u{src.dtype.itemsize}")
    x = x.view(src.dtype)
    call = f"execute(bitcast_convert {src.name} -> {dst.name})"
    gate = src if src.capability else dst

    def bitcast(a):
        return lax.bitcast_convert_type(a, dst.dtype)

    outs, program = compiled_programs.run_everywhere(program_cache,
                                                     f"bitcast_{src.name}_to_{dst.name}", bitcast,
                                                     [x], gate, call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_bitwise_equal(out, x.view(dst.dtype), call=f"{call} on {device}",
                                            nan_payloads=True)


#: Narrower float destinations whose rounding ties are checked, per capability group.
_ALL_FP8 = [d for d in dtype_helpers.FP8 if d.name != "float8_e8m0fnu"]  # e8m0: powers of two only
TIE_GROUPS: dict[str, list[dtype_helpers.DType]] = {
    "f32": [dtype_helpers.BY_NAME["float32"]], "bf16": [dtype_helpers.BY_NAME["bfloat16"]],
    "f16": [dtype_helpers.BY_NAME["float16"]], "fp8": _ALL_FP8,
    "int": dtype_helpers.INTS + dtype_helpers.UINTS}


def _finite_values(dst: np.dtype) -> np.ndarray:
    """The non-negative finite values of an 8- or 16-bit float dtype, sorted (float64);
    of float32: 1, 1.5, 3, the extremes and the subnormal range, and 512 spread values."""
    dst = np.dtype(dst)
    if dst.itemsize <= 2:
        codes = np.arange(2 ** (8 * dst.itemsize), dtype=f"u{dst.itemsize}").view(dst)
        with np.errstate(invalid="ignore"):
            wide = codes.astype(np.float64)
        return np.unique(wide[np.isfinite(wide) & (wide >= 0)])
    fi = np.finfo(np.float32)
    spread = np.random.default_rng(0).integers(0, 0x7F7FFFFF, 512, dtype=np.uint32)
    base = np.array([1.0, 1.5, 3.0, fi.tiny, fi.smallest_subnormal, 2 * fi.smallest_subnormal,
                     3 * fi.smallest_subnormal, fi.max / 2, fi.max], np.float32)
    ups = np.nextafter(np.concatenate([base, spread.view(np.float32)]), np.float32(fi.max))
    return np.unique(np.concatenate([base, spread.view(np.float32), ups]).astype(np.float64))


def _ties(src: dtype_helpers.DType, dests: list[dtype_helpers.DType]) -> np.ndarray:
    """Values of ``src`` exactly halfway between neighbours of each destination (and half a
    step above its largest finite value), both signs; for integer destinations ``k + 0.5``.
    Sources narrower than float64 also get the values one ``src`` step either side of a tie,
    which must round to the nearer neighbour."""
    mids = []
    for dst in dests:
        if dst.kind in ("int", "uint"):
            top = 2.0 ** (ml_dtypes.finfo(src.dtype).nmant - 1)  # k + 0.5 still representable
            ks = np.unique(np.concatenate([np.arange(-130, 131), [top - 1, top / 2 + 1]]))
            mids.append(ks + 0.5)
            continue
        v = _finite_values(dst.dtype)
        mids.append(np.concatenate([(v[:-1] + v[1:]) / 2, [v[-1] + (v[-1] - v[-2]) / 2]]))
    t = np.concatenate(mids)
    with np.errstate(over="ignore"):
        t = t[t.astype(src.dtype).astype(np.float64) == t]  # exactly representable in src
    x = np.unique(np.concatenate([t, -t])).astype(src.dtype)
    if src.name != "float64":  # ml_dtypes rounds float64 via float32 (twice): ties only
        big = np.array(np.inf, np.float64).astype(src.dtype)
        x = np.concatenate([x, np.nextafter(x, big), np.nextafter(x, -big)])
    return x


TIE_CASES = [pytest.param(src, group, id=f"{src.name}-to-{group}",
                          marks=[pytest.mark.capability(c) for c in sorted(
                              {src.capability, TIE_GROUPS[group][0].capability} - {None})][:1])
             for src in dtype_helpers.FLOATS for group in TIE_GROUPS
             if group == "int" or all(
                 ml_dtypes.finfo(d.dtype).nmant < ml_dtypes.finfo(src.dtype).nmant
                 for d in TIE_GROUPS[group])]


@pytest.mark.parametrize("src,group", TIE_CASES)
def test_convert_rounds_ties_to_nearest_even(program_cache, float_controls, src, group):
    """Exact ties of float -> narrower float round to even (not away from or toward zero);
    float -> int truncates ``k + 0.5`` toward zero. Reference: ml_dtypes / NumPy."""
    _convert_and_check(program_cache, _ties(src, TIE_GROUPS[group]), src, TIE_GROUPS[group],
                       f"{src.name}_to_{group}", "convert ties", float_controls)


def round_int_to_float(v: int, dst: np.dtype) -> float:
    """The integer ``v`` rounded once, to nearest even, to the float dtype ``dst``
    (infinity past the largest finite value, IEEE 754's overflow rule), computed exactly
    with Python integers (never through float64, which would round twice)."""
    fi = ml_dtypes.finfo(dst)
    nmant, top = int(fi.nmant), 2 ** int(fi.maxexp)  # top: the first power of two past max
    a = abs(int(v))
    shift = a.bit_length() - 1 - nmant  # bits of a below the destination's last place
    if shift > 0:
        q, r = divmod(a, 1 << shift)
        half = 1 << (shift - 1)
        q += r > half or (r == half and q & 1)
        a = q << shift
    if a >= top:  # rounded (with an unbounded exponent) to 2**maxexp or beyond: overflow
        return -np.inf if v < 0 else np.inf
    return float(-a if v < 0 else a)  # at most nmant + 1 significant bits: exact


@st.composite
def near_ties(draw, src: dtype_helpers.DType, dst: dtype_helpers.DType) -> int:
    """An integer of ``src`` at, or a little off, the midpoint of two neighbours of ``dst``:
    ``m * 2**k + 2**(k-1) + d`` (``m``: ``nmant + 1`` leading bits, ``k`` >= 1), with the
    offset ``d`` 0 (an exact tie), or ``+-(1 .. 2**j)`` for a drawn ``j < k - 1`` (small
    ones vanish in a first rounding to float64 or float32 and make a tie of a near-tie:
    two roundings then give the even neighbour where one rounding gives the nearer)."""
    info = np.iinfo(src.dtype)
    nmant = int(ml_dtypes.finfo(dst.dtype).nmant)
    width = int(info.max).bit_length()  # 63 (int64), 64 (uint64)
    bits = draw(st.integers(nmant + 2, width), label="bit length")
    k = bits - 1 - nmant
    m = draw(st.integers(2**nmant, 2 ** (nmant + 1) - 1), label="leading bits")
    tie = (m << k) + (1 << (k - 1))
    j = draw(st.integers(0, k - 2), label="offset bits") if k >= 2 else 0
    d = draw(st.sampled_from([0, 1, -1]) | st.integers(-(2**j), 2**j), label="offset")
    v = min(tie + d, int(info.max))
    negative = src.kind == "int" and draw(st.booleans(), label="negative")
    return -v if negative else v


@functools.lru_cache(maxsize=None)  # one function per dtype: the program cache keys on it
def _convert_to(dtype: np.dtype):
    return lambda a: lax.convert_element_type(a, dtype)


WIDE_INT_CASES = [pytest.param(src, dst, id=f"{src.name}-to-{dst.name}",
                               marks=[pytest.mark.capability(dst.capability)]
                               if dst.capability else [])
                  for src in (dtype_helpers.BY_NAME["int64"], dtype_helpers.BY_NAME["uint64"])
                  for dst in (dtype_helpers.BY_NAME[n] for n in ("float32", "bfloat16", "float16"))]


@pytest.mark.parametrize("src,dst", WIDE_INT_CASES)
@given(data=st.data())
def test_convert_wide_integers_rounds_once(program_cache, src, dst, data):
    """int64/uint64 -> float32/bfloat16/float16 rounds once, to nearest even (IEEE 754
    convertFromInt): drawn integers at and near the midpoints of ``dst``'s neighbours
    (:func:`near_ties`; most need more than float64's 53 bits), compared bit-exact with
    the correctly rounded value computed with Python integers
    (:func:`round_int_to_float`). A conversion through float64 or float32 (two
    roundings) gives the even neighbour for a value just off a midpoint."""
    values = data.draw(st.lists(near_ties(src, dst), min_size=32, max_size=32), label="x")
    x = np.array(values, src.dtype)
    with np.errstate(over="ignore"):
        expected = np.array([round_int_to_float(int(v), dst.dtype) for v in x],
                            np.float64).astype(dst.dtype)
    call = f"execute(convert {src.name}[{x.size}] -> {dst.name}) of near-ties"
    outs, program = compiled_programs.run_everywhere(
        program_cache, f"convert_wide_int_{src.name}_to_{dst.name}",
        _convert_to(dst.dtype), [x], dst if dst.capability else src,
        call)
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_ulp_close(out, expected,
                                        max_ulp=tolerances.bound("exact", dst.dtype).max_ulp,
                                        signed_zeros=True,
                                        call=f"{call} on {device}")
