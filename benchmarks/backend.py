"""The backend under benchmark and compiled programs for it.

``PJRT_BENCH_PLATFORM`` (default ``cpu``) picks the platform; the CPU client has
``PJRT_BENCH_CPU_DEVICES`` devices (default 8). Programs are jax functions
lowered to StableHLO and compiled through ``runtime`` by the suite's own lowering and
compile cache (:mod:`conformance.programs.compiled_programs`).

Every function takes an optional ``era``: a key of :data:`ERAS` (the asv parameter
``backend`` of ``bench_eras``); ``None`` is the platform under benchmark.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.programs.lowering import confine_jax_to_cpu
from runtime import xla_bridge, xla_client
from runtime.xla_bridge import client_platform

# asv runs these benchmarks against the suite installed at each benchmarked commit; the
# commits before the compile cache was named conformance.programs.compiled_programs have
# it as conformance.programs.cache (same lower and ProgramCache).
compiled_programs = importlib.import_module(
    "conformance.programs.compiled_programs"
    if importlib.util.find_spec("conformance.programs.compiled_programs")
    else "conformance.programs.cache")


def _xla_cpu_pjrt() -> str:
    spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    if spec is None:
        raise ModuleNotFoundError("xla_plugins.xla_cpu_pjrt")
    return os.path.join(spec.submodule_search_locations[0], "xla_cpu_pjrt.so")


# The asv parameter ``backend``: XLA CPU of three eras as PJRT plugins (pip packages of
# the ``plugins`` extra; the C API version each implements), and jaxlib's built-in
# client. Value: a function giving the plugin's library path (None: built-in).
ERAS: dict[str, Callable[[], str] | None] = {
    "jaxlib-builtin": None,
    "xla-cpu-pjrt": _xla_cpu_pjrt,  # 0.0.1, C API 0.81
    "fastatomstruct-xla-cpu":  # 2026.6.23, C API 0.106
        lambda: importlib.import_module("fastatomstruct_xla_cpu").library_path(),
    "lammps-jax-pjrt-cpu":  # 0.11.2, C API 0.115
        lambda: str(importlib.import_module("lammps_jax_pjrt_cpu").PLUGIN_PATH),
}


def client(era: str | None = None) -> Any:
    """The runtime ``Client`` under benchmark (one per process and era).

    Raises ValueError for an unknown ``era`` and NotImplementedError (asv's skip) when
    the era's plugin is not installed or does not load with this jaxlib.
    """
    return _client(era)  # client() and client(None): one cache entry


@functools.lru_cache(maxsize=None)
def _client(era: str | None) -> Any:
    confine_jax_to_cpu()
    if era is not None and era not in ERAS:
        raise ValueError(f"era: expected one of {sorted(ERAS)}, got {era!r}")
    locate = ERAS.get(era) if era else None
    if locate is not None:
        try:
            library = locate()
        except ImportError as err:
            raise NotImplementedError(f"{era} is not installed ({err}); "
                                      "pip install -e '.[plugins]'") from err
        name = "bench_" + era.replace("-", "_")
        try:
            xla_client.load_pjrt_plugin_dynamically(name, library)
            return xla_client.make_c_api_client(name)
        except Exception as err:  # PluginLoadError, or the client's own error
            raise NotImplementedError(f"{era} does not load here: {err}") from err
    platform = os.environ.get("PJRT_BENCH_PLATFORM", "cpu")
    if platform == "cpu":
        return xla_client.make_cpu_client(
            num_devices=int(os.environ.get("PJRT_BENCH_CPU_DEVICES", "8")))
    return xla_bridge.get_backend(platform)


def device(index: int = 0, era: str | None = None) -> Any:
    return client(era).local_devices()[index]


def lowered(fn: Callable[..., Any], *avals: tuple[tuple[int, ...], Any]) -> str:
    """StableHLO text of ``fn`` for ((shape, dtype), ...) on the benchmarked platform,
    lowered anew on every call (``bench_compile`` times it)."""
    return compiled_programs.lower(fn, avals, client_platform(client()))


def program_cache(era: str | None = None) -> compiled_programs.ProgramCache:
    """The suite's compile cache for the client under benchmark."""
    return _program_cache(era)


@functools.lru_cache(maxsize=None)
def _program_cache(era: str | None) -> compiled_programs.ProgramCache:
    return compiled_programs.ProgramCache(client(era))


def compiled(fn: Callable[..., Any], *avals: tuple[tuple[int, ...], Any],
             devices: list[Any] | None = None, era: str | None = None) -> Any:
    """A ``LoadedExecutable`` of ``fn`` on ``devices`` (default: device 0), from
    :func:`program_cache` (one compilation per function, avals and devices)."""
    name = getattr(fn, "__name__", type(fn).__name__)
    return program_cache(era).load(name, fn, avals, devices or [device(0, era)])[0]


def put(x: np.ndarray, index: int = 0, era: str | None = None) -> Any:
    """``x`` on device ``index``, copied during the call."""
    return client(era).buffer_from_pyval(
        x, device(index, era),
        host_buffer_semantics=xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)


def require_memory(nbytes: int, copies: int = 4) -> None:
    """Skip (asv: NotImplementedError) when the machine has less than ``copies`` x
    ``nbytes`` of available memory."""
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        available = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return
    if available < copies * nbytes:
        raise NotImplementedError(f"needs {copies * nbytes >> 20} MiB, "
                                  f"{available >> 20} MiB available")
