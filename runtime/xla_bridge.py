"""jax's backend registry (``jax._src.xla_bridge``) on ``runtime.xla_client``.

Factories are registered by platform name with a priority; :func:`backends`
initializes them in priority order the first time any backend is asked for.
Quiet factories that fail are recorded (:func:`backend_errors`); loud ones
raise with a hint. A platform list (:func:`set_platforms`, else the
``JAX_PLATFORMS`` environment variable) restricts initialization to the named
platforms, sets their priority by order and makes every failure loud.

PJRT plugins come from :func:`register_plugin`, from ``jax_plugins`` modules
and entry points (:func:`discover_pjrt_plugins`) and from
``PJRT_NAMES_AND_LIBRARY_PATHS`` (:func:`register_pjrt_plugin_factories_from_env`).
Unlike jax, a plugin that fails to import, initialize or parse is not only
logged: it is recorded in :func:`plugin_errors`, warned about with
:class:`PluginWarning`, and named in the error of any platform lookup that fails.

Beyond ``jax._src.xla_bridge``, for tools that report on a backend: :func:`client_platform`,
:func:`gpu_plugin_library`, :func:`normalize_library_path`, :func:`library_sha256`,
:func:`plugin_registrations`, :func:`plugin_errors`, :func:`available_platforms`
and :func:`unknown_platform_error`.

The conformance suite obtains its client only through :func:`get_backend`.
The registry itself lives in private modules (``_registry``, ``_plugin_registry``,
``_backends``); this module is its public face.
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Any

from runtime import _compat, _gpu, _plugin_library, _platforms, _plugins, _registry, xla_client
from runtime._backends import (backend_errors, backends, backends_are_initialized,
                               canonicalize_platform, clear_backends, get_backend,
                               get_device_backend, is_known_platform, unknown_platform_error)
from runtime._platforms import client_platform, expand_platform_alias, is_gpu
from runtime._plugin_library import PluginLoadError
from runtime._plugin_registry import (PluginWarning, discover_and_register_pjrt_plugins,
                                      discover_pjrt_plugins, plugin_errors,
                                      plugin_registrations,
                                      register_pjrt_plugin_factories_from_env, register_plugin)
from runtime._registry import (INSTALL_HINTS, NONEXPERIMENTAL_PLUGINS, PLATFORMS_ENV_VAR,
                               BackendRegistration, ExperimentalPlatformWarning,
                               PluginRegistration, available_platforms, platforms,
                               register_backend_factory, registered_platforms, set_platforms,
                               unregister_backend_factory)

__all__ = [
    "BackendRegistration", "ExperimentalPlatformWarning", "INSTALL_HINTS",
    "NONEXPERIMENTAL_PLUGINS", "PLATFORMS_ENV_VAR", "PluginLoadError", "PluginWarning",
    "PluginRegistration", "available_platforms", "backend_errors", "backend_pjrt_c_api_version",
    "backends", "backends_are_initialized", "canonicalize_platform", "clear_backends",
    "client_platform", "default_backend", "device_count", "devices",
    "discover_and_register_pjrt_plugins", "discover_pjrt_plugins", "expand_platform_alias",
    "get_backend", "get_device_backend", "gpu_plugin_library", "host_count", "host_id",
    "host_ids", "is_gpu", "is_known_platform", "library_sha256", "local_device_count",
    "local_devices", "make_pjrt_topology", "make_pjrt_tpu_topology", "normalize_library_path",
    "platforms", "plugin_errors", "plugin_registrations", "process_count", "process_index",
    "register_backend_factory", "register_pjrt_plugin_factories_from_env", "register_plugin",
    "registered_platforms", "set_platforms", "unknown_platform_error",
    "unregister_backend_factory", "using_pjrt_c_api",
]

_clear_backends = clear_backends  # jax._src.xla_bridge's name

normalize_library_path = _plugin_library.absolute_path
library_sha256 = _plugin_library.sha256_of


def gpu_plugin_library(platform: str) -> str | None:
    """Path of the installed PJRT plugin library that the built-in ``cuda``/``rocm``
    factory loads; None when it is not installed or ``platform`` (a str) has no
    built-in GPU plugin."""
    return _gpu.find_plugin_library(platform) if platform in _gpu.GPU_PLUGINS else None


def device_count(backend: str | Any | None = None) -> int:
    """Number of devices of the backend across all processes
    (``jax._src.xla_bridge.device_count``)."""
    return int(get_backend(backend).device_count())


def local_device_count(backend: str | Any | None = None) -> int:
    """Number of devices addressable by this process
    (``jax._src.xla_bridge.local_device_count``)."""
    return int(get_backend(backend).local_device_count())


def devices(backend: str | Any | None = None) -> list[Any]:
    """All devices of the backend, across processes (``jax._src.xla_bridge.devices``)."""
    return list(get_backend(backend).devices())


def process_index(backend: str | Any | None = None) -> int:
    """Index of this process (``jax._src.xla_bridge.process_index``)."""
    return int(get_backend(backend).process_index())


def process_count(backend: str | Any | None = None) -> int:
    """Number of processes: the largest device ``process_index`` plus one
    (``jax._src.xla_bridge.process_count``)."""
    return max(d.process_index for d in devices(backend)) + 1


def local_devices(process_index: int | None = None, backend: str | Any | None = None,
                  host_id: int | None = None) -> list[Any]:
    """Devices of process ``process_index`` (default: this process)
    (``jax._src.xla_bridge.local_devices``).

    ``host_id`` is the deprecated name of ``process_index`` (DeprecationWarning).
    Raises ValueError for an index outside ``[0, process_count)``.
    """
    if host_id is not None:
        warnings.warn("The argument to local_devices has been renamed from `host_id` to "
                      "`process_index`.", DeprecationWarning, stacklevel=2)
        process_index = host_id
    if process_index is None:
        process_index = get_backend(backend).process_index()
    count = process_count(backend)
    if isinstance(process_index, bool) or not isinstance(process_index, int) \
            or not 0 <= process_index < count:
        raise ValueError(f"local_devices: unknown process_index {process_index!r}; expected an "
                         f"int in [0, {count})")
    return [d for d in devices(backend) if d.process_index == process_index]


def host_id(backend: str | Any | None = None) -> int:
    """Deprecated: :func:`process_index` (DeprecationWarning)."""
    warnings.warn("host_id has been renamed to process_index.", DeprecationWarning,
                  stacklevel=2)
    return process_index(backend)


def host_count(backend: str | Any | None = None) -> int:
    """Deprecated: :func:`process_count` (DeprecationWarning)."""
    warnings.warn("host_count has been renamed to process_count.", DeprecationWarning,
                  stacklevel=2)
    return process_count(backend)


def host_ids(backend: str | Any | None = None) -> list[int]:
    """Deprecated: ``range(process_count())`` (DeprecationWarning)."""
    warnings.warn("host_ids is deprecated; use range(process_count()).", DeprecationWarning,
                  stacklevel=2)
    return list(range(process_count(backend)))


def default_backend() -> str:
    """Platform name of the default backend (``jax._src.xla_bridge.default_backend``)."""
    return get_backend(None).platform


def using_pjrt_c_api(backend: str | Any | None = None) -> bool:
    """True when the backend is a PJRT C API (plugin) client
    (``jax._src.xla_bridge.using_pjrt_c_api``).

    ``jax._src.xla_bridge`` tests ``"PJRT C API" in platform_version``, which jaxlib 0.12's plugin
    clients no longer say, and jaxlib 0.11's CUDA plugin never did (``"cuda 13000"``);
    ``runtime._compat.is_c_api_client`` asks the client itself where it can.
    """
    return _compat.is_c_api_client(get_backend(backend))


def backend_pjrt_c_api_version(platform: str | Any | None = None) -> tuple[int, int] | None:
    """``(major, minor)`` PJRT C API version of a plugin backend, None for others
    (``jax._src.xla_bridge.backend_pjrt_c_api_version``; unlike jax 0.12's, None also for
    the built-in CPU client, which reports (0, 0))."""
    return _compat.pjrt_c_api_version(get_backend(platform))


def make_pjrt_topology(platform: str, topology_name: str = "", **kwargs: Any) -> Any:
    """A ``DeviceTopology`` from the platform's topology factory
    (``jax._src.xla_bridge.make_pjrt_topology``).

    Raises NotImplementedError when the platform registered none.
    """
    discover_and_register_pjrt_plugins()
    actual = canonicalize_platform(platform) if platform in _platforms.ALIAS_TO_PLATFORMS \
        else platform
    with _registry.STATE.lock:
        factory = _registry.STATE.topology_factories.get(actual)
    if factory is None:
        raise NotImplementedError(f"make_pjrt_topology: topology not implemented for "
                                  f"{platform!r}")
    return factory(topology_name, **kwargs)


def make_pjrt_tpu_topology(topology_name: str = "", **kwargs: Any) -> Any:
    """A TPU ``DeviceTopology`` (``jax._src.xla_bridge.make_pjrt_tpu_topology``): loads libtpu from
    ``TPU_LIBRARY_PATH``.

    Raises RuntimeError when TPU support is not installed.
    """
    if not _plugins.pjrt_plugin_loaded("tpu"):
        library_path = os.getenv("TPU_LIBRARY_PATH")
        if library_path is None:
            raise RuntimeError("make_pjrt_tpu_topology: TPU support is not installed "
                               "(no TPU plugin loaded and TPU_LIBRARY_PATH is not set); "
                               f"{INSTALL_HINTS['tpu']}")
        _plugins.load_pjrt_plugin_dynamically("tpu", library_path)
    if not _plugins.pjrt_plugin_initialized("tpu"):
        _plugins.initialize_pjrt_plugin("tpu")
    return xla_client.make_tfrt_tpu_c_api_device_topology(topology_name, **kwargs)


def _register_builtin_factories() -> None:
    register_backend_factory("cpu", xla_client.make_cpu_client, priority=0, fail_quietly=False)
    for gpu in _gpu.GPU_PLUGINS:
        factory = functools.partial(xla_client.make_gpu_client, platform_name=gpu)
        _registry.STATE.builtin_gpu_factories[gpu] = factory
        register_backend_factory(gpu, factory, priority=200, fail_quietly=True)


_register_builtin_factories()
