"""Obtain the client under test from ``runtime.xla_bridge``, the one way in."""

from __future__ import annotations

import functools
from typing import Any

from runtime import xla_bridge, xla_client


def configure_registry(cpu_devices: int) -> None:
    """Make the registry's ``cpu`` factory create ``cpu_devices`` CPU devices.

    Raises ValueError for ``cpu_devices < 1``.
    """
    if isinstance(cpu_devices, bool) or not isinstance(cpu_devices, int) or cpu_devices < 1:
        raise ValueError(f"argument 'cpu_devices' must be an int >= 1, got {cpu_devices!r}")
    xla_bridge.clear_backends()
    xla_bridge.register_backend_factory(
        "cpu", functools.partial(xla_client.make_cpu_client, num_devices=cpu_devices),
        priority=0, fail_quietly=False)


def check_platform(platform: str) -> None:
    """Raise RuntimeError naming the available platforms if ``platform`` is unknown."""
    if platform not in xla_bridge.registered_platforms():
        raise xla_bridge.unknown_platform_error(platform)


def open_backend(platform: str) -> Any:
    """The client for ``platform``; RuntimeError with the cause if it cannot start."""
    check_platform(platform)
    return xla_bridge.get_backend(platform)


def describe(client: Any) -> dict[str, Any]:
    """Platform facts recorded in the report header."""
    devices = client.local_devices()
    kinds = sorted({d.device_kind for d in devices})
    return {
        "name": client.platform,
        "platform_version": client.platform_version,
        "runtime_type": client.runtime_type,
        "device_kinds": kinds,
        "device_count": client.device_count(),
        "local_device_count": client.local_device_count(),
        "process_index": client.process_index(),
    }
