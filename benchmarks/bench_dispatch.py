"""Dispatch overhead of ``execute`` (``xla_client.LoadedExecutable``) for 1..1000 arguments.

The program adds its float32 scalar arguments, so its run time is negligible
beside the dispatch. Side by side: ``runtime``'s ``execute`` (the fast path of
``runtime._fast_execute``, C++ result handlers, docs/dispatch.md), jaxlib's own
Python ``execute`` of the same executable (``exe.native.execute``, the runtime's
default before), raw jaxlib ``execute_sharded`` +
``disassemble_into_single_device_arrays`` and ``jax.jit`` dispatch of the same
function on jax arrays.
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend, pairing
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)


def _sum(*xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def prepare(bench, nargs: int, era: str | None = None) -> None:
    """Set ``bench.exe`` (the sum of ``nargs`` f32 scalars, compiled on ``era``'s client),
    ``bench.args`` (its arguments there), ``bench.jitted`` and ``bench.jax_args`` (the
    same under ``jax.jit`` on jax's own CPU client, compiled already)."""
    import jax

    bench.exe = backend.compiled(_sum, *[((), np.float32)] * nargs, era=era)
    bench.args = [backend.put(np.float32(i), 0, era) for i in range(nargs)]
    bench.jitted = jax.jit(_sum)
    bench.jax_args = [jax.device_put(np.float32(i)) for i in range(nargs)]
    bench.jitted(*bench.jax_args).block_until_ready()  # compile outside the timing


class Dispatch:
    params = ([1, 10, 100, 1000],)
    param_names = ["nargs"]
    timeout = 300

    def setup(self, nargs):
        prepare(self, nargs)
        self.exe.execute(self.args)  # learn the result handlers outside the timing
        self.ready = self.args[0]
        self.ready.block_until_ready()

    def time_runtime_execute(self, nargs):
        self.exe.execute(self.args)

    def time_ref_jaxlib_execute(self, nargs):
        self.exe.native.execute(self.args)

    def time_ref_jaxlib_execute_sharded(self, nargs):
        self.exe.native.execute_sharded(self.args).disassemble_into_single_device_arrays()

    def time_ref_jax_jit(self, nargs):
        self.jitted(*self.jax_args)

    track_ratio_execute_vs_jaxlib = pairing.make_ratio(
        "time_runtime_execute", "time_ref_jaxlib_execute_sharded",
        "Reference: raw jaxlib execute_sharded + disassemble_into_single_device_arrays.")
    track_ratio_execute_vs_jax_jit = pairing.make_ratio(
        "time_runtime_execute", "time_ref_jax_jit",
        "Reference: jax.jit dispatch of the same function on jax arrays.")
    track_ratio_jaxlib_execute_vs_jax_jit = pairing.make_ratio(
        "time_ref_jaxlib_execute", "time_ref_jax_jit",
        "Reference: jax.jit dispatch of the same function on jax arrays; timed: jaxlib's "
        "own Python execute (the runtime's default before the fast path).")

    def time_block_until_ready_on_ready_array(self, nargs):
        self.ready.block_until_ready()
