"""Area client: client and device properties are consistent (seed 003 Client, seed 000 Device)."""

from __future__ import annotations

import pytest

from conformance import backend


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


def test_describe_matches_client(client, backend_spec):
    info = backend.describe(client, backend_spec)
    assert info["device_count"] == client.device_count()
    assert info["name"] == client.platform
