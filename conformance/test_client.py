"""Area client: client and device properties are consistent (the xla_client API's ``Client``
and ``Device``)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from conformance.helpers.capabilities import not_supported, optional_feature
from conformance.programs import compiled_programs
from conformance.programs import catalog
from runtime.xla_client import HostBufferSemantics


def test_platform_strings_are_consistent(client, device):
    assert isinstance(client.platform, str) and client.platform, (
        f"client.platform={client.platform!r}, but should be a non-empty str")
    assert device.platform == client.platform, (
        f"device.platform={device.platform!r}, but should be {client.platform!r} "
        f"[{device}.platform]")
    assert isinstance(client.platform_version, str), (
        f"client.platform_version={client.platform_version!r}, but should be a str")
    assert isinstance(device.device_kind, str) and device.device_kind, (
        f"device.device_kind={device.device_kind!r}, but should be a non-empty str [{device}]")


def test_device_belongs_to_client(client, device):
    assert device.client == client, (
        f"device.client={device.client!r}, but should be the client under test [{device}.client]")
    assert device.process_index == client.process_index(), (
        f"device.process_index={device.process_index}, but should be "
        f"{client.process_index()} for a local device [{device}]")
    assert device.host_id == client.host_id(), (
        f"device.host_id={device.host_id}, but should be {client.host_id()} [{device}]")


def test_device_ids_unique(client):
    ids = [d.id for d in client.devices()]
    assert len(ids) == len(set(ids)), f"client.devices() ids={ids}, but should be unique"


def test_local_devices_within_devices(client):
    all_ids = {d.id for d in client.devices()}
    local = client.local_devices()
    assert local, "client.local_devices()=[], but a client must have at least one device"
    missing = [d for d in local if d.id not in all_ids]
    assert not missing, f"local devices {missing} are not in client.devices()"


def test_device_counts(client):
    assert client.device_count() == len(client.devices()), (
        f"client.device_count()={client.device_count()}, but should be "
        f"len(client.devices())={len(client.devices())}")
    assert client.local_device_count() == len(client.local_devices()), (
        f"client.local_device_count()={client.local_device_count()}, but should be "
        f"{len(client.local_devices())}")
    assert client.local_device_count() <= client.device_count()


@pytest.mark.informational
def test_cpu_device_count_option(client, backend_spec):
    if client.platform != "cpu" or backend_spec.plugin_library is not None:
        pytest.skip("--cpu-devices applies to the built-in cpu client only")
    want = backend_spec.cpu_devices
    assert client.local_device_count() == want, (
        f"client.local_device_count()={client.local_device_count()}, but should be {want} "
        f"[make_cpu_client(num_devices={want})]")


def test_default_memory_is_addressable(device):
    mem = device.default_memory()
    kinds = [m.kind for m in device.addressable_memories()]
    assert mem.kind in kinds, (
        f"default_memory().kind={mem.kind!r}, but should be one of addressable_memories() "
        f"{kinds} [{device}]")


def _live_ids(items) -> set[int]:
    return {id(x) for x in items}


def test_live_arrays_and_buffers_grow_and_shrink(client, device):
    gc.collect()
    buffers_before = len(client.live_buffers())
    arrays = [client.buffer_from_pyval(
        np.full(4, i, np.float32), device,
        host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL) for i in range(3)]
    live = _live_ids(client.live_arrays())
    assert all(id(a) in live for a in arrays), (
        "client.live_arrays() does not list arrays that were just created")
    assert len(client.live_buffers()) == buffers_before + 3, (
        f"client.live_buffers() has {len(client.live_buffers())} entries after creating 3 "
        f"single-device arrays, but should have {buffers_before} + 3")
    arrays[0].delete()
    assert id(arrays[0]) not in _live_ids(client.live_arrays()), (
        "client.live_arrays() still lists a deleted array")
    assert len(client.live_buffers()) == buffers_before + 2, (
        f"client.live_buffers() has {len(client.live_buffers())} entries after deleting one of "
        f"3 arrays, but should have {buffers_before} + 2")
    profile = client.heap_profile()
    assert isinstance(profile, bytes) and profile, "client.heap_profile() must return bytes"


def test_live_executables_grow_and_shrink(client, device):
    text = compiled_programs.lowered_text("negate", catalog.ELEMENTWISE["negate"].fn,
                                          (((3,), "float32"),), client)
    gc.collect()
    before = len(client.live_executables())
    exe = client.compile_and_load(text, [device])
    assert id(exe) in _live_ids(client.live_executables()), (
        "client.live_executables() does not list an executable that was just loaded")
    assert len(client.live_executables()) == before + 1
    del exe
    gc.collect()
    assert len(client.live_executables()) == before, (
        f"client.live_executables() has {len(client.live_executables())} entries after the "
        f"executable was freed, but should have {before}")


@pytest.mark.capability("memory_stats")
def test_memory_stats_keys_and_units(client, device):
    """``memory_stats()`` is None or {name: bytes or count}; when it reports
    ``bytes_in_use``, a new 32 MiB array raises it by at least 32 MiB. None or
    UNIMPLEMENTED: ``not_supported`` (an optional PJRT feature)."""
    with optional_feature("memory_stats", f"memory_stats() on {device}"):
        stats = device.memory_stats()
    if stats is None:
        not_supported(f"optional feature memory_stats: memory_stats() is None on {device} "
                      "(allowed by the xla_client API)")
    assert isinstance(stats, dict) and all(isinstance(k, str) for k in stats), (
        f"memory_stats()={stats!r}, but should be a dict with str keys")
    bad = {k: v for k, v in stats.items() if not isinstance(v, int) or v < 0}
    assert not bad, f"memory_stats() values {bad} are not ints >= 0 (bytes or counts)"
    if "bytes_limit" in stats and "bytes_in_use" in stats:
        assert stats["bytes_in_use"] <= stats["bytes_limit"]
    if "bytes_in_use" not in stats:
        return
    size = 32 << 20
    arr = client.buffer_from_pyval(np.ones(size // 4, np.float32), device)
    arr.block_until_ready()
    grown = device.memory_stats()["bytes_in_use"] - stats["bytes_in_use"]
    assert grown >= size, (
        f"bytes_in_use grew by {grown} bytes after a {size}-byte array, but should grow by at "
        f"least {size} (bytes, not KiB or MiB) [{device}]")
    arr.delete()
