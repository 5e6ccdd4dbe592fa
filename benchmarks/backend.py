"""The backend under benchmark and compiled programs for it.

``PJRT_BENCH_PLATFORM`` (default ``cpu``) picks the platform; the CPU client has
``PJRT_BENCH_CPU_DEVICES`` devices (default 8). Programs are jax functions
lowered to StableHLO and compiled through ``runtime`` by the suite's own lowering and
compile cache (:mod:`conformance.programs.cache`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.programs import cache as programs
from conformance.programs.lowering import confine_jax_to_cpu
from runtime import xla_bridge, xla_client
from runtime.xla_bridge import client_platform


@functools.lru_cache(maxsize=1)
def client() -> Any:
    """The runtime ``Client`` under benchmark (one per process)."""
    confine_jax_to_cpu()
    platform = os.environ.get("PJRT_BENCH_PLATFORM", "cpu")
    if platform == "cpu":
        return xla_client.make_cpu_client(
            num_devices=int(os.environ.get("PJRT_BENCH_CPU_DEVICES", "8")))
    return xla_bridge.get_backend(platform)


def device(index: int = 0) -> Any:
    return client().local_devices()[index]


def lowered(fn: Callable[..., Any], *avals: tuple[tuple[int, ...], Any]) -> str:
    """StableHLO text of ``fn`` for ((shape, dtype), ...) on the benchmarked platform,
    lowered anew on every call (``bench_compile`` times it)."""
    return programs.lower(fn, avals, client_platform(client()))


@functools.lru_cache(maxsize=1)
def program_cache() -> programs.ProgramCache:
    """The suite's compile cache for the client under benchmark."""
    return programs.ProgramCache(client())


def compiled(fn: Callable[..., Any], *avals: tuple[tuple[int, ...], Any],
             devices: list[Any] | None = None) -> Any:
    """A ``LoadedExecutable`` of ``fn`` on ``devices`` (default: device 0), from
    :func:`program_cache` (one compilation per function, avals and devices)."""
    name = getattr(fn, "__name__", type(fn).__name__)
    return program_cache().load(name, fn, avals, devices or [device()])[0]


def put(x: np.ndarray, index: int = 0) -> Any:
    """``x`` on device ``index``, copied during the call."""
    return client().buffer_from_pyval(
        x, device(index),
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
