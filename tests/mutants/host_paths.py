"""Mutation operators on the host-memory, placement and sharding paths the older checks missed.

Copying puts that alias the caller's array, device-to-host results that are writable
views of device memory, single-device programs that run on the next device under the
right label, host memory-kind labels over device memory, and shards misplaced only
when several mesh axes cut one dimension. Each is killed by the transfer, placement,
memory-kind and sharding tests of issue 16 (``tests/test_broken_transfers.py``).
"""

from __future__ import annotations

import ctypes

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client
from tests.mutants.catalog import add


# -- host -> device: copying semantics that alias the caller's array ----------------------

def _aliasing_put(aval, sharding, xs, devices, committed=True, force_copy=False,
                  host_buffer_semantics=None, **kwargs):
    return xc.batched_device_put(aval, sharding, xs, devices, committed, False,
                                   xc.HostBufferSemantics.ZERO_COPY, **kwargs)


class AliasesCopyingPuts(Client):
    """Every put is ZERO_COPY without force_copy, whatever the caller asked for: an
    aligned host array is aliased, so writing to it later changes the device array."""

    def buffer_from_pyval(self, argument, device=None, force_copy=False,
                          host_buffer_semantics=None):
        return super().buffer_from_pyval(argument, device, False,
                                         xc.HostBufferSemantics.ZERO_COPY)


# -- device -> host: a writable view of device memory ------------------------------------

class _WritableHostView:
    """A device array whose ``__array__`` is a writable alias of its device buffer."""

    def __init__(self, arr):
        self._arr = arr

    def __getattr__(self, name):
        return getattr(self._arr, name)

    def __array__(self, dtype=None, copy=None):
        self._arr.block_until_ready()
        host = np.asarray(self._arr)
        if host.size == 0:
            return host.copy()
        raw = (ctypes.c_uint8 * host.nbytes).from_address(self._arr.unsafe_buffer_pointer())
        return np.frombuffer(raw, dtype=host.dtype).reshape(host.shape)


class WritableDeviceToHost(Client):
    """np.asarray / np.array of an array return a writable view of its device memory."""

    def buffer_from_pyval(self, *args, **kwargs):
        return _WritableHostView(super().buffer_from_pyval(*args, **kwargs))


# -- placement: single-device programs run on another device ------------------------------

class _RunsElsewhere:
    """A single-device executable loaded on ``home`` that runs on ``actual`` (inputs
    copied there, outputs copied back and labelled ``home``)."""

    def __init__(self, exe, client, home, actual):
        self._exe, self._client, self._home, self._actual = exe, client, home, actual

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        moved = [Client.buffer_from_pyval(self._client, np.asarray(a), self._actual)
                 for a in arguments]
        return [Client.buffer_from_pyval(self._client, np.asarray(o), self._home)
                for o in self._exe.execute(moved)]


class RunsOnTheNextDevice(Client):
    """A program loaded on device k runs on device k+1; its outputs are labelled k."""

    def compile_and_load(self, computation, executable_devices, compile_options=None,
                         host_callbacks=()):
        devices = list(executable_devices)
        if len(devices) != 1:
            return super().compile_and_load(computation, executable_devices, compile_options,
                                            host_callbacks)
        everyone = self.local_devices()
        actual = everyone[(everyone.index(devices[0]) + 1) % len(everyone)]
        exe = super().compile_and_load(computation, [actual], compile_options, host_callbacks)
        return _RunsElsewhere(exe, self, devices[0], actual)


# -- memory kinds: shards in device memory under a host-memory label ---------------------

class _Relabelled:
    """A device array that reports ``sharding`` while its buffers live elsewhere."""

    def __init__(self, arr, sharding):
        self._arr, self.sharding = arr, sharding

    def __getattr__(self, name):
        return getattr(self._arr, name)

    def __array__(self, dtype=None, copy=None):
        return np.array(self._arr, dtype=dtype)


def _device_memory_put(aval, sharding, xs, devices, *args, **kwargs):
    kind = getattr(sharding, "memory_kind", None)
    if kind in (None, "device"):
        return xc.batched_device_put(aval, sharding, xs, devices, *args, **kwargs)
    arr = xc.batched_device_put(aval, sharding.with_memory_kind("device"), xs, devices,
                                  *args, **kwargs)
    return _Relabelled(arr, sharding)


class MislabelsMemoryKind(Client):
    """batched_device_put into a host memory kind keeps the shards in device memory and
    labels the array with the requested kind."""

    pass


# -- sharding: wrong only when several mesh axes cut one dimension -----------------------

def _misplaces_multi_axis(aval, sharding, xs, devices, *args, **kwargs):
    spec = getattr(sharding, "spec", ())
    if any(isinstance(e, tuple) and len(e) > 1 for e in spec):
        xs = list(xs)[::-1]
    return xc.batched_device_put(aval, sharding, xs, devices, *args, **kwargs)


class MisplacesMultiAxisShards(Client):
    """batched_device_put puts shards on the wrong devices, only for specs that put two
    mesh axes on one array dimension (P(('x', 'y')))."""

    pass


def _register():
    hbs = "test_host_buffer_semantics"
    add("host-alias-copying-puts", "transfer", AliasesCopyingPuts,
        f"{hbs}: test_put_then_overwrite; test_sharding: test_force_copy_detaches or "
        "test_batched_device_put_then_overwrite",
        api={"batched_device_put": _aliasing_put})
    add("d2h-writable-view", "transfer", WritableDeviceToHost,
        f"{hbs}: test_device_to_host_result_is_detached")
    add("place-runs-on-next-device", "placement", RunsOnTheNextDevice,
        "test_kernels_ffi: test_single_device_program_runs_on_its_device")
    add("mem-shards-in-device-memory", "placement", MislabelsMemoryKind,
        "test_memory_kinds: test_each_shard_lives_in_the_named_memory",
        api={"batched_device_put": _device_memory_put})
    add("shard-multi-axis-misplaced", "transfer", MisplacesMultiAxisShards,
        "test_sharding: test_every_mesh_and_partition_spec",
        api={"batched_device_put": _misplaces_multi_axis})


_register()
