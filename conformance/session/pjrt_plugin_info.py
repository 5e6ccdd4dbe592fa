"""How the backend under test was loaded, and the PJRT C API versions on both sides.

jaxlib exposes the plugin's C API version on the client
(``pjrt_c_api_major_version``/``minor``) but not its own; it logs both when it
initializes a plugin ("The PJRT plugin has PJRT API version X.Y. The framework
PJRT API version is A.B."). :func:`framework_api_version` reads that line from a
child process that loads the library, so the report can state both.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from pathlib import Path
from typing import Any

from conformance.processes import runner
from runtime import plugin_support, versions, xla_bridge

_LOG_LINE = re.compile(r"plugin has PJRT API version (\d+)\.(\d+)\. The framework PJRT API "
                       r"version is (\d+)\.(\d+)")
#: The child that loads the library (a module: :mod:`conformance.session.pjrt_plugin_probe`).
_CHILD = runner.Module("conformance.session.pjrt_plugin_probe")
#: Python distributions of known plugins (checked with check_plugin_version).
PLUGIN_DISTRIBUTIONS = {"cuda": ("jax-cuda13-pjrt", "jax-cuda12-pjrt"),
                        "rocm": ("jax-rocm7-pjrt", "jax-rocm60-pjrt")}


@functools.lru_cache(maxsize=None)
def framework_api_version(library_path: str, timeout: float = 120.0) -> tuple[int, int] | None:
    """``(major, minor)`` C API version jaxlib was built with, read from jaxlib's log
    while it initializes ``library_path`` in a child process; None when the line
    is absent (log format changed, library failed before initialization)."""
    proc = runner.run_python(_CHILD, [library_path], timeout=timeout,
                             env=runner.child_env({"TF_CPP_MIN_LOG_LEVEL": "0"}))
    if proc.timed_out:
        return None
    match = _LOG_LINE.search(proc.stderr)
    return (int(match.group(3)), int(match.group(4))) if match else None


def version_findings(plugin: tuple[int, int] | None,
                     framework: tuple[int, int] | None) -> list[str]:
    """Warnings about a plugin/framework C API version pair (empty when equal or unknown).

    A different major version is an error (jaxlib refuses to initialize the
    plugin); an older plugin minor means newer API functions are missing; a
    newer plugin minor means the plugin offers functions jaxlib cannot use.
    """
    if plugin is None or framework is None or plugin == framework:
        return []
    if plugin[0] != framework[0]:
        return [f"error: plugin PJRT C API major version {plugin[0]} differs from the "
                f"framework's {framework[0]}"]
    side = "older" if plugin[1] < framework[1] else "newer"
    return [f"warning: plugin PJRT C API {plugin[0]}.{plugin[1]} is {side} than the "
            f"framework's {framework[0]}.{framework[1]}"]


def _package_version_check(platform: str) -> dict[str, Any] | None:
    for dist in PLUGIN_DISTRIBUTIONS.get(platform, ()):
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        return {"distribution": dist, "version": version,
                "compatible": plugin_support.check_plugin_version(dist, versions.JAXLIB_VERSION,
                                                                  version)}
    return None


def library_distribution(library_path: str | None) -> dict[str, Any] | None:
    """The installed Python distribution whose RECORD lists the file ``library_path``
    (a plugin loaded with ``--plugin-library`` from a wheel's package), as
    ``{"distribution": name, "version": version, "compatible": None}`` (``compatible``:
    no jaxlib version rule is known for an arbitrary distribution); None for None, a
    path that no installed distribution lists, or one that does not exist. Raises
    TypeError for a ``library_path`` that is not a string."""
    if library_path is None:
        return None
    if not isinstance(library_path, str):
        raise TypeError(f"argument 'library_path': expected a str or None, got "
                        f"{type(library_path).__name__}")
    target = Path(library_path).resolve()
    owner = _owning_distribution(target) if target.is_file() else None
    if owner is None:
        return None
    return {"distribution": owner[0], "version": owner[1], "compatible": None}


@functools.lru_cache(maxsize=None)
def _owning_distribution(target: Path) -> tuple[str, str] | None:
    """(name, version) of the distribution whose RECORD lists the resolved file
    ``target``, looked up once per file (it reads every installed RECORD until one
    lists it); None when none does."""
    for dist in importlib.metadata.distributions():
        try:
            relative = target.relative_to(Path(dist.locate_file("")).resolve()).as_posix()
        except ValueError:
            continue
        if any(str(f) == relative for f in dist.files or ()):
            return dist.metadata["Name"], dist.version
    return None


def describe_plugin(client: Any, spec: Any) -> dict[str, Any]:
    """Report fields on how the backend was loaded (see docs/report-schema.md)."""
    plugin_version = xla_bridge.backend_pjrt_c_api_version(client)
    reg = xla_bridge.plugin_registrations().get(spec.platform)
    loaded: dict[str, Any] = {"how": "built-in factory", "source": None}
    if reg is not None:
        loaded = {"how": "PJRT C API plugin", "source": reg.source, "options": reg.options,
                  "library_path": reg.library.path if reg.library else None,
                  "library_sha256": reg.library.sha256 if reg.library else None,
                  "library_size_bytes": reg.library.size_bytes if reg.library else None}
    elif plugin_version is not None:
        path = xla_bridge.gpu_plugin_library(spec.platform)
        loaded = {"how": "PJRT C API plugin", "source": "built-in factory",
                  "library_path": path, "library_sha256": xla_bridge.library_sha256(path) if path else None}
    return {
        "loaded": loaded,
        "using_pjrt_c_api": xla_bridge.using_pjrt_c_api(client),
        "pjrt_c_api_version": list(plugin_version) if plugin_version else None,
        "plugin_package": (_package_version_check(spec.platform)
                           or library_distribution(loaded.get("library_path"))),
        "plugin_errors": xla_bridge.plugin_errors(),
        "platform_list": xla_bridge.platforms(),
    }


def with_framework_version(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` (from :func:`describe_plugin`) plus ``framework_pjrt_c_api_version`` and
    ``version_findings``. A child process loads the plugin library for this, so it is
    done once, by the process that writes the report, not in every xdist worker."""
    path = (info.get("loaded") or {}).get("library_path")
    framework = framework_api_version(path) if path else None
    plugin = tuple(info["pjrt_c_api_version"]) if info.get("pjrt_c_api_version") else None
    return {**info, "framework_pjrt_c_api_version": list(framework) if framework else None,
            "version_findings": version_findings(plugin, framework)}
