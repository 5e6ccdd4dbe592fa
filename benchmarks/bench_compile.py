"""Compilation (seed 003 ``compile_and_load``, ``deserialize_executable``), client
creation and import in a fresh process.

``small``: one elementwise op on f32[128]; ``medium``: a 4-layer MLP with
softmax on f32[64, 256]. "cached" loads the serialized executable, as a
persistent compilation cache would. Reference: ``jax.jit(...).lower().compile()``.
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend


def _small(x):
    return x * 2.0 + 1.0


def _medium(x, w):
    import jax.numpy as jnp

    for _ in range(4):
        x = jnp.tanh(x @ w)
    return jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)


PROGRAMS = {"small": (_small, [((128,), np.float32)]),
            "medium": (_medium, [((64, 256), np.float32), ((256, 256), np.float32)])}


class Compile:
    params = (list(PROGRAMS),)
    param_names = ["program"]

    def setup(self, program):
        fn, avals = PROGRAMS[program]
        self.client = backend.client()
        self.text = backend.lowered(fn, *avals)
        self.devices = [backend.device()]
        self.blob = self.client.serialize_executable(
            self.client.compile_and_load(self.text, self.devices))

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
        import jax

        fn, avals = PROGRAMS[program]
        jax.clear_caches()
        jax.jit(fn).lower(*(jax.ShapeDtypeStruct(s, d) for s, d in avals)).compile()


class FreshProcess:
    """Wall time of a new Python process that imports and creates a client."""

    timeout = 120

    def timeraw_import_runtime(self):
        return "from runtime import xla_client"

    def timeraw_make_cpu_client(self):
        return "from runtime import xla_client; xla_client.make_cpu_client()"

    def timeraw_ref_import_jax(self):
        return "import jax"
