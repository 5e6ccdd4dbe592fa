"""Loading PJRT plugins through the C API (the plugin registry: ``load_pjrt_plugin_dynamically``,
``make_c_api_client``...; the factories jax's backend registry makes of them).

Wraps jaxlib's loader so that bad input is a Python error, never a crash:
jaxlib 0.10.2 segfaults in ``initialize_pjrt_plugin`` for a name that was never
loaded and in its loader for a ``GetPjrtApi`` that returns NULL; both are
checked first here. Every failure is :class:`PluginLoadError` naming the
plugin, the path and the cause.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from runtime import _plugin_ffi, _plugin_library
from runtime._client import Client
from runtime._compat import native
from runtime._plugin_library import PluginLibrary, PluginLoadError
from runtime._validate import bad_type

_lock = threading.RLock()
_libraries: dict[str, PluginLibrary] = {}
_c_apis: dict[str, Any] = {}


def _check_name(call: str, plugin_name: Any) -> str:
    if not isinstance(plugin_name, str) or not plugin_name:
        raise bad_type("plugin_name", "a non-empty str", plugin_name, call)
    return plugin_name


def validate_options(call: str, options: Any) -> dict[str, Any]:
    """Copy of ``options`` checked against the value types the xla_client API names.

    Keys must be str; values str, int, float, bool or a list of int
    (``xla_client.make_c_api_client``). Raises TypeError naming the offending key.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise bad_type("options", "a mapping of str to str/int/float/bool/list[int] or None",
                       options, call)
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise bad_type("options", "a mapping with str keys", key, call)
        ok = isinstance(value, (str, int, float, bool)) or (
            isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                            for v in value))
        if not ok:
            raise bad_type(f"options[{key!r}]", "str, int, float, bool or list[int]", value,
                           call)
        checked[key] = list(value) if isinstance(value, list) else value
    return checked


def pjrt_plugin_loaded(plugin_name: str) -> bool:
    """True once a plugin was loaded under ``plugin_name`` (``xla_client.pjrt_plugin_loaded``)."""
    return bool(native.pjrt_plugin_loaded(_check_name("pjrt_plugin_loaded", plugin_name)))


def pjrt_plugin_initialized(plugin_name: str) -> bool:
    """True once ``initialize_pjrt_plugin`` ran for ``plugin_name``; False if not loaded."""
    name = _check_name("pjrt_plugin_initialized", plugin_name)
    return pjrt_plugin_loaded(name) and bool(native.pjrt_plugin_initialized(name))


def load_pjrt_plugin_dynamically(plugin_name: str, library_path: str | os.PathLike) -> Any:
    """Load the plugin library at ``library_path`` under ``plugin_name``
    (``xla_client.load_pjrt_plugin_dynamically``).

    Returns the ``PJRT_Api`` capsule. Loading the same path under the same name
    again returns the first capsule. Raises PluginLoadError naming plugin, path
    and cause: path missing, a directory, unreadable, not a shared library, no
    ``GetPjrtApi``, a NULL or crashing ``GetPjrtApi``, or the name already used
    for another library.
    """
    call = "load_pjrt_plugin_dynamically"
    name = _check_name(call, plugin_name)
    if not isinstance(library_path, (str, os.PathLike)):
        raise bad_type("library_path", "a str or os.PathLike", library_path, call)
    with _lock:
        path = _plugin_library.check_path(name, library_path)
        if name in _libraries:
            if _libraries[name].path == path:
                return _c_apis[name]
            raise PluginLoadError(name, path, f"the name is already loaded from "
                                  f"{_libraries[name].path!r}; use another plugin_name")
        if pjrt_plugin_loaded(name):
            raise PluginLoadError(name, path, "the name is already loaded (by another "
                                  "caller of jaxlib); use another plugin_name")
        library = _plugin_library.probe(name, path)
        try:
            c_api = native.load_pjrt_plugin_dynamically(name, library.path)
        except native.XlaRuntimeError as err:
            raise PluginLoadError(name, library.path, str(err)) from err
        _libraries[name], _c_apis[name] = library, c_api
        return c_api


def load_pjrt_plugin_with_c_api(plugin_name: str, c_api: Any) -> None:
    """Register an already obtained ``PJRT_Api`` capsule under ``plugin_name``
    (``xla_client.load_pjrt_plugin_with_c_api``, as jax's backend registry uses it)."""
    call = "load_pjrt_plugin_with_c_api"
    name = _check_name(call, plugin_name)
    if c_api is None:
        raise bad_type("c_api", "a PJRT_Api capsule", c_api, call)
    with _lock:
        try:
            native.load_pjrt_plugin_with_c_api(name, c_api)
        except (native.XlaRuntimeError, TypeError) as err:
            raise PluginLoadError(name, None, str(err)) from err
        _c_apis[name] = c_api


def initialize_pjrt_plugin(plugin_name: str) -> None:
    """Run the plugin's ``PJRT_Plugin_Initialize`` once (``xla_client.initialize_pjrt_plugin``).

    Raises PluginLoadError when the name was never loaded (jaxlib 0.10.2 would
    segfault), when it is already initialized, or when its PJRT C API version is
    incompatible with the framework's (the cause gives both versions).
    """
    name = _check_name("initialize_pjrt_plugin", plugin_name)
    with _lock:
        if not pjrt_plugin_loaded(name):
            raise PluginLoadError(name, None, "not loaded; call load_pjrt_plugin_dynamically("
                                  "plugin_name, library_path) first")
        try:
            native.initialize_pjrt_plugin(name)
        except native.XlaRuntimeError as err:
            lib = _libraries.get(name)
            raise PluginLoadError(name, lib.path if lib else None, str(err)) from err


def make_c_api_client(plugin_name: str, options: Mapping[str, Any] | None = None,
                      distributed_client: Any = None,
                      transfer_server_factory: Any = None) -> Client:
    """A :class:`Client` of the loaded plugin ``plugin_name`` (``xla_client.make_c_api_client``).

    ``options``: create options of the plugin, str keys to str/int/float/bool/
    list[int] values. Initializes the plugin first if needed (the version check
    happens there). For a ``cpu`` plugin, registers jaxlib's LAPACK and sparse FFI
    targets with it (:mod:`runtime._plugin_ffi`; what could not be registered is
    recorded there, not raised). Raises TypeError for bad options, PluginLoadError when the
    plugin is not loaded, fails to initialize or to create a client.
    """
    call = "make_c_api_client"
    name = _check_name(call, plugin_name)
    opts = validate_options(call, options)
    with _lock:
        if not pjrt_plugin_initialized(name):
            initialize_pjrt_plugin(name)
        try:
            client = Client(native.make_c_api_client(name, opts, distributed_client,
                                                     transfer_server_factory))
        except native.XlaRuntimeError as err:
            lib = _libraries.get(name)
            raise PluginLoadError(name, lib.path if lib else None,
                                  f"client creation failed: {err}") from err
        if client.platform == "cpu" and name in _c_apis:  # jax's linalg/sparse kernels
            _plugin_ffi.register_framework_targets(name, _c_apis[name])
        return client


def loaded_library(plugin_name: str) -> PluginLibrary | None:
    """Path, sha256 and C API version of the library loaded under ``plugin_name``."""
    with _lock:
        return _libraries.get(plugin_name)


def c_api(plugin_name: str) -> Any:
    """The ``PJRT_Api`` capsule loaded under ``plugin_name`` or None."""
    with _lock:
        return _c_apis.get(plugin_name)
