"""Finding PJRT plugins: ``jax_plugins`` modules, entry points, the environment
(as ``jax._src.xla_bridge`` finds them).

Pure functions: they find and parse, and report every problem with the plugin
name and the cause. :mod:`runtime.xla_bridge` decides what to register.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import pkgutil
from collections.abc import Mapping
from typing import Any

from runtime._plugin_library import PluginLoadError
from runtime._plugins import validate_options

ENV_VAR = "PJRT_NAMES_AND_LIBRARY_PATHS"
ENTRY_POINT_GROUP = "jax_plugins"
NAMESPACE = "jax_plugins"


def parse_names_and_paths(value: str) -> dict[str, str]:
    """``"name1:path1,name2:path2"`` -> ``{name: path}`` (``;`` on Windows).

    Raises PluginLoadError for an entry without exactly one separator, an empty
    name or path, or a name given twice (jax logs and drops such entries).
    """
    if not value:
        return {}
    sep = os.path.pathsep
    plugins: dict[str, str] = {}
    for entry in value.split(","):
        parts = entry.split(sep)
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise PluginLoadError(parts[0].strip() or "?", None,
                                  f"invalid entry {entry!r} in {ENV_VAR}={value!r}: expected "
                                  f"'name{sep}path' entries separated by ','")
        name, path = parts[0].strip(), parts[1].strip()
        if name in plugins:
            raise PluginLoadError(name, path, f"named twice in {ENV_VAR}={value!r}")
        plugins[name] = path
    return plugins


def read_plugin_config(plugin_name: str, json_path: str) -> tuple[str, dict[str, Any] | None]:
    """``(library_path, create_options)`` from a JSON plugin config file.

    The file holds an object with a required string ``library_path`` and an
    optional object ``create_options`` whose values are str, int, float, bool
    or list of int. A relative ``library_path`` is relative to the file.
    Raises PluginLoadError naming the plugin, the file and the problem.
    """
    try:
        with open(json_path, encoding="utf-8") as f:
            config = json.load(f)
    except OSError as err:
        raise PluginLoadError(plugin_name, json_path, f"cannot read the plugin config: "
                              f"{err.strerror or err}") from err
    except json.JSONDecodeError as err:
        raise PluginLoadError(plugin_name, json_path, f"the plugin config is not valid JSON: "
                              f"{err}") from err
    if not isinstance(config, dict):
        raise PluginLoadError(plugin_name, json_path, "the plugin config must be a JSON object, "
                              f"got {type(config).__name__}")
    library_path = config.get("library_path")
    if not isinstance(library_path, str) or not library_path:
        raise PluginLoadError(plugin_name, json_path, "the plugin config needs a string "
                              f"'library_path' field, got {library_path!r}")
    options = config.get("create_options")
    if options is not None:
        if not isinstance(options, Mapping):
            raise PluginLoadError(plugin_name, json_path, "'create_options' must be a JSON "
                                  f"object, got {type(options).__name__}")
        try:
            options = validate_options("read_plugin_config", options)
        except TypeError as err:
            raise PluginLoadError(plugin_name, json_path, str(err)) from err
    if not os.path.isabs(library_path):
        library_path = os.path.join(os.path.dirname(os.path.abspath(json_path)), library_path)
    return library_path, options


def discover_plugin_modules() -> list[str]:
    """Module names under the ``jax_plugins`` namespace package and in the
    ``jax_plugins`` entry-point group, sorted, without duplicates."""
    names: set[str] = set()
    try:
        namespace = importlib.import_module(NAMESPACE)
    except ModuleNotFoundError:
        namespace = None
    if namespace is not None:
        for info in pkgutil.iter_modules(namespace.__path__, namespace.__name__ + "."):
            names.add(info.name)
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        names.add(entry_point.value.split(":")[0])
    return sorted(names)


def initialize_plugin_module(module_name: str) -> None:
    """Import ``module_name`` and call its ``initialize()``.

    Raises PluginLoadError (plugin = module name) when the import fails, the
    module has no callable ``initialize`` or ``initialize()`` raises.
    """
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # any import-time failure of third-party code
        raise PluginLoadError(module_name, None, f"import failed: {type(err).__name__}: "
                              f"{err}") from err
    initialize = getattr(module, "initialize", None)
    if not callable(initialize):
        raise PluginLoadError(module_name, None, "the plugin module has no initialize() "
                              "function")
    try:
        initialize()
    except Exception as err:  # third-party initialize() may raise anything
        raise PluginLoadError(module_name, None, f"initialize() raised {type(err).__name__}: "
                              f"{err}") from err
