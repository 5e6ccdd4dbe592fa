"""GPU clients on the CUDA/ROCm PJRT plugin through the C API
(``xla_client.make_gpu_client``).

Recent jaxlib has no ``make_gpu_client``; the GPU backend is the
``jax-cuda13-pjrt`` (or ``jax-rocm7-pjrt``) plugin. ``make_gpu_client`` loads it
the way its own package does (its ``jax_plugins`` module's ``initialize()``),
falls back to loading the plugin library by path, and creates the client with
options from :func:`generate_pjrt_gpu_plugin_options`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from runtime import _plugin_discovery, _plugins
from runtime._client import Client
from runtime._plugin_library import PluginLoadError
from runtime._validate import check_node

#: platform -> (jax_plugins modules newest first, library file name, pip package)
GPU_PLUGINS = {
    "cuda": (("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"), "xla_cuda_plugin.so",
             "jax-cuda13-pjrt"),
    "rocm": (("jax_plugins.xla_rocm7", "jax_plugins.xla_rocm60"), "xla_rocm_plugin.so",
             "jax-rocm7-pjrt"),
}
_ALLOCATORS = ("default", "platform", "bfc", "cuda_async", "vmm")
_BOOL_WORDS = {"true": True, "1": True, "false": False, "0": False}


class GpuLibNotLinkedError(Exception):
    """The GPU PJRT plugin is not installed (``xla_client.GpuLibNotLinkedError``)."""


def _env_bool(name: str, default: bool) -> bool:
    raw = os.getenv(name, "")
    if raw == "":
        return default
    if raw.lower() not in _BOOL_WORDS:
        raise ValueError(f"{name} env var must be one of true/false/1/0, got {raw!r}")
    return _BOOL_WORDS[raw.lower()]


def generate_pjrt_gpu_plugin_options() -> dict[str, Any]:
    """Create options of the GPU plugin from the environment
    (``xla_client.generate_pjrt_gpu_plugin_options``).

    Reads ``XLA_PYTHON_CLIENT_ALLOCATOR`` (one of default, platform, bfc,
    cuda_async, vmm), ``XLA_CLIENT_MEM_FRACTION`` (or the deprecated
    ``XLA_PYTHON_CLIENT_MEM_FRACTION``; a float in (0, 1]),
    ``XLA_PYTHON_CLIENT_PREALLOCATE`` (true/false/1/0),
    ``XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB`` (an int >= 0, MiB; the option
    is in bytes). Raises ValueError naming the variable for a bad value, or when
    both memory-fraction variables are set.
    """
    options: dict[str, Any] = {"platform_name": "cuda"}
    allocator = os.getenv("XLA_PYTHON_CLIENT_ALLOCATOR", "default").lower()
    if allocator not in _ALLOCATORS:
        raise ValueError(f"XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of {_ALLOCATORS}, "
                         f"got {allocator!r}")
    options["allocator"] = allocator
    fraction, deprecated = (os.getenv("XLA_CLIENT_MEM_FRACTION", ""),
                            os.getenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ""))
    if fraction and deprecated:
        raise ValueError("XLA_CLIENT_MEM_FRACTION is set together with the deprecated "
                         "XLA_PYTHON_CLIENT_MEM_FRACTION; remove the latter")
    fraction = fraction or deprecated
    if fraction:
        try:
            value = float(fraction)
        except ValueError:
            value = float("nan")
        if not 0.0 < value <= 1.0:
            raise ValueError(f"XLA_CLIENT_MEM_FRACTION env var must be a float in (0, 1], "
                             f"got {fraction!r}")
        options["memory_fraction"] = value
    if os.getenv("XLA_PYTHON_CLIENT_PREALLOCATE", ""):
        options["preallocate"] = _env_bool("XLA_PYTHON_CLIENT_PREALLOCATE", True)
    size_mb = os.getenv("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "")
    if size_mb:
        if not size_mb.isdigit():
            raise ValueError("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB env var must be an int "
                             f">= 0 (MiB), got {size_mb!r}")
        options["collective_memory_size"] = int(size_mb) << 20
    options["abort_collectives_on_failure"] = _env_bool(
        "XLA_PYTHON_CLIENT_ABORT_COLLECTIVES_ON_FAILURE", False)
    return options


def _installed_modules(platform_name: str) -> list[tuple[str, Any]]:
    """(module name, import spec) of each installed ``jax_plugins`` module of the platform,
    found without importing anything."""
    found = []
    for module in GPU_PLUGINS[platform_name][0]:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # no jax_plugins namespace at all
            spec = None
        if spec is not None:
            found.append((module, spec))
    return found


def find_plugin_library(platform_name: str) -> str | None:
    """Path of the installed plugin library for ``cuda``/``rocm``, or None."""
    filename = GPU_PLUGINS[platform_name][1]
    for _, spec in _installed_modules(platform_name):
        for location in spec.submodule_search_locations or ():
            candidate = Path(location) / filename
            if candidate.is_file():
                return str(candidate)
    return None


def gpu_plugin_installed(platform_name: str) -> bool:
    """True when a plugin for ``cuda``/``rocm`` is loaded or its package is installed
    (a cheap check: nothing is imported or loaded)."""
    return _plugins.pjrt_plugin_loaded(platform_name) or bool(_installed_modules(platform_name))


def _load_gpu_plugin(platform_name: str) -> None:
    """Load the plugin under ``platform_name`` unless already loaded."""
    if _plugins.pjrt_plugin_loaded(platform_name):
        return
    package = GPU_PLUGINS[platform_name][2]
    causes = []
    for module, _ in _installed_modules(platform_name):
        try:  # the package's own loader preloads the vendor libraries
            _plugin_discovery.initialize_plugin_module(module)
        except PluginLoadError as err:
            causes.append(str(err))
        if _plugins.pjrt_plugin_loaded(platform_name):
            return
    path = find_plugin_library(platform_name)
    if path is None:
        detail = f" ({'; '.join(causes)})" if causes else ""
        raise GpuLibNotLinkedError(f"make_gpu_client: no {platform_name} PJRT plugin is "
                                   f"installed{detail}. Install {package} on a machine with a "
                                   "GPU, or make a client of another platform "
                                   "(make_cpu_client()).")
    _plugins.load_pjrt_plugin_dynamically(platform_name, path)


def make_gpu_client(distributed_client: Any = None, node_id: int = 0, num_nodes: int = 1,
                    platform_name: str | None = None, allowed_devices: set[int] | None = None,
                    mock: bool | None = None, mock_gpu_topology: str | None = None) -> Client:
    """A GPU :class:`Client` on the CUDA or ROCm PJRT plugin
    (``xla_client.make_gpu_client``).

    ``platform_name``: ``"cuda"`` (default) or ``"rocm"``. ``allowed_devices``:
    device ordinals to use (plugin option ``visible_devices``). ``mock``: fake
    devices without GPUs (``enable_mock_nccl``); ``mock_gpu_topology`` e.g.
    ``"2x2x4"``. Raises GpuLibNotLinkedError when the plugin is not installed,
    ValueError/TypeError for bad arguments, PluginLoadError when it fails to load
    or start (no GPU, driver too old: the plugin's own message).
    """
    call = "make_gpu_client"
    platform = platform_name or "cuda"
    if platform not in GPU_PLUGINS:
        raise ValueError(f"{call}: argument 'platform_name' must be one of "
                         f"{sorted(GPU_PLUGINS)} or None, got {platform_name!r}")
    check_node(call, node_id, num_nodes)
    if allowed_devices is not None and (
            not isinstance(allowed_devices, (set, frozenset, list, tuple))
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                       for d in allowed_devices)):
        raise TypeError(f"{call}: argument 'allowed_devices' must be a set of ints >= 0 or "
                        f"None, got {allowed_devices!r}")
    if mock_gpu_topology is not None and not isinstance(mock_gpu_topology, str):
        raise TypeError(f"{call}: argument 'mock_gpu_topology' must be a str like '2x2x4' or "
                        f"None, got {mock_gpu_topology!r}")
    options = generate_pjrt_gpu_plugin_options()
    options["platform_name"] = platform
    if allowed_devices is not None:
        options["visible_devices"] = sorted(allowed_devices)
    if mock:
        options["enable_mock_nccl"] = True
        if mock_gpu_topology:
            options["mock_gpu_topology"] = mock_gpu_topology
    if distributed_client is not None or num_nodes > 1:
        options["node_id"], options["num_nodes"] = node_id, num_nodes
    _load_gpu_plugin(platform)
    return _plugins.make_c_api_client(platform, options, distributed_client)
