"""Area kernels_fft: ``stablehlo.fft`` (ducc on CPU, cuFFT on CUDA) vs ``scipy.fft``.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once. Lengths are drawn from
powers of two, primes and 1, and lengths with large prime factors up to 4099
(``LARGE_LENGTHS``, each pinned in every run; the nightly profile adds 2**16,
65537 and 2**17 - 1); axes from the array's last dimensions (FFT acts on
trailing axes). The error of an FFT of length ``n`` is bounded by
``c * log2(n) * eps * sqrt(n) * ||x||_2``-style norms; the test holds every
output element to ``8 * (log2(n) + 1) * eps * sum(|x|)`` over the transformed
axes, which a wrong normalisation (a factor ``n`` or ``sqrt(n)``) or a wrong
twiddle exceeds by orders of magnitude, plus the flush-to-zero allowance of
``error_bounds`` (tiny inputs give subnormal outputs that may be flushed).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy  # scipy.fft loads on first use (scipy's lazy submodules): collection stays cheap
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.programs import moves
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction

LENGTHS = (1, 2, 8, 64, 3, 5, 7, 17, 97)
#: Lengths with large prime factors and past block sizes: primes 127, 257, 1009, 4099;
#: 3063 = 3 * 1021 and 4097 = 17 * 241; the nightly profile adds 2**16, the prime 65537
#: and 2**17 - 1 (prime).
LARGE_LENGTHS = (127, 257, 1009, 3063, 4097, 4099)
NIGHTLY_LENGTHS = (65536, 65537, 131071)


def _lengths() -> st.SearchStrategy[int]:
    budget = strategies.element_budget(ci=4099, nightly=131071)
    return st.one_of(st.sampled_from(LENGTHS), st.sampled_from(
        [n for n in LARGE_LENGTHS + NIGHTLY_LENGTHS if n <= budget]))


KINDS = ("fft", "ifft", "rfft", "irfft", "fftn")


@functools.lru_cache(maxsize=None)  # one function per signature: the program cache keys on it
def _jax_fn(kind: str, axes: tuple[int, ...], n_out: int | None):
    import jax.numpy as jnp

    return {"fft": lambda x: jnp.fft.fft(x, axis=axes[0]),
            "ifft": lambda x: jnp.fft.ifft(x, axis=axes[0]),
            "rfft": lambda x: jnp.fft.rfft(x, axis=axes[0]),
            "irfft": lambda x: jnp.fft.irfft(x, n=n_out, axis=axes[0]),
            "fftn": lambda x: jnp.fft.fftn(x, axes=axes)}[kind]


def _reference(kind: str, x: np.ndarray, axes: tuple[int, ...], n_out: int | None):
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    return {"fft": lambda: scipy.fft.fft(wide, axis=axes[0]),
            "ifft": lambda: scipy.fft.ifft(wide, axis=axes[0]),
            "rfft": lambda: scipy.fft.rfft(wide, axis=axes[0]),
            "irfft": lambda: scipy.fft.irfft(wide, n=n_out, axis=axes[0]),
            "fftn": lambda: scipy.fft.fftn(wide, axes=axes)}[kind]()


CASES = [
    pytest.param(kind, dt, id=f"{kind}-{dt.name}",
                 marks=[pytest.mark.capability(dt.capability)] if dt.capability else [])
    for kind in KINDS
    for dt in ([dtype_helpers.BY_NAME["float32"], dtype_helpers.BY_NAME["float64"]]
               if kind == "rfft" else dtype_helpers.COMPLEX)
]


@pytest.mark.parametrize("kind,dt", CASES)
@given(data=st.data())
def test_fft(program_cache, float_controls, kind, dt, data):
    _check_fft(program_cache, kind, dt, data.draw(_lengths(), label="length"), data,
               float_controls)


@pytest.mark.parametrize("n", LARGE_LENGTHS)
@pytest.mark.parametrize("kind,dt", [
    pytest.param("fft", dtype_helpers.BY_NAME["complex64"], id="fft-complex64",
                 marks=[pytest.mark.capability("complex")]),
    pytest.param("rfft", dtype_helpers.BY_NAME["float32"], id="rfft-float32")])
@given(data=st.data())
def test_fft_of_lengths_with_large_prime_factors(program_cache, float_controls, kind, dt, n,
                                                 data):
    """Every length of ``LARGE_LENGTHS`` in every run; the operand also moved on the
    device (:mod:`conformance.programs.moves`) when above 1,024 elements."""
    x = _check_fft(program_cache, kind, dt, n, data, float_controls)
    moves.check_moves(program_cache, x, dt, f"{kind}({dt.name}{list(x.shape)})")


def _check_fft(program_cache, kind: str, dt: dtype_helpers.DType, n: int, data,
               controls: float_control_modes.FloatControls) -> np.ndarray:
    """Check one FFT on every device; return its operand."""
    if kind == "fftn":
        m = data.draw(st.sampled_from((1, 4, 5)), label="second length")
        shape, axes = (2, m, n), (1, 2)
    else:
        shape, axes = (3, n), (1,)
    n_out = None
    if kind == "irfft":  # input of an rfft of length n_out
        n_out = n
        shape = (3, n // 2 + 1)
    x = data.draw(
        strategies.finite_arrays(dt, shape, min_value=-4, max_value=4) if np.prod(shape) <= 64 else
        strategies.seeded_arrays(dt, shape, min_value=-4, max_value=4), label="x")
    call = f"execute({kind} axes={axes}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"{kind}_{axes}_{n_out}",
                                                     _jax_fn(kind, axes, n_out), [x], dt, call)
    ref = _reference(kind, x, axes, n_out)
    total = int(np.prod([shape[a] for a in axes])) if kind != "irfft" else n_out
    mag = np.sum(np.abs(x.astype(np.complex128)), axis=axes, keepdims=True)
    if kind in ("ifft", "irfft"):
        mag = mag / max(total, 1) * (2 if kind == "irfft" else 1)
    bound = tolerances.bound(  # every intermediate (~2n) may underflow once
        "rounding", dt.dtype, magnitude=np.broadcast_to(mag, ref.shape),
        roundings=8 * (np.log2(max(total, 1)) + 1), underflows=2 * max(total, 1),
        controls=controls, name="8*(log2 n+1)*eps*sum|x| + 2n*tiny")
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            expected = ref.astype(out.dtype) if out.dtype.kind == ref.dtype.kind else ref
            assertions.assert_within_bound(out, expected, bound, call=f"{call} on {device}")
    return x


#: Roundings of ``ifft(fft(x))`` the round trip is held to, relative to ``max|x|``: two
#: transforms of 16 points (``log2 16 = 4`` butterfly stages each, every stage a complex
#: multiply-add of a few roundings) and the ``1/n`` scaling, with room to spare.
ROUND_TRIP_ROUNDINGS = 64


@pytest.mark.parametrize("dt", [capabilities.param(d) for d in dtype_helpers.COMPLEX])
def test_fft_round_trip_is_identity(program_cache, float_controls, dt):
    """ifft(fft(x)) == x within the bound: a normalisation applied twice or never shows."""
    import jax.numpy as jnp

    x = (np.arange(48).reshape(3, 16) % 7 - 3).astype(dt.dtype)
    call = f"execute(ifft(fft(x)), {dt.name}[3, 16])"
    outs, program = compiled_programs.run_everywhere(program_cache, "fft_round_trip",
                                                     lambda a: jnp.fft.ifft(jnp.fft.fft(a)), [x],
                                                     dt, call)
    bound = tolerances.bound("rounding", dt.dtype,
                             magnitude=np.full(x.shape, np.max(np.abs(x))),
                             roundings=ROUND_TRIP_ROUNDINGS, underflows=0,
                             controls=float_controls, name="64*eps*max|x|")
    with reproduction(call, program=program, inputs=[x]):
        for device, out in outs:
            assertions.assert_within_bound(out, x, bound, call=f"{call} on {device}")
