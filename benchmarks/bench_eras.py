"""History across XLA plugin eras and jaxlib versions (issue 20 part 2).

The asv parameter ``backend`` (a key of :data:`benchmarks.backend.ERAS`) picks the PJRT
client: jaxlib's built-in one, or XLA's CPU compiler as a PJRT plugin of one of three
eras (C API 0.81, 0.106, 0.115). Each class times the runtime's operation on that
client and tracks its paired ratio (:mod:`benchmarks.pairing`) to references: the raw
jaxlib call on the same client (the runtime's own cost), numpy/scipy on the host array
and ``jax.jit`` on jax's own CPU client (the plugin's cost beside the machine's). Small
sizes only: ``benchmarks/history.sh`` runs this module in every environment of
``asv.matrix.conf.json`` (jaxlib 0.10.0, 0.10.1, 0.10.2). A plugin that is absent or
does not load with the environment's jaxlib is skipped (NotImplementedError, with why).
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend, bench_compile, bench_dispatch, pairing, transfer_paths
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)
from runtime import xla_client as xc

BACKENDS = list(backend.ERAS)
NBYTES = 16 << 20
_DURING_CALL = "IMMUTABLE_ONLY_DURING_CALL"


class Transfer:
    """Host<->device of 16 MiB float32 (numpy's own, unaligned allocation), copied
    during the call (``IMMUTABLE_ONLY_DURING_CALL``)."""

    params = (BACKENDS,)
    param_names = ["backend"]

    def setup(self, era):
        self.client, self.dev = backend.client(era), backend.device(0, era)
        self.x = transfer_paths.host_array(NBYTES, aligned=False)
        self.out = np.empty_like(self.x)
        self.sem = getattr(xc.HostBufferSemantics, _DURING_CALL)
        self.arr = backend.put(self.x, 0, era)
        self.arr.block_until_ready()
        from runtime._compat import shaped_array

        self.aval = shaped_array(self.x.shape, self.x.dtype)
        self.sharding = xc.SingleDeviceSharding(self.dev)

    def time_h2d(self, era):
        self.client.buffer_from_pyval(self.x, self.dev,
                                      host_buffer_semantics=self.sem).block_until_ready()

    def time_d2h(self, era):
        np.array(self.arr, copy=True)

    def ref_jaxlib_h2d(self, era):
        xc.batched_device_put(self.aval, self.sharding, [self.x], [self.dev], True, False,
                              self.sem).block_until_ready()

    def ref_numpy_alloc_copy(self, era):
        self.x.copy()

    def ref_memcpy(self, era):
        np.copyto(self.out, self.x)

    track_ratio_h2d_vs_memcpy = pairing.make_ratio(
        "time_h2d", "ref_memcpy", pairing.REF_MEMCPY)
    track_ratio_h2d_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_h2d", "ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)
    track_ratio_h2d_vs_jaxlib = pairing.make_ratio(
        "time_h2d", "ref_jaxlib_h2d",
        "Reference: raw jaxlib batched_device_put (what buffer_from_pyval wraps), same "
        "client, array and semantics.")
    track_ratio_d2h_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_d2h", "ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)


class Dispatch:
    """``execute`` of the sum of 1 or 100 f32 scalars (``bench_dispatch``)."""

    params = (BACKENDS, [1, 100])
    param_names = ["backend", "nargs"]

    def setup(self, era, nargs):
        bench_dispatch.prepare(self, nargs, era)

    def time_execute(self, era, nargs):
        self.exe.execute(self.args)

    def ref_jaxlib_execute_sharded(self, era, nargs):
        self.exe.execute_sharded(self.args).disassemble_into_single_device_arrays()

    def ref_jax_jit(self, era, nargs):
        self.jitted(*self.jax_args)

    track_ratio_execute_vs_jaxlib = pairing.make_ratio(
        "time_execute", "ref_jaxlib_execute_sharded",
        "Reference: raw jaxlib execute_sharded + disassemble_into_single_device_arrays "
        "of the same executable on the same client.")
    track_ratio_execute_vs_jax_jit = pairing.make_ratio(
        "time_execute", "ref_jax_jit",
        "Reference: jax.jit dispatch of the same function on jax's own CPU client.")


class Compile:
    """Compilation of one elementwise op on f32[128] (``bench_compile`` ``small``)."""

    params = (BACKENDS, ["small"])
    param_names = ["backend", "program"]
    timeout = 120

    def setup(self, era, program):
        bench_compile.prepare(self, program, era)

    def time_compile_and_load(self, era, program):
        self.client.compile_and_load(self.text, self.devices)

    def lower_and_compile(self, era, program):
        bench_compile.lower_and_compile(self, program)

    def ref_jax_jit_compile(self, era, program):
        bench_compile.jax_jit_compile(self, program)

    track_ratio_lower_and_compile_vs_jax_jit = bench_compile.RATIO_VS_JAX_JIT


def _kernel(name: str):
    """(jax function, avals, host reference on the numpy inputs) of a kernel name."""
    import jax.numpy as jnp
    import scipy.fft

    if name == "matmul_256":
        return jnp.matmul, [((256, 256), np.float32)] * 2, np.matmul
    return jnp.fft.fft, [((1 << 16,), np.complex64)], scipy.fft.fft


class Kernels:
    """matmul f32[256, 256] (reference numpy) and FFT c64[65536] (reference scipy.fft),
    inputs already on the device."""

    params = (BACKENDS, ["matmul_256", "fft_65536"])
    param_names = ["backend", "kernel"]

    def setup(self, era, kernel):
        fn, avals, self.host_fn = _kernel(kernel)
        rng = np.random.default_rng(0)
        self.host = [rng.standard_normal(s).astype(d) for s, d in avals]
        self.exe = backend.compiled(fn, *avals, era=era)
        self.args = [backend.put(h, 0, era) for h in self.host]

    def time_run(self, era, kernel):
        for out in self.exe.execute(self.args):
            out.block_until_ready()

    def ref_numpy_scipy(self, era, kernel):
        self.host_fn(*self.host)

    track_ratio_run_vs_numpy_scipy = pairing.make_ratio(
        "time_run", "ref_numpy_scipy",
        "Reference: numpy.matmul / scipy.fft.fft of the same host inputs.")
