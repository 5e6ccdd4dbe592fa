"""Self-test of the suite's own report header facts (``conformance.session.backend.describe``),
moved out of the client area: it tests the suite, not the backend."""

import pytest

from conformance.session import backend
from runtime import xla_client


@pytest.mark.parametrize("devices", [1, 3])
def test_describe_matches_the_client(registry, devices):
    client = xla_client.make_cpu_client(num_devices=devices)
    spec = backend.BackendSpec(platform="cpu", cpu_devices=devices)
    info = backend.describe(client, spec)
    assert info["name"] == client.platform
    assert info["platform_version"] == client.platform_version
    assert info["runtime_type"] == client.runtime_type
    assert info["device_count"] == client.device_count() == devices
    assert info["local_device_count"] == client.local_device_count()
    assert info["process_index"] == client.process_index()
    assert info["device_kinds"] == sorted({d.device_kind for d in client.local_devices()})


def test_describe_says_how_a_built_in_client_was_loaded(registry):
    client = xla_client.make_cpu_client(num_devices=1)
    info = backend.describe(client, backend.BackendSpec(platform="cpu", cpu_devices=1))
    loaded = info.get("loaded") or {}
    assert loaded.get("how") == "built-in factory", info
    assert info["using_pjrt_c_api"] is False and info["pjrt_c_api_version"] is None, info
