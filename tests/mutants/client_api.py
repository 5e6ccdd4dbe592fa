"""Mutation operator ``jaxlib_api`` (beyond the first broken backends): a client that
misreports its devices, version or live executables."""

from __future__ import annotations

from runtime._client import Client
from tests.mutants.catalog import add


class CountsOneDeviceTooMany(Client):
    """device_count and local_device_count report one device more than there is."""

    def device_count(self):
        return super().device_count() + 1

    def local_device_count(self):
        return super().local_device_count() + 1


class ReversedLocalDevices(Client):
    """local_devices lists the devices in reverse id order."""

    def local_devices(self):
        return super().local_devices()[::-1]


class ListsDeviceZeroTwice(Client):
    """devices() lists device 0 a second time in place of the last device."""

    def devices(self):
        devices = super().devices()
        return devices[:-1] + devices[:1] if len(devices) > 1 else devices


class HidesLiveExecutables(Client):
    """live_executables always says nothing is loaded."""

    def live_executables(self):
        return []


add("api-device-count-plus-one", "jaxlib_api", CountsOneDeviceTooMany,
    "test_client: test_device_counts")
add("api-local-devices-reversed", "jaxlib_api", ReversedLocalDevices,
    "test_registry: test_device_lists_agree or test_local_devices_partition")
add("api-device-zero-twice", "jaxlib_api", ListsDeviceZeroTwice,
    "test_client: test_device_ids_unique or test_local_devices_within_devices")
add("dist-broken-runtime", "jaxlib_api", Client,
    "test_multi_process: test_key_value_store_across_processes or test_barriers",
    doc="The distributed runtime of tests/broken_distributed.py: gets lose a character and "
        "hide errors, barriers do not wait, Gloo is dropped.",
    env={"PJRT_CONFORMANCE_WORKER_PRELOAD": "tests.broken_distributed"})
add("api-live-executables-hidden", "jaxlib_api", HidesLiveExecutables,
    "test_client: test_live_executables")
