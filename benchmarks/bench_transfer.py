"""Host<->device transfers (``Client.buffer_from_pyval``; ``np.asarray`` of an array).

References in the same class: numpy copy into a preallocated array (the memory
bandwidth), numpy allocate+copy (the ceiling for anything that allocates), and
``jax.device_put`` / ``np.asarray(jax_array)``, the user's alternative.
Bandwidth is ``nbytes / time``.
"""

from __future__ import annotations

import numpy as np

from benchmarks import backend, intervals, pairing, transfer_paths
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)
from runtime.xla_client import HostBufferSemantics

# Up to 64 MiB: 256 MiB is TransferRatio's (against memcpy); 1 GiB took a third of a
# nightly round on 2 cores and said nothing the 64 MiB point does not.
SIZES = [4 << 10, 1 << 20, 64 << 20]
SEMANTICS = ["IMMUTABLE_ONLY_DURING_CALL", "IMMUTABLE_UNTIL_TRANSFER_COMPLETES", "ZERO_COPY"]


def _host(nbytes: int, dtype: str = "float32", aligned: bool = True) -> np.ndarray:
    """A host array of ``nbytes``; unaligned: its data starts 1 byte past a 64-byte line."""
    dt = np.dtype(dtype)
    raw = np.full(nbytes + 128, 7, np.uint8)  # touched, so no page faults are timed
    start = (-raw.ctypes.data) % 64 + (0 if aligned else 1)
    if not aligned and dt.itemsize > 1:
        start += dt.itemsize - 1  # keep it a multiple of the item size off the line
    return raw[start:start + nbytes].view(dt)


class HostToDevice:
    """Host->device of ``nbytes`` float32 with each ``HostBufferSemantics``."""

    params = (SIZES, SEMANTICS)
    param_names = ["nbytes", "semantics"]

    def setup(self, nbytes, semantics):
        backend.require_memory(nbytes)
        self.x = _host(nbytes)
        self.out = np.empty_like(self.x)
        self.dev = backend.device()
        self.sem = getattr(HostBufferSemantics, semantics)
        self.client = backend.client()

    def time_buffer_from_pyval(self, nbytes, semantics):
        self.client.buffer_from_pyval(self.x, self.dev,
                                      host_buffer_semantics=self.sem).block_until_ready()

    def time_buffer_from_pyval_force_copy(self, nbytes, semantics):
        self.client.buffer_from_pyval(self.x, self.dev, force_copy=True,
                                      host_buffer_semantics=self.sem).block_until_ready()

    def time_ref_numpy_copy_into(self, nbytes, semantics):
        np.copyto(self.out, self.x)

    def time_ref_numpy_alloc_copy(self, nbytes, semantics):
        self.x.copy()

    def time_ref_jax_device_put(self, nbytes, semantics):
        import jax

        jax.device_put(self.x).block_until_ready()

    def peakmem_buffer_from_pyval(self, nbytes, semantics):
        """Peak RSS of a transfer: input + output + 5% is the target."""
        self.client.buffer_from_pyval(self.x, self.dev, force_copy=True,
                                      host_buffer_semantics=self.sem).block_until_ready()

    track_ratio_buffer_from_pyval_vs_memcpy = pairing.make_ratio(
        "time_buffer_from_pyval", "time_ref_numpy_copy_into", pairing.REF_MEMCPY)
    track_ratio_buffer_from_pyval_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_buffer_from_pyval", "time_ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)


class HostToDeviceLayouts:
    """Host->device of 16 MiB by dtype and alignment (copying semantics)."""

    params = (["uint8", "float32", "bfloat16", "complex64"], ["aligned", "unaligned"])
    param_names = ["dtype", "alignment"]

    def setup(self, dtype, alignment):
        import ml_dtypes  # noqa: F401 (registers bfloat16 with numpy)

        self.x = _host(16 << 20, dtype if dtype != "bfloat16" else ml_dtypes.bfloat16,
                       alignment == "aligned")
        self.dev = backend.device()
        self.client = backend.client()

    def time_buffer_from_pyval(self, dtype, alignment):
        self.client.buffer_from_pyval(
            self.x, self.dev, force_copy=True,
            host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
        ).block_until_ready()

    def time_ref_numpy_alloc_copy(self, dtype, alignment):
        self.x.copy()

    track_ratio_buffer_from_pyval_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_buffer_from_pyval", "time_ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)


class DeviceToHost:
    """Device->host of ``nbytes`` float32: ``np.asarray`` (may be a view on CPU) and
    ``np.array`` (always a copy) of a runtime array."""

    params = (SIZES,)
    param_names = ["nbytes"]

    def setup(self, nbytes):
        backend.require_memory(nbytes)
        self.x = _host(nbytes)
        self.out = np.empty_like(self.x)
        self.arr = backend.put(self.x)
        self.arr.block_until_ready()

    def time_np_asarray(self, nbytes):
        np.asarray(self.arr)

    def time_np_array_copy(self, nbytes):
        np.array(self.arr, copy=True)

    def time_ref_numpy_copy_into(self, nbytes):
        np.copyto(self.out, self.x)

    def time_ref_numpy_alloc_copy(self, nbytes):
        self.x.copy()

    def peakmem_np_array_copy(self, nbytes):
        np.array(self.arr, copy=True)

    track_ratio_np_array_copy_vs_memcpy = pairing.make_ratio(
        "time_np_array_copy", "time_ref_numpy_copy_into", pairing.REF_MEMCPY)
    track_ratio_np_array_copy_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_np_array_copy", "time_ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)


class TransferRatio:
    """Each transfer path of :data:`benchmarks.transfer_paths.PATHS` at 64 and 256 MiB
    as a speed fraction of memcpy: (seconds of ``np.copyto`` of the same bytes into a
    preallocated array) / (seconds of the path), paired and interleaved in one process
    (:mod:`benchmarks.pairing`). 1.0 is memcpy speed; the goal is >= 0.9 for every
    host-to-device path. Where a path stays below, docs/transfers.md says why (a path
    that allocates its destination pays the page faults of first touch, which a
    preallocated memcpy never does)."""

    params = ([m << 20 for m in transfer_paths.SIZES_MIB], transfer_paths.PATHS)
    param_names = ["nbytes", "path"]
    timeout = 600

    def setup(self, nbytes, path):
        backend.require_memory(nbytes, copies=6)
        self.memcpy = transfer_paths.memcpy(nbytes)
        self.fn = transfer_paths.path_function(path, nbytes)

    def time_path(self, nbytes, path):
        self.fn()

    def ref_memcpy(self, nbytes, path):
        self.memcpy()

    track_ratio_speed_vs_memcpy = pairing.make_ratio(
        "time_path", "ref_memcpy", pairing.REF_MEMCPY, speed=True)

    def track_ref_memcpy_gbps(self, nbytes, path):
        """The reference's own bandwidth (GB/s, 1e9 bytes per second; median of 9
        copies, interval recorded), to tell a slow machine from slow code."""
        rates = [nbytes / pairing.seconds(self.memcpy) / 1e9 for _ in range(9)]
        return intervals.record(intervals.benchmark_name(self, TransferRatio.track_ref_memcpy_gbps),
                                (nbytes, path), rates)

    track_ref_memcpy_gbps.unit = "GB/s"
