"""Area ``registry``: the backend under test as ``runtime.xla_bridge`` presents it (jax's
backend registry, ``jax._src.xla_bridge``).

The registry's view (default backend, device lists, process indices, PJRT C API
version) must agree with the client, and for a plugin loaded from a library,
the C API version the client reports must be the one in the library's header.
"""

from __future__ import annotations

from runtime import xla_bridge


def test_registry_serves_the_client_under_test(client, platform):
    assert xla_bridge.get_backend(platform) is client, (
        f"get_backend({platform!r}) returned {xla_bridge.get_backend(platform)!r}, but should "
        f"be the client under test {client!r}")
    assert xla_bridge.default_backend() == client.platform, (
        f"default_backend()={xla_bridge.default_backend()!r}, but should be "
        f"{client.platform!r} [platform list {xla_bridge.platforms()}]")


def test_device_lists_agree(client, platform):
    devices = xla_bridge.devices(platform)
    assert [d.id for d in devices] == [d.id for d in client.devices()], (
        f"devices()={devices}, but should be client.devices()={client.devices()}")
    assert xla_bridge.device_count(platform) == len(devices) >= 1, (
        f"device_count()={xla_bridge.device_count(platform)}, but should be "
        f"len(devices())={len(devices)} >= 1")
    assert xla_bridge.local_device_count(platform) == len(client.local_devices()), (
        f"local_device_count()={xla_bridge.local_device_count(platform)}, but should be "
        f"{len(client.local_devices())} [client.local_devices()]")


def test_local_devices_partition_the_global_list(client, platform):
    count = xla_bridge.process_count(platform)
    index = xla_bridge.process_index(platform)
    assert 0 <= index < count, (
        f"process_index()={index}, but should be in [0, process_count()={count})")
    per_process = [xla_bridge.local_devices(p, backend=platform) for p in range(count)]
    ids = sorted(d.id for group in per_process for d in group)
    assert ids == sorted(d.id for d in xla_bridge.devices(platform)), (
        f"local_devices(p) over p in range({count}) cover ids {ids}, but should cover every "
        f"device exactly once {sorted(d.id for d in xla_bridge.devices(platform))}")
    mine = [d.id for d in xla_bridge.local_devices(backend=platform)]
    assert mine == [d.id for d in client.local_devices()], (
        f"local_devices()={mine}, but should be the client's addressable devices "
        f"{[d.id for d in client.local_devices()]}")


def test_every_device_maps_back_to_its_backend(client):
    for device in client.local_devices():
        owner = xla_bridge.get_device_backend(device)
        assert owner is client, (
            f"get_device_backend({device}) returned {owner!r}, but should be the client under "
            "test")


def test_pjrt_c_api_version_is_consistent(client, platform):
    version = xla_bridge.backend_pjrt_c_api_version(platform)
    uses = xla_bridge.using_pjrt_c_api(platform)
    assert uses == (version is not None), (
        f"using_pjrt_c_api()={uses}, but backend_pjrt_c_api_version()={version} "
        f"[platform_version {client.platform_version!r}]")
    if version is None:
        return
    major, minor = version
    assert major >= 0 and minor >= 0, f"PJRT C API version {version} has a negative part"
    reg = xla_bridge.plugin_registrations().get(platform)
    if reg is not None and reg.library is not None:
        assert tuple(reg.library.api_version) == version, (
            f"client reports PJRT C API {version}, but the library's GetPjrtApi() header "
            f"says {reg.library.api_version} [{reg.library.path}]")
