"""PJRT plugins in the backend registry (jax's ``jax._src.xla_bridge``): registered by path
or capsule, discovered from ``jax_plugins`` modules and entry points, or named in
``PJRT_NAMES_AND_LIBRARY_PATHS``.

Unlike jax, a plugin that fails to import, initialize or parse is not only
logged: it is recorded in :func:`plugin_errors` and warned about with
:class:`PluginWarning`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from collections.abc import Mapping
from typing import Any

from runtime import _plugin_discovery, _plugins, xla_client
from runtime._plugin_library import PluginLoadError
from runtime._registry import (NONEXPERIMENTAL_PLUGINS, STATE, PluginRegistration,
                               register_backend_factory)


class PluginWarning(UserWarning):
    """A discovered PJRT plugin failed to import, initialize or parse."""


def register_plugin(plugin_name: str, priority: int = 400, library_path: str | None = None,
                    options: Mapping[str, Any] | None = None, c_api: Any | None = None,
                    *, source: str = "register_plugin") -> Any:
    """Register a backend factory for a PJRT plugin; return its ``PJRT_Api``
    (``jax._src.xla_bridge.register_plugin``).

    Exactly one of ``library_path`` (path of the plugin's ``.so``) and ``c_api``
    is required. The library is loaded now; the client is created when the
    backend is initialized. ``options`` are the plugin's create options
    (str -> str/int/float/bool/list[int]). ``source`` is recorded in
    :func:`plugin_registrations`. Plugins outside ``NONEXPERIMENTAL_PLUGINS``
    are experimental. Raises ValueError for both or neither of
    ``library_path``/``c_api``, TypeError for bad options and PluginLoadError
    when the library cannot be loaded.
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
    with STATE.lock:
        STATE.plugin_registrations[plugin_name] = PluginRegistration(
            plugin_name, source, _plugins.loaded_library(plugin_name), opts, priority)
    return c_api


def _record_plugin_error(err: PluginLoadError) -> None:
    with STATE.lock:
        STATE.plugin_errors[err.plugin_name] = str(err)
    warnings.warn(PluginWarning(str(err)), stacklevel=3)


def discover_pjrt_plugins() -> None:
    """Import every module of the ``jax_plugins`` namespace package and entry-point
    group and call its ``initialize()``
    (``jax._src.xla_bridge.discover_pjrt_plugins``).

    A module whose import or ``initialize()`` fails is recorded in
    :func:`plugin_errors` and warned about (:class:`PluginWarning`).
    """
    for module in _plugin_discovery.discover_plugin_modules():
        before = set(STATE.factories)
        try:
            _plugin_discovery.initialize_plugin_module(module)
        except PluginLoadError as err:
            _record_plugin_error(err)
            continue
        with STATE.lock:
            for name in set(STATE.factories) - before:
                reg = STATE.plugin_registrations.get(name)
                if reg is not None:
                    STATE.plugin_registrations[name] = dataclasses.replace(
                        reg, source=f"module:{module}")


def register_pjrt_plugin_factories_from_env() -> None:
    """Register every plugin of ``PJRT_NAMES_AND_LIBRARY_PATHS``
    (``jax._src.xla_bridge.register_pjrt_plugin_factories_from_env``).

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
    run on the first ``backends()`` call)."""
    with STATE.lock:
        if STATE.plugins_registered:
            return
        STATE.plugins_registered = True
    discover_pjrt_plugins()
    register_pjrt_plugin_factories_from_env()


def plugin_errors() -> dict[str, str]:
    """Plugin (or module) name -> why it could not be discovered or registered."""
    with STATE.lock:
        return dict(STATE.plugin_errors)


def plugin_registrations() -> dict[str, PluginRegistration]:
    """Plugin name -> how it was registered (library path, sha256, options)."""
    with STATE.lock:
        return dict(STATE.plugin_registrations)
