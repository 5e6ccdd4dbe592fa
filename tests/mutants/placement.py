"""Mutation operator ``placement``: where programs run and which memory holds the data.

Programs that run on device 0 whatever device they were loaded on (with the output
labelled right, or not), sharded outputs returned from the neighbouring device, the
default device moved, and memory kinds put, copied or reported wrong.
"""

from __future__ import annotations

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client
from tests.mutants.base import put
from tests.mutants.catalog import add


class _OnDeviceZero:
    """An executable loaded on device 0 that takes and (if ``relabel``) returns arrays as
    if it ran on ``device``."""

    def __init__(self, exe, client, device, relabel):
        self._exe, self._client, self._device, self._relabel = exe, client, device, relabel

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        zero = self._client.local_devices()[0]
        outs = self._exe.execute([put(self._client, np.asarray(a), zero) for a in arguments])
        if not self._relabel:
            return outs
        return [put(self._client, np.asarray(o), self._device) for o in outs]


def _runs_on_device_zero(relabel, doc):
    class RunsOnDeviceZero(Client):
        def compile_and_load(self, computation, executable_devices, compile_options=None,
                             *args, **kwargs):
            devices = list(executable_devices)
            zero = self.local_devices()[0]
            if len(devices) != 1 or devices[0] == zero:
                return super().compile_and_load(computation, executable_devices,
                                                compile_options, *args, **kwargs)
            exe = super().compile_and_load(computation, [zero], compile_options, *args, **kwargs)
            return _OnDeviceZero(exe, self, devices[0], relabel)
    RunsOnDeviceZero.__doc__ = doc
    return RunsOnDeviceZero


class _RotatedResults:
    def __init__(self, results, client):
        self._results, self._client = results, client

    def disassemble_into_single_device_arrays(self):
        per_output = self._results.disassemble_into_single_device_arrays()
        return [[put(self._client, np.asarray(arrays[(d + 1) % len(arrays)]),
                     next(iter(arrays[d].devices()))) for d in range(len(arrays))]
                for arrays in per_output]

    def consume_token(self):
        return self._results.consume_token()


class _RotatesShards:
    def __init__(self, exe, client):
        self._exe, self._client = exe, client

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute_sharded(self, arguments, with_tokens=False):
        return _RotatedResults(self._exe.execute_sharded(arguments, with_tokens=with_tokens),
                               self._client)


class RotatesShardedOutputs(Client):
    """execute_sharded returns each device's outputs from the next device."""

    def compile_and_load(self, *args, **kwargs):
        return _RotatesShards(super().compile_and_load(*args, **kwargs), self)


class _MisreportsKinds:
    def __init__(self, exe):
        self._exe = exe

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def get_output_memory_kinds(self):
        return [["pinned_host" for _ in kinds] for kinds in self._exe.get_output_memory_kinds()]


class MisreportsOutputMemoryKinds(Client):
    """Executables report pinned_host as their outputs' memory kind."""

    def compile_and_load(self, *args, **kwargs):
        return _MisreportsKinds(super().compile_and_load(*args, **kwargs))


def _put_in_kind(choose):
    def put_sharded(aval, sharding, xs, devices, *args, **kwargs):
        kind = choose(sharding.memory_kind)
        if kind != sharding.memory_kind:
            sharding = sharding.with_memory_kind(kind)
        return xc.batched_device_put(aval, sharding, xs, devices, *args, **kwargs)
    return put_sharded


def _register():
    mk = "test_memory_kinds"
    add("place-runs-on-device-0", "placement",
        _runs_on_device_zero(True, "Single-device programs run on device 0; their outputs are "
                                   "then copied to the device they were loaded on."),
        "test_execute: test_single_device_executable; test_kernels_ffi")
    add("place-output-on-device-0", "placement",
        _runs_on_device_zero(False, "Single-device programs run on device 0 and return "
                                    "their outputs there."),
        "test_execute: test_single_device_executable or test_multiple_outputs")
    add("place-sharded-outputs-rotated", "placement", RotatesShardedOutputs,
        "test_collectives: test_sharded_elementwise; test_programs_spmd: test_spmd_composition "
        "and transpose_across_shards")
    add("mem-put-ignores-kind", "placement", Client,
        f"{mk}: test_put_into_memory_kind",
        doc="batched_device_put puts into device memory whatever kind is asked for.",
        api={"batched_device_put": _put_in_kind(lambda kind: "device")})
    add("mem-pinned-as-unpinned", "placement", Client,
        f"{mk}: test_put_into_memory_kind and pinned_host",
        doc="batched_device_put puts pinned_host arrays into unpinned_host memory.",
        api={"batched_device_put": _put_in_kind(
            lambda kind: "unpinned_host" if kind == "pinned_host" else kind)})
    add("mem-output-kinds-misreported", "placement", MisreportsOutputMemoryKinds,
        "test_executables: test_output_memory_kinds; test_collectives: "
        "test_output_shardings_and_memory_kinds")


_register()
