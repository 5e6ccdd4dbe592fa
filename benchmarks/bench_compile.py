"""Compilation (``Client.compile_and_load``, ``deserialize_executable``), client
creation and import in a fresh process.

``small``: one elementwise op on f32[128]; ``medium``: a 4-layer MLP with
softmax on f32[64, 256]. "cached" loads the serialized executable, as a
persistent compilation cache would. Reference: ``jax.jit(...).lower().compile()``.
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend, pairing
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)


def _small(x):
    return x * 2.0 + 1.0


def _medium(x, w):
    import jax.numpy as jnp

    for _ in range(4):
        x = jnp.tanh(x @ w)
    return jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)


PROGRAMS = {"small": (_small, [((128,), np.float32)]),
            "medium": (_medium, [((64, 256), np.float32), ((256, 256), np.float32)])}


def prepare(bench, program: str, era: str | None = None) -> None:
    """Set ``bench.client``, ``bench.text`` (StableHLO of ``program``, a key of PROGRAMS),
    ``bench.devices`` and ``bench.blob`` (its serialized executable) for ``era``."""
    fn, avals = PROGRAMS[program]
    bench.client = backend.client(era)
    bench.text = backend.lowered(fn, *avals)
    bench.devices = [backend.device(0, era)]
    bench.blob = bench.client.serialize_executable(
        bench.client.compile_and_load(bench.text, bench.devices))


def lower_and_compile(bench, program: str) -> None:
    """What ``jax.jit`` compile does, through ``runtime``: lower anew, then compile."""
    fn, avals = PROGRAMS[program]
    bench.client.compile_and_load(backend.lowered(fn, *avals), bench.devices)


def jax_jit_compile(bench, program: str) -> None:
    """jax's own lower + compile of ``program``; ``jax.clear_caches()`` first so that
    jax compiles anew (on jax's own CPU client)."""
    import jax

    fn, avals = PROGRAMS[program]
    jax.clear_caches()
    jax.jit(fn).lower(*(jax.ShapeDtypeStruct(s, d) for s, d in avals)).compile()


RATIO_VS_JAX_JIT = pairing.make_ratio(
    "lower_and_compile", "ref_jax_jit_compile",
    "Reference: jax.jit(fn).lower(...).compile() after jax.clear_caches(), both lowering anew.")


class Compile:
    params = (list(PROGRAMS),)
    param_names = ["program"]

    def setup(self, program):
        prepare(self, program)

    def time_compile_and_load(self, program):
        self.client.compile_and_load(self.text, self.devices)

    def time_deserialize_cached(self, program):
        self.client.deserialize_executable(self.blob, self.devices)

    def time_lower_with_jax(self, program):
        fn, avals = PROGRAMS[program]
        backend.lowered(fn, *avals)

    def time_ref_jax_jit_compile(self, program):
        """jax's own lower + compile of the same function; ``jax.clear_caches()``
        first (included in the time) so that jax compiles anew."""
        jax_jit_compile(self, program)

    lower_and_compile = lower_and_compile
    ref_jax_jit_compile = time_ref_jax_jit_compile
    track_ratio_lower_and_compile_vs_jax_jit = RATIO_VS_JAX_JIT


class FreshProcess:
    """Wall time of a new Python process that imports and creates a client (about 1 s
    each here, so 6 samples per round: 12 in all)."""

    timeout = 120
    repeat = (6, 6, 30.0)

    def timeraw_import_runtime(self):
        return "from runtime import xla_client"

    def timeraw_make_cpu_client(self):
        return "from runtime import xla_client; xla_client.make_cpu_client()"

    def timeraw_ref_import_jax(self):
        return "import jax"
