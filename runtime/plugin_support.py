"""Plugin Python packages and their versions (``jaxlib.plugin_support``:
``import_from_plugin``, ``check_plugin_version``).

``import_from_plugin("cuda", "_triton")`` imports a submodule of the installed
GPU plugin package (``jax_cuda13_plugin``, ``jax_cuda12_plugin``; ``rocm``:
``jax_rocm7_plugin``, ``jax_rocm60_plugin``), checking that its version matches
jaxlib's.
"""

from __future__ import annotations

import importlib
import re
import warnings
from types import ModuleType

from runtime.versions import JAXLIB_VERSION
# The framework-registered FFI targets of plugin clients (runtime._plugin_ffi), public here:
# the marker that starts the message of a target the framework could not give a plugin
# client, the reason for an error naming one, and each plugin's registrations.
from runtime._plugin_ffi import (FRAMEWORK_MARKER, missing_target_reason,  # noqa: F401
                                 registrations)

#: Plugin name -> Python packages that provide it, newest first.
PLUGIN_MODULE_NAMES = {
    "cuda": ("jax_cuda13_plugin", "jax_cuda12_plugin"),
    "rocm": ("jax_rocm7_plugin", "jax_rocm60_plugin"),
}
_VERSION_PREFIX = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def _release(call: str, arg: str, version: str) -> tuple[int, ...]:
    if not isinstance(version, str):
        raise TypeError(f"{call}: argument '{arg}' must be a version str, got {version!r}")
    match = _VERSION_PREFIX.match(version)
    if match is None:
        raise ValueError(f"{call}: argument '{arg}' must start with a dotted version number "
                         f"such as '0.10.2', got {version!r}")
    return tuple(int(x) for x in match.group(0).split("."))


def check_plugin_version(plugin_name: str, jaxlib_version: str, plugin_version: str) -> bool:
    """True when the plugin's release number equals jaxlib's
    (``jaxlib.plugin_support.check_plugin_version``).

    Only the leading dotted numbers are compared (``0.10.2.dev1`` == ``0.10.2``).
    ROCm plugins are exempt (their pip constraints pin jaxlib) and always True.
    On a mismatch, warns (RuntimeWarning) and returns False. Raises
    TypeError/ValueError for a version that is not a str or has no number.
    """
    call = "check_plugin_version"
    if not isinstance(plugin_name, str):
        raise TypeError(f"{call}: argument 'plugin_name' must be a str, got {plugin_name!r}")
    jax_release = _release(call, "jaxlib_version", jaxlib_version)
    plugin_release = _release(call, "plugin_version", plugin_version)
    if any(rocm in plugin_name for rocm in PLUGIN_MODULE_NAMES["rocm"]):
        return True
    if jax_release != plugin_release:
        warnings.warn(f"PJRT plugin {plugin_name} version {plugin_version} is installed, but it "
                      f"is not compatible with the installed jaxlib version {jaxlib_version}, "
                      "so it will not be used.", RuntimeWarning, stacklevel=2)
        return False
    return True


def import_from_plugin(plugin_name: str, submodule_name: str, *,
                       check_version: bool = True) -> ModuleType | None:
    """``<package>.<submodule_name>`` of the first installed package of ``plugin_name``.

    Returns None when no package is installed, or (with ``check_version``) when
    its ``version.__version__`` differs from jaxlib's (with a RuntimeWarning).
    Raises ValueError for a plugin name other than ``cuda``/``rocm``.
    """
    if plugin_name not in PLUGIN_MODULE_NAMES:
        raise ValueError(f"import_from_plugin: argument 'plugin_name' must be one of "
                         f"{sorted(PLUGIN_MODULE_NAMES)}, got {plugin_name!r}")
    for package in PLUGIN_MODULE_NAMES[plugin_name]:
        try:
            module = importlib.import_module(f"{package}.{submodule_name}")
        except ImportError:
            continue
        if not check_version:
            return module
        try:
            version = importlib.import_module(f"{package}.version").__version__
        except (ImportError, AttributeError):
            return module
        if check_plugin_version(package, JAXLIB_VERSION, version):
            return module
    return None
