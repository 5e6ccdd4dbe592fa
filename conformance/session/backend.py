"""Obtain the client under test from ``runtime.xla_bridge``, the one way in.

:class:`BackendSpec` is everything needed to build that client again (in a
pytest-xdist worker or an isolation child process): the platform, the CPU
device count and, for a plugin given as a shared library, its path and
create options. :meth:`BackendSpec.open` refuses a client that is not the
requested platform, so a run that silently fell back to CPU cannot pass.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import warnings
from typing import Any

from conformance import file_limits
from conformance.option_error import shown
from conformance.certification import jsontext
from conformance.programs.lowering import confine_jax_to_cpu
from conformance.session import pjrt_plugin_info
from runtime import xla_bridge, xla_client
from runtime.xla_bridge import client_platform


class PlatformMismatchError(RuntimeError):
    """The client obtained is not the platform (or plugin) that was requested."""


def load_plugin_options(value: str | None) -> dict[str, Any] | None:
    """``--plugin-options``: a JSON object given inline or as a file path.

    Raises ValueError naming the option when neither parses to a JSON object.
    """
    if value is None or value == "":
        return None
    text = value
    if not value.lstrip().startswith(("{", "[")):   # else inline JSON (a list is refused)
        try:   # a regular file within its cap: never a FIFO or /dev/zero
            text = file_limits.read_text(value, what="--plugin-options",
                                         limit=file_limits.PLUGIN_OPTIONS_LIMIT)
        except OSError as err:
            raise ValueError(f"--plugin-options: {shown(value)!r} is neither a JSON object "
                             f"nor a readable file ({err.strerror or err})") from err
    try:
        options = jsontext.loads(text)   # nesting or a number too long: a JSONDecodeError
    except json.JSONDecodeError as err:
        raise ValueError(f"--plugin-options: not valid JSON ({err})") from err
    if not isinstance(options, dict):
        raise ValueError(f"--plugin-options: expected a JSON object, got "
                         f"{type(options).__name__}")
    return options


@dataclasses.dataclass(frozen=True)
class BackendSpec:
    """The backend under test: ``platform`` (registry name), ``cpu_devices``
    (>= 1) of the built-in CPU client, optionally a plugin ``plugin_library``
    path with ``plugin_options`` (its create options), and ``expect_platform``:
    the platform string the client must report (default: ``platform``; for a
    registry entry whose name is not its platform, such as a test double), and
    ``setup_files``: Python files (the session's conftest.py files) that a child
    process runs first, so backends they register exist there too."""

    platform: str
    cpu_devices: int = 8
    plugin_library: str | None = None
    plugin_options: dict[str, Any] | None = None
    expect_platform: str | None = None
    setup_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.platform, str) or not self.platform:
            raise ValueError(f"argument 'platform' must be a non-empty str, got "
                             f"{self.platform!r}")
        if isinstance(self.cpu_devices, bool) or not isinstance(self.cpu_devices, int) \
                or self.cpu_devices < 1:
            raise ValueError(f"argument 'cpu_devices' must be an int >= 1, got "
                             f"{self.cpu_devices!r}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> BackendSpec:
        fields = json.loads(text)
        fields["setup_files"] = tuple(fields.get("setup_files", ()))
        return cls(**fields)

    def run_setup_files(self) -> None:
        """Run ``setup_files`` (in a child process, before :meth:`configure`)."""
        import runpy

        for path in self.setup_files:
            runpy.run_path(path)

    def configure(self) -> None:
        """Set up the registry: CPU with ``cpu_devices`` devices, the plugin library
        (if any) registered under ``platform``, and ``platform`` as the only one
        to initialize (so every failure is loud).

        Raises PluginLoadError (with path and cause) for a plugin that cannot
        load, RuntimeError naming the available platforms for an unknown one.
        """
        confine_jax_to_cpu()
        xla_bridge.discover_and_register_pjrt_plugins()
        xla_bridge.clear_backends()
        xla_bridge.register_backend_factory(
            "cpu", functools.partial(xla_client.make_cpu_client, num_devices=self.cpu_devices),
            priority=0, fail_quietly=False)
        if self.plugin_library is not None:
            xla_bridge.register_plugin(self.platform, priority=1000,
                                       library_path=self.plugin_library,
                                       options=self.plugin_options,
                                       source="--plugin-library")
        xla_bridge.set_platforms([self.platform])
        known = xla_bridge.expand_platform_alias(self.platform)
        if not any(p in xla_bridge.registered_platforms() for p in known):
            available = xla_bridge.available_platforms()  # runtime's error, in options:
            raise RuntimeError(f"{xla_bridge.unknown_platform_error(self.platform)} From the "
                               "command line: load its plugin with --plugin-library=PATH, or "
                               f"pass --platform={available[0] if available else 'cpu'}.")
        if not any(p in xla_bridge.available_platforms() for p in known):
            raise xla_client.GpuLibNotLinkedError(
                f"no {'/'.join(known)} PJRT plugin is installed. Available: "
                f"{xla_bridge.available_platforms()}. "
                f"{xla_bridge.INSTALL_HINTS[known[0]]}, or pass --platform=cpu.")

    def open(self) -> Any:
        """The client under test, checked to be the requested platform.

        Raises RuntimeError with the cause if it cannot start, and
        PlatformMismatchError if the client reports another platform or, for
        ``plugin_library``, is not the PJRT C API client of that library.
        """
        with warnings.catch_warnings():
            # the plugin under test is experimental to jax by definition: the report
            # records what was loaded; the warning was one more line per process
            warnings.simplefilter("ignore", xla_bridge.ExperimentalPlatformWarning)
            client = xla_bridge.get_backend(self.platform)
        expected = xla_bridge.expand_platform_alias(self.expect_platform or self.platform)
        if client_platform(client) not in expected:
            raise PlatformMismatchError(
                f"--platform={self.platform}: the client obtained reports platform "
                f"{client.platform!r} ({client.platform_version!r}); refusing to certify "
                f"{self.platform} with it"
                + ("" if self.expect_platform else
                   f". A plugin registered under a name other than the platform it reports "
                   f"is certified with --platform {self.platform} --expect-platform "
                   f"{client.platform}"))
        if self.plugin_library is not None:
            loaded = xla_bridge.plugin_registrations().get(self.platform)
            if not xla_bridge.using_pjrt_c_api(client) or loaded is None or \
                    loaded.library is None or \
                    xla_bridge.normalize_library_path(self.plugin_library) != loaded.library.path:
                raise PlatformMismatchError(
                    f"--plugin-library={self.plugin_library}: the client under test is not "
                    f"the PJRT C API client of that library (platform_version "
                    f"{client.platform_version!r}, registered: {loaded})")
        return client


def describe(client: Any, spec: BackendSpec) -> dict[str, Any]:
    """Platform facts recorded in the report header (see docs/report-schema.md)."""
    devices = client.local_devices()
    info = {
        "name": client.platform,
        "platform_version": client.platform_version,
        "runtime_type": client.runtime_type,
        "device_kinds": sorted({d.device_kind for d in devices}),
        "device_count": client.device_count(),
        "local_device_count": client.local_device_count(),
        "process_index": client.process_index(),
    }
    info.update(pjrt_plugin_info.describe_plugin(client, spec))
    return info
