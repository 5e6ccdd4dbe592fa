"""Backend registry (seed 002, ``jax._src.xla_bridge``) on ``runtime.xla_client``.

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

The conformance suite obtains its client only through :func:`get_backend`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runtime import _platforms, _plugin_discovery, _plugins, xla_client
from runtime._gpu import GPU_PLUGINS, gpu_plugin_installed
from runtime._plugin_library import PluginLibrary, PluginLoadError
from runtime._platforms import expand_platform_alias, is_gpu

__all__ = [
    "BackendRegistration", "ExperimentalPlatformWarning", "PluginLoadError", "PluginWarning",
    "PluginRegistration", "backend_errors", "backend_pjrt_c_api_version", "backends",
    "backends_are_initialized", "canonicalize_platform", "clear_backends", "default_backend",
    "device_count", "devices", "discover_and_register_pjrt_plugins", "discover_pjrt_plugins",
    "expand_platform_alias", "get_backend",
    "get_device_backend", "host_count", "host_id", "host_ids", "is_gpu", "is_known_platform",
    "local_device_count", "local_devices", "make_pjrt_topology", "make_pjrt_tpu_topology",
    "available_platforms", "platforms", "plugin_errors", "plugin_registrations", "process_count", "process_index",
    "register_backend_factory", "register_pjrt_plugin_factories_from_env", "register_plugin",
    "registered_platforms", "set_platforms", "unregister_backend_factory", "using_pjrt_c_api",
]

#: Install hints for platforms that need a package (named in errors).
INSTALL_HINTS = {
    "cuda": "Install jax-cuda13-pjrt (pip install 'jax[cuda13]') on a machine with an NVIDIA GPU",
    "rocm": "Install jax-rocm7-pjrt on a machine with an AMD GPU",
    "tpu": "Install libtpu on a TPU VM",
}
#: Plugins that are not experimental (seed 002 ``_nonexperimental_plugins``).
NONEXPERIMENTAL_PLUGINS = frozenset({"cuda"})
PLATFORMS_ENV_VAR = "JAX_PLATFORMS"


class ExperimentalPlatformWarning(UserWarning):
    """An experimental platform (a plugin outside the non-experimental set) started."""


class PluginWarning(UserWarning):
    """A discovered PJRT plugin failed to import, initialize or parse."""


@dataclasses.dataclass(frozen=True)
class BackendRegistration:
    """A registered factory (seed 002). Higher ``priority`` is preferred."""

    factory: Callable[[], Any]
    priority: int
    fail_quietly: bool = False
    experimental: bool = False


@dataclasses.dataclass(frozen=True)
class PluginRegistration:
    """How a PJRT plugin came into the registry (recorded in reports).

    ``source``: ``"register_plugin"``, ``"env"`` or ``"module:<name>"``;
    ``library``: path, sha256 and C API version of the loaded library (None
    when registered from a ``c_api`` capsule); ``options``: create options.
    """

    plugin_name: str
    source: str
    library: PluginLibrary | None
    options: dict[str, Any]
    priority: int


_lock = threading.RLock()
_factories: dict[str, BackendRegistration] = {}
_topology_factories: dict[str, Callable[..., Any]] = {}
_backends: dict[str, Any] = {}
_errors: dict[str, str] = {}
_default_platform: str | None = None
_platform_list: list[str] | None = None
_platform_list_set = False
_plugins_registered = False
_plugin_errors: dict[str, str] = {}
_plugin_registrations: dict[str, PluginRegistration] = {}
_builtin_gpu_factories: dict[str, Callable[[], Any]] = {}


# -- registration ---------------------------------------------------------------------------

def register_backend_factory(name: str, factory: Callable[[], Any], *, priority: int = 0,
                             fail_quietly: bool = True, experimental: bool = False,
                             make_topology: Callable[..., Any] | None = None) -> None:
    """Register ``factory`` (no arguments, returns a client) under platform ``name`` (seed 002).

    A later registration of the same name replaces the earlier one.
    ``make_topology(topology_name, **kwargs)`` serves :func:`make_pjrt_topology`.
    Raises TypeError for a bad name, factory or priority, and RuntimeError once
    ``name`` has been initialized (call :func:`clear_backends` first).
    """
    call = "register_backend_factory"
    if not isinstance(name, str) or not name:
        raise TypeError(f"{call}: argument 'name' must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"{call}: argument 'factory' must be callable, got {factory!r}")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"{call}: argument 'priority' must be an int, got {priority!r}")
    if make_topology is not None and not callable(make_topology):
        raise TypeError(f"{call}: argument 'make_topology' must be callable or None, "
                        f"got {make_topology!r}")
    with _lock:
        if name in _backends:
            raise RuntimeError(f"{call}: backend {name!r} is already initialized; call "
                               "xla_bridge.clear_backends() first")
        _factories[name] = BackendRegistration(factory, priority, bool(fail_quietly),
                                               bool(experimental))
        if make_topology is not None:
            _topology_factories[name] = make_topology


def unregister_backend_factory(name: str) -> None:
    """Remove the registration of ``name`` (for tests). KeyError if unknown,
    RuntimeError if initialized."""
    with _lock:
        if name in _backends:
            raise RuntimeError(f"unregister_backend_factory: backend {name!r} is initialized; "
                               "call xla_bridge.clear_backends() first")
        if name not in _factories:
            raise KeyError(f"unregister_backend_factory: no factory registered as {name!r}")
        del _factories[name]
        _topology_factories.pop(name, None)
        _plugin_registrations.pop(name, None)


def registered_platforms() -> list[str]:
    """Names with a registered factory, highest priority first."""
    with _lock:
        return sorted(_factories, key=lambda n: -_factories[n].priority)


def available_platforms() -> list[str]:
    """Registered platforms that could start here, highest priority first: the
    built-in ``cuda``/``rocm`` factories count only when their plugin is installed."""
    with _lock:
        builtin = {p for p, f in _builtin_gpu_factories.items()
                   if p in _factories and _factories[p].factory is f}
    return [p for p in registered_platforms() if p not in builtin or gpu_plugin_installed(p)]


def set_platforms(platforms: str | Sequence[str] | None) -> None:
    """Set the platform list (``"cuda,cpu"`` or ``["cuda", "cpu"]``); None or ``""``
    clears it so every registered factory is initialized. Overrides
    ``JAX_PLATFORMS``. Raises RuntimeError once backends are initialized,
    TypeError/ValueError for a malformed list."""
    global _platform_list, _platform_list_set
    parsed = _platforms.parse_platform_list(platforms)
    with _lock:
        if _backends:
            raise RuntimeError("set_platforms: backends are already initialized; call "
                               "xla_bridge.clear_backends() first")
        _platform_list, _platform_list_set = parsed, True


def platforms() -> list[str] | None:
    """The platform list in force: :func:`set_platforms`, else ``JAX_PLATFORMS``, else None."""
    with _lock:
        if _platform_list_set:
            return None if _platform_list is None else list(_platform_list)
    return _platforms.parse_platform_list(os.getenv(PLATFORMS_ENV_VAR, ""),
                                          arg=PLATFORMS_ENV_VAR, call="JAX_PLATFORMS")


# -- plugins --------------------------------------------------------------------------------

def register_plugin(plugin_name: str, priority: int = 400, library_path: str | None = None,
                    options: Mapping[str, Any] | None = None, c_api: Any | None = None,
                    *, source: str = "register_plugin") -> Any:
    """Register a backend factory for a PJRT plugin (seed 002); return its ``PJRT_Api``.

    Exactly one of ``library_path`` (path of the plugin's ``.so``) and ``c_api``
    is required. The library is loaded now; the client is created when the
    backend is initialized. ``options`` are the plugin's create options
    (str -> str/int/float/bool/list[int]). Plugins outside
    ``NONEXPERIMENTAL_PLUGINS`` are experimental. Raises ValueError for both or
    neither of ``library_path``/``c_api``, TypeError for bad options and
    PluginLoadError when the library cannot be loaded.
    """
    call = "register_plugin"
    if not isinstance(plugin_name, str) or not plugin_name:
        raise TypeError(f"{call}: argument 'plugin_name' must be a non-empty str, "
                        f"got {plugin_name!r}")
    if (library_path is None) == (c_api is None):
        raise ValueError(f"{call}: exactly one of 'library_path' and 'c_api' must be given for "
                         f"plugin {plugin_name!r}, got "
                         f"{'both' if library_path is not None else 'neither'}")
    opts = _plugins.validate_options(call, options)
    if library_path is not None:
        c_api = _plugins.load_pjrt_plugin_dynamically(plugin_name, library_path)
    else:
        _plugins.load_pjrt_plugin_with_c_api(plugin_name, c_api)

    def factory() -> Any:
        return _plugins.make_c_api_client(plugin_name, opts)

    register_backend_factory(plugin_name, factory, priority=priority, fail_quietly=False,
                             experimental=plugin_name not in NONEXPERIMENTAL_PLUGINS,
                             make_topology=functools.partial(
                                 xla_client.make_c_api_device_topology, c_api))
    with _lock:
        _plugin_registrations[plugin_name] = PluginRegistration(
            plugin_name, source, _plugins.loaded_library(plugin_name), opts, priority)
    return c_api


def _record_plugin_error(err: PluginLoadError) -> None:
    with _lock:
        _plugin_errors[err.plugin_name] = str(err)
    warnings.warn(PluginWarning(str(err)), stacklevel=3)


def discover_pjrt_plugins() -> None:
    """Import every module of the ``jax_plugins`` namespace package and entry-point
    group and call its ``initialize()`` (seed 002).

    A module whose import or ``initialize()`` fails is recorded in
    :func:`plugin_errors` and warned about (:class:`PluginWarning`).
    """
    for module in _plugin_discovery.discover_plugin_modules():
        before = set(_factories)
        try:
            _plugin_discovery.initialize_plugin_module(module)
        except PluginLoadError as err:
            _record_plugin_error(err)
            continue
        with _lock:
            for name in set(_factories) - before:
                reg = _plugin_registrations.get(name)
                if reg is not None:
                    _plugin_registrations[name] = dataclasses.replace(
                        reg, source=f"module:{module}")


def register_pjrt_plugin_factories_from_env() -> None:
    """Register every plugin of ``PJRT_NAMES_AND_LIBRARY_PATHS`` (seed 002).

    Format ``name:path,...``; a path ending in ``.json`` is a plugin config file
    (``library_path``, optional ``create_options``). A malformed variable, a bad
    config or a library that fails to load is recorded in :func:`plugin_errors`
    and warned about; the other entries are still registered.
    """
    try:
        entries = _plugin_discovery.parse_names_and_paths(
            os.getenv(_plugin_discovery.ENV_VAR, ""))
    except PluginLoadError as err:
        _record_plugin_error(err)
        return
    for name, path in entries.items():
        try:
            options = None
            if path.endswith(".json"):
                path, options = _plugin_discovery.read_plugin_config(name, path)
            register_plugin(name, library_path=path, options=options, source="env")
        except (PluginLoadError, TypeError, ValueError) as err:
            _record_plugin_error(err if isinstance(err, PluginLoadError)
                                 else PluginLoadError(name, path, str(err)))


def discover_and_register_pjrt_plugins() -> None:
    """Run :func:`discover_pjrt_plugins` and
    :func:`register_pjrt_plugin_factories_from_env` once per process (they also
    run on the first :func:`backends` call)."""
    global _plugins_registered
    with _lock:
        if _plugins_registered:
            return
        _plugins_registered = True
    discover_pjrt_plugins()
    register_pjrt_plugin_factories_from_env()


def plugin_errors() -> dict[str, str]:
    """Plugin (or module) name -> why it could not be discovered or registered."""
    with _lock:
        return dict(_plugin_errors)


def plugin_registrations() -> dict[str, PluginRegistration]:
    """Plugin name -> how it was registered (library path, sha256, options)."""
    with _lock:
        return dict(_plugin_registrations)


# -- initialization -------------------------------------------------------------------------

def _init_backend(platform: str) -> Any:
    registration = _factories.get(platform)
    if registration is None:
        raise RuntimeError(f"Backend '{platform}' is not in the list of known backends: "
                           f"{registered_platforms()}")
    if registration.experimental:
        warnings.warn(ExperimentalPlatformWarning(
            f"Platform '{platform}' is experimental and not all functionality may be "
            "correctly supported"), stacklevel=4)
    backend = registration.factory()
    if backend is None:
        raise RuntimeError(f"Could not initialize backend '{platform}': its factory "
                           "returned None")
    if backend.device_count() == 0:
        raise RuntimeError(f"Backend '{platform}' provides no devices.")
    return backend


def _registrations() -> list[tuple[str, int, bool]]:
    requested = platforms()
    if requested is None:
        return [(p, r.priority, r.fail_quietly) for p, r in _factories.items()]
    out = []
    for rank, name in enumerate(requested):
        concrete = expand_platform_alias(name)
        # An alias ("gpu") is satisfied by any one of its platforms (checked in
        # backends()); a plain name always fails loudly.
        out += [(p, len(requested) - rank, len(concrete) > 1) for p in concrete]
    return out


def _check_aliases_satisfied() -> None:
    for name in platforms() or ():
        members = expand_platform_alias(name)
        if len(members) > 1 and not any(p in _backends for p in members):
            causes = {p: _errors.get(p, "not registered") for p in members}
            _backends.clear()
            raise RuntimeError(f"Unable to initialize backend '{name}': none of {members} "
                               f"started: {causes}")


def backends() -> dict[str, Any]:
    """Initialize the registered backends once; return platform -> client (seed 002).

    Without a platform list every factory is initialized in priority order;
    failures of ``fail_quietly`` factories are recorded in :func:`backend_errors`,
    others raise RuntimeError naming the platform, the cause and the fix. With a
    platform list only those platforms are initialized and every failure raises.
    """
    global _default_platform
    discover_and_register_pjrt_plugins()
    with _lock:
        if _backends:
            return dict(_backends)
        using_list = platforms() is not None
        best = None
        for platform, priority, fail_quietly in sorted(_registrations(), key=lambda r: -r[1]):
            try:
                _backends[platform] = _init_backend(platform)
            except Exception as err:  # a factory may raise anything
                if fail_quietly:
                    _errors[platform] = f"{type(err).__name__}: {err}"
                    continue
                _backends.clear()
                msg = (f"Unable to initialize backend '{platform}': {err} (registered "
                       f"platforms: {registered_platforms()})")
                msg += (f" (pass a platform list without '{platform}', or unset "
                        f"{PLATFORMS_ENV_VAR}, to choose an available backend)" if using_list
                        else " (you may need to uninstall the failing plugin package, or set "
                        f"{PLATFORMS_ENV_VAR}=cpu to skip this backend)")
                raise RuntimeError(msg) from err
            if best is None or priority > best[1]:
                best = (platform, priority)
        _check_aliases_satisfied()
        if not _backends:
            raise RuntimeError(f"No backend could be initialized: {dict(_errors)}")
        _default_platform = best[0]
        return dict(_backends)


def backends_are_initialized() -> bool:
    """True once :func:`backends` has initialized at least one backend (seed 002)."""
    with _lock:
        return bool(_backends)


def backend_errors() -> dict[str, str]:
    """Platform -> why its quiet factory failed."""
    with _lock:
        return dict(_errors)


def clear_backends() -> None:
    """Forget initialized backends, errors and the default (for tests; seed 002
    ``_clear_backends``). Registrations and the platform list are kept."""
    global _default_platform
    with _lock:
        _backends.clear()
        _errors.clear()
        _default_platform = None


_clear_backends = clear_backends


# -- lookup ---------------------------------------------------------------------------------

def is_known_platform(platform: str) -> bool:
    """True for a registered platform or an alias such as ``gpu`` (seed 002)."""
    return platform in _factories or platform in _platforms.PLATFORM_ALIASES \
        or platform in _platforms.ALIAS_TO_PLATFORMS


def canonicalize_platform(platform: str) -> str:
    """``"gpu"`` -> ``"cuda"`` or ``"rocm"``, whichever backend is present (seed 002).

    Raises RuntimeError when no platform of the alias is present.
    """
    candidates = _platforms.ALIAS_TO_PLATFORMS.get(platform)
    if candidates is None:
        return platform
    live = backends()
    for p in candidates:
        if p in live:
            return p
    raise RuntimeError(f"Unknown backend: '{platform}' requested, but no platforms that are "
                       f"instances of {platform} are present. Platforms present are: "
                       + ",".join(live))


def unknown_platform_error(platform: str) -> RuntimeError:
    """The error for a platform nobody registered: what is available and what to install."""
    available = available_platforms()
    hint = INSTALL_HINTS.get(platform, "Register it with register_backend_factory() or "
                             "register_plugin(), or load it with --plugin-library")
    msg = (f"Unknown platform {platform!r}. Available: {available}. {hint} or pass "
           f"--platform={available[0] if available else 'cpu'}.")
    errors = plugin_errors()
    if errors:
        msg += " Plugins that failed to load: " + "; ".join(errors.values())
    return RuntimeError(msg)


def get_backend(platform: None | str | Any = None) -> Any:
    """The client for ``platform``, or the default (highest priority) backend (seed 002).

    A non-str, non-None ``platform`` is taken to be a client and returned.
    Raises RuntimeError naming the available platforms when ``platform`` is not
    registered, or its initialization error.
    """
    if platform is not None and not isinstance(platform, str):
        return platform
    live = backends()
    if platform is None:
        with _lock:
            return live[_default_platform]
    platform = canonicalize_platform(platform)
    if platform in live:
        return live[platform]
    with _lock:
        if platform in _factories and platform not in _errors:
            # Registered after backends() ran: initialize it alone, loudly.
            try:
                _backends[platform] = _init_backend(platform)
            except Exception as err:  # a factory may raise anything
                _errors[platform] = f"{type(err).__name__}: {err}"
                raise RuntimeError(f"Unable to initialize backend '{platform}': {err}") from err
            return _backends[platform]
        if platform in _errors:
            raise RuntimeError(f"Backend '{platform}' failed to initialize: {_errors[platform]}."
                               f" Available backends are {list(live)}")
    raise unknown_platform_error(platform)


def get_device_backend(device: Any = None) -> Any:
    """The backend that owns ``device``, or the default backend (seed 002)."""
    if device is None:
        return get_backend()
    for client in backends().values():
        if device.client == client:
            return client
    return device.client


def device_count(backend: str | Any | None = None) -> int:
    """Number of devices of the backend across all processes (seed 002)."""
    return int(get_backend(backend).device_count())


def local_device_count(backend: str | Any | None = None) -> int:
    """Number of devices addressable by this process (seed 002)."""
    return int(get_backend(backend).local_device_count())


def devices(backend: str | Any | None = None) -> list[Any]:
    """All devices of the backend, across processes (seed 002)."""
    return list(get_backend(backend).devices())


def process_index(backend: str | Any | None = None) -> int:
    """Index of this process (seed 002)."""
    return int(get_backend(backend).process_index())


def process_count(backend: str | Any | None = None) -> int:
    """Number of processes: the largest device ``process_index`` plus one (seed 002)."""
    return max(d.process_index for d in devices(backend)) + 1


def local_devices(process_index: int | None = None, backend: str | Any | None = None,
                  host_id: int | None = None) -> list[Any]:
    """Devices of process ``process_index`` (default: this process) (seed 002).

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
    """Platform name of the default backend (seed 002)."""
    return get_backend(None).platform


def using_pjrt_c_api(backend: str | Any | None = None) -> bool:
    """True when the backend is a PJRT C API (plugin) client (seed 002).

    The seed tests ``"PJRT C API" in platform_version``; jaxlib 0.11's CUDA
    plugin reports ``platform_version == "cuda 13000"`` while exposing its C API
    version, so a client that reports a C API version counts too.
    """
    client = get_backend(backend)
    return "PJRT C API" in client.platform_version or \
        backend_pjrt_c_api_version(client) is not None


def backend_pjrt_c_api_version(platform: str | Any | None = None) -> tuple[int, int] | None:
    """``(major, minor)`` PJRT C API version of a plugin backend, None for others (seed 002)."""
    backend = get_backend(platform)
    major = getattr(backend, "pjrt_c_api_major_version", None)
    minor = getattr(backend, "pjrt_c_api_minor_version", None)
    if major is None or minor is None:
        return None
    return int(major), int(minor)


def make_pjrt_topology(platform: str, topology_name: str = "", **kwargs: Any) -> Any:
    """A ``DeviceTopology`` from the platform's topology factory (seed 002).

    Raises NotImplementedError when the platform registered none.
    """
    discover_and_register_pjrt_plugins()
    actual = canonicalize_platform(platform) if platform in _platforms.ALIAS_TO_PLATFORMS \
        else platform
    with _lock:
        factory = _topology_factories.get(actual)
    if factory is None:
        raise NotImplementedError(f"make_pjrt_topology: topology not implemented for "
                                  f"{platform!r}")
    return factory(topology_name, **kwargs)


def make_pjrt_tpu_topology(topology_name: str = "", **kwargs: Any) -> Any:
    """A TPU ``DeviceTopology`` (seed 002): loads libtpu from ``TPU_LIBRARY_PATH``.

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
    for gpu in GPU_PLUGINS:
        factory = functools.partial(xla_client.make_gpu_client, platform_name=gpu)
        _builtin_gpu_factories[gpu] = factory
        register_backend_factory(gpu, factory, priority=200, fail_quietly=True)


_register_builtin_factories()
