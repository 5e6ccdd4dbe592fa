"""StableHLO programs under test: lowered from jax functions, compiled through runtime.

Programs are lowered with jax for the platform under test and compiled and run
with ``runtime`` (never ``jax.jit`` dispatch). Lowered text is cached per
(program, avals, platform) and executables per (program, avals, device), so
Hypothesis examples of one signature compile once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

from conformance.programs import lowering
from runtime.xla_bridge import client_platform
from runtime.xla_client import HostBufferSemantics, NamedSharding, batched_device_put


@functools.lru_cache(maxsize=4096)
def lowered_text(name: str, fn: Callable[..., Any], avals: tuple[tuple[tuple[int, ...], str], ...],
                 client: Any) -> str:
    """StableHLO text of ``fn`` for ``avals`` ((shape, dtype name), ...) lowered for
    ``client``'s platform (``cuda``/``rocm`` for a GPU client reporting ``gpu``).

    The module is named ``@jit_<name>`` (non-identifier characters as ``_``), so a
    program can be recognised in its text and in the reproduction.
    """
    structs = tuple(jax.ShapeDtypeStruct(shape, np.dtype(dtype)) for shape, dtype in avals)

    def program(*args: Any) -> Any:
        return fn(*args)

    program.__name__ = program.__qualname__ = re.sub(r"\W", "_", name)
    return lowering.lower_to_stablehlo(program, structs, client_platform(client))


class ProgramCache:
    """Compiled executables of one client, keyed by (program, avals, device ids).

    ``compiles`` counts compilations and ``hits`` loads served from the cache, so
    tests can check that the cache works and the report can show both.
    """

    def __init__(self, client: Any):
        self.client = client
        self.compiles = 0
        self.hits = 0
        self._executables: dict[tuple, Any] = {}

    def _load(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
              devices: list[Any]) -> tuple[Any, str]:
        """Lowered text and executable for ``fn`` on ``args`` over ``devices`` (cached)."""
        avals = tuple((tuple(a.shape), np.dtype(a.dtype).name) for a in args)
        text = lowered_text(name, fn, avals, self.client)
        key = (name, fn, avals, tuple(d.id for d in devices))  # fn: one name, two programs
        exe = self._executables.get(key)
        if exe is None:
            exe = self.client.compile_and_load(text, devices)
            self.compiles += 1
            self._executables[key] = exe
        else:
            self.hits += 1
        return exe, text

    def get(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
            device: Any) -> tuple[Any, str]:
        """The loaded executable and its StableHLO text for ``fn`` on ``args``."""
        return self._load(name, fn, args, [device])

    def run(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
            device: Any) -> tuple[list[np.ndarray], str]:
        """Transfer ``args`` to ``device``, execute, return host outputs and the program."""
        exe, text = self.get(name, fn, args, device)
        buffers = [self.client.buffer_from_pyval(
            a, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
            for a in args]
        outs = exe.execute(buffers)
        return [np.asarray(o) for o in outs], text

    def run_replicated(self, name: str, fn: Callable[..., Any], args: list[np.ndarray]
                       ) -> tuple[list[list[tuple[Any, np.ndarray]]], str]:
        """Run ``fn`` on every local device at once; return per-output (device, host) lists.

        One SPMD executable over all local devices (compiled once per signature) takes
        inputs replicated with ``batched_device_put``, so every device computes the whole
        program on its own copy and each device's result is checked separately.
        """
        devices = self.client.local_devices()
        exe, text = self._load(name, fn, args, devices)
        sharding = NamedSharding(Mesh(np.array(devices), ("devices",)), PartitionSpec())
        arrays = [batched_device_put(
            lowering.shaped_array(a.shape, a.dtype), sharding, [a] * len(devices), devices, True,
            False, HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
            for a in args]
        results = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
        return [[(next(iter(o.devices())), np.asarray(o)) for o in per_output]
                for per_output in results], text


def run_everywhere(program_cache: ProgramCache, name: str, fn: Callable[..., Any],
                   args: list[np.ndarray], dt: Any, call: str, *, n_outputs: int = 1
                   ) -> tuple[Any, str]:
    """Outputs of ``fn`` on every local device, one SPMD executable (replicated inputs).

    Returns ([(device, host array)] for a single output, or one such list per output
    when ``n_outputs > 1``) and the StableHLO text. A dtype the platform does not
    support is reported through ``capabilities.gated(dt, call)`` (``dt``: the
    ``dh.DType`` whose capability gates the program). Raises AssertionError when the executable
    returns another number of outputs or devices.
    """
    from conformance.helpers import capabilities

    with capabilities.gated(dt, call):
        per_output, program = program_cache.run_replicated(name, fn, args)
    n = program_cache.client.local_device_count()
    assert len(per_output) == n_outputs and all(len(p) == n for p in per_output), (
        f"execute_sharded returned {len(per_output)} outputs x "
        f"{[len(p) for p in per_output]} devices, but should be {n_outputs} x {n} [{call}]")
    return (per_output[0] if n_outputs == 1 else per_output), program
