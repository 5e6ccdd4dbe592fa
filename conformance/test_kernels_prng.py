"""Area kernels_prng: jax's Threefry-2x32 PRNG on the device, bit for bit and in law.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``). ``threefry_2x32`` programs (the kernel behind
every ``jax.random`` sampler) are compared bit-exactly with the independent
NumPy implementation :mod:`conformance.helpers.threefry` on Hypothesis-drawn keys and
counters; ``jax.random.uniform`` and ``jax.random.normal`` samples drawn on the
device pass Kolmogorov-Smirnov tests (``scipy.stats.kstest``, p > 1e-4) at
fixed seeds, so the test is deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy  # scipy.stats (0.5 s to import) loads on first use: collection stays cheap
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.programs import compiled_programs
from conformance.helpers.reproduction import reproduction
from conformance.helpers.threefry import jax_threefry_2x32

U32 = dtype_helpers.BY_NAME["uint32"]
SAMPLES = 4096


def _threefry(key, count):
    from jax.extend.random import threefry_2x32

    return threefry_2x32((key[0], key[1]), count)


@given(key=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
       length=st.sampled_from((2, 9, 64)), data=st.data())
def test_threefry2x32_is_bit_exact(program_cache, key, length, data):
    count = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=length,
                                        max_size=length), label="count"), np.uint32)
    k = np.array(key, np.uint32)
    call = f"execute(threefry2x32 key={key}, uint32[{length}])"
    outs, program = compiled_programs.run_everywhere(program_cache, "threefry2x32", _threefry,
                                                     [k, count], U32, call)
    expected = jax_threefry_2x32(key, count)
    with reproduction(call, program=program, inputs=[k, count]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")


def _uniform(key):
    import jax
    import jax.numpy as jnp

    return jax.random.uniform(key, (SAMPLES,), dtype=jnp.float32)


def _normal(key):
    import jax
    import jax.numpy as jnp

    return jax.random.normal(key, (SAMPLES,), dtype=jnp.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("law", ["uniform", "normal"])
def test_samplers_pass_kolmogorov_smirnov(program_cache, law, seed):
    key = np.array([0, seed], np.uint32)  # jax.random.PRNGKey(seed)'s raw key data
    fn = _uniform if law == "uniform" else _normal
    call = f"execute(jax.random.{law} key=PRNGKey({seed}), float32[{SAMPLES}])"
    outs, program = compiled_programs.run_everywhere(
        program_cache, f"random_{law}", fn, [key], U32, call)
    cdf = "uniform" if law == "uniform" else "norm"
    with reproduction(call, program=program, inputs=[key]):
        first = outs[0][1]
        for device, out in outs:
            assert out.dtype == np.float32 and out.shape == (SAMPLES,), (
                f"out is {out.dtype}{list(out.shape)} [{call} on {device}]")
            assertions.assert_bitwise_equal(out, first, call=f"{call} on {device} vs {outs[0][0]}")
            p = scipy.stats.kstest(out.astype(np.float64), cdf).pvalue
            assert p > 1e-4, (f"Kolmogorov-Smirnov p={p:.3g} <= 1e-4: the {SAMPLES} samples "
                              f"are not {law} [{call} on {device}]")
            if law == "uniform":
                assert out.min() >= 0.0 and out.max() < 1.0, (
                    f"uniform samples outside [0, 1): [{out.min()}, {out.max()}] "
                    f"[{call} on {device}]")
