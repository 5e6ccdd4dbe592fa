"""Sharded placement and copies (the array API): ``batched_device_put`` over N devices,
``reorder_shards``, ``batched_copy_array_to_devices_with_sharding`` for each
``ArrayCopySemantics``, and sharding creation and equality.

Reference: numpy allocate+copy of the same 16 MiB (what each shard copy costs
at best).
"""

from __future__ import annotations

import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from benchmarks import backend, pairing
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)
from runtime._compat import shaped_array
from runtime import xla_client as xc

NBYTES = 16 << 20


def _sharding(devices):
    return NamedSharding(Mesh(np.array(devices), ("x",)), PartitionSpec("x"))


class ShardedPut:
    params = ([1, 2, 4, 8],)
    param_names = ["ndevices"]

    def setup(self, ndevices):
        devices = backend.client().local_devices()
        if len(devices) < ndevices:
            raise NotImplementedError(f"{len(devices)} devices")
        self.devices = devices[:ndevices]
        self.x = np.arange(NBYTES // 4, dtype=np.float32)
        self.shards = np.split(self.x, ndevices)
        self.sharding = _sharding(self.devices)
        self.aval = shaped_array(self.x.shape, self.x.dtype)
        self.equal = _sharding(self.devices)

    def _put(self, semantics=xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL):
        return xc.batched_device_put(self.aval, self.sharding, self.shards, self.devices, True,
                                     False, semantics)

    def time_batched_device_put(self, ndevices):
        self._put().block_until_ready()

    def time_ref_numpy_alloc_copy(self, ndevices):
        self.x.copy()

    track_ratio_batched_device_put_vs_numpy_alloc_copy = pairing.make_ratio(
        "time_batched_device_put", "time_ref_numpy_alloc_copy", pairing.REF_NUMPY_ALLOC_COPY)

    def time_sharding_creation(self, ndevices):
        _sharding(self.devices)

    def time_sharding_equality(self, ndevices):
        """Hash and compare two equal shardings built separately."""
        hash(self.equal) == hash(self.sharding) and self.equal == self.sharding


class Copies:
    """Copies of a 16 MiB array sharded over 4 devices. Donation consumes its input,
    so every timing puts a fresh array first; ``ref_batched_device_put`` times that
    put alone, and the difference is the copy."""

    params = (["ALWAYS_COPY", "REUSE_INPUT", "DONATE_INPUT"],)
    param_names = ["semantics"]

    def setup(self, semantics):
        devices = backend.client().local_devices()
        if len(devices) < 4:
            raise NotImplementedError(f"{len(devices)} devices")
        self.src_devices = devices[:4]
        self.sharding = _sharding(self.src_devices)
        self.dst = xc.DeviceList(tuple(self.src_devices[::-1]))
        self.dst_sharding = _sharding(list(self.dst))
        self.semantics = getattr(xc.ArrayCopySemantics, semantics)
        x = np.arange(NBYTES // 4, dtype=np.float32)
        self.shards = np.split(x, 4)
        self.aval = shaped_array(x.shape, x.dtype)

    def _fresh(self):
        return xc.batched_device_put(self.aval, self.sharding, self.shards, self.src_devices,
                                     True, False,
                                     xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)

    def time_batched_copy_array_to_devices_with_sharding(self, semantics):
        xc.batched_copy_array_to_devices_with_sharding(
            [self._fresh()], [self.dst], [self.dst_sharding], [self.semantics]
        )[0].block_until_ready()

    def time_reorder_shards(self, semantics):
        xc.reorder_shards(self._fresh(), self.sharding, self.semantics).block_until_ready()

    def time_ref_batched_device_put(self, semantics):
        self._fresh().block_until_ready()
