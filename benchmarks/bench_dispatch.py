"""Dispatch overhead of ``execute`` (seed 000 ``LoadedExecutable``) for 1..1000 arguments.

The program adds its float32 scalar arguments, so its run time is negligible
beside the dispatch. Side by side: ``runtime``'s ``execute``, raw jaxlib
``execute_sharded`` + ``disassemble_into_single_device_arrays`` and ``jax.jit``
dispatch of the same function on jax arrays, and ``runtime._fast_execute``
(C++ result handlers, docs/dispatch.md).
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend


def _sum(*xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


class Dispatch:
    params = ([1, 10, 100, 1000],)
    param_names = ["nargs"]
    timeout = 300

    def setup(self, nargs):
        import jax

        self.exe = backend.compiled(_sum, *[((), np.float32)] * nargs)
        self.args = [backend.put(np.float32(i)) for i in range(nargs)]
        self.jitted = jax.jit(_sum)
        self.jax_args = [jax.device_put(np.float32(i)) for i in range(nargs)]
        self.jitted(*self.jax_args).block_until_ready()  # compile outside the timing
        from runtime._fast_execute import FastExecute

        self.fast = FastExecute(self.exe)
        self.fast(self.args)  # learn the result handlers outside the timing
        self.ready = self.args[0]
        self.ready.block_until_ready()

    def time_runtime_execute(self, nargs):
        self.exe.execute(self.args)

    def time_runtime_fast_execute(self, nargs):
        self.fast(self.args)

    def time_ref_jaxlib_execute_sharded(self, nargs):
        self.exe.execute_sharded(self.args).disassemble_into_single_device_arrays()

    def time_ref_jax_jit(self, nargs):
        self.jitted(*self.jax_args)

    def time_block_until_ready_on_ready_array(self, nargs):
        self.ready.block_until_ready()
