"""StableHLO programs under test: lowered from jax functions, compiled through runtime.

Programs are lowered with jax for the platform under test (:func:`lower`, the one
lowering path, also for sharded programs and the benchmarks) and compiled and run
with ``runtime`` (never ``jax.jit`` dispatch). Lowered text is cached per
(program, avals, platform) and executables per (program, avals, shardings, devices)
in a :class:`ProgramCache`, so Hypothesis examples of one signature compile once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

from conformance.programs import coverage, lowering
from runtime.xla_bridge import client_platform
from runtime.xla_client import HostBufferSemantics, NamedSharding, batched_device_put


Aval = tuple[tuple[int, ...], str]


def avals_of(args: Sequence[Any]) -> tuple[Aval, ...]:
    """``((shape, dtype name), ...)`` of arrays, or of ``(shape, dtype)`` pairs (hashable:
    the cache key of a program's signature). Raises TypeError for anything else."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, tuple) and len(a) == 2:
            shape, dtype = a
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            shape, dtype = a.shape, a.dtype
        else:
            raise TypeError(f"avals_of: argument {i} must be an array or a (shape, dtype) pair, "
                            f"got {type(a).__name__}")
        out.append((tuple(int(d) for d in shape), np.dtype(dtype).name))
    return tuple(out)


def lower(fn: Callable[..., Any], avals: Sequence[Any], platform: str, *,
          name: str | None = None, in_shardings: Sequence[Any] | None = None,
          out_shardings: Any = None, donate: tuple[int, ...] = ()) -> str:
    """StableHLO text of the jax function ``fn`` traced at ``avals`` (arrays or ``(shape,
    dtype)`` pairs, 64-bit dtypes kept) and lowered for ``platform`` (``cpu``, ``cuda``...).

    ``name``: the module is named ``@jit_<name>`` (non-identifier characters as ``_``), so a
    program can be recognised in its text and in the reproduction (None: ``fn``'s name).
    ``in_shardings``/``out_shardings``: jax shardings of the arguments and results (SPMD
    programs); arguments in ``donate`` are donated (``tf.aliasing_output``). Not cached:
    :func:`lowered_text` is the cached form. The one lowering path of the suite and the
    benchmarks.
    """
    structs = tuple(jax.ShapeDtypeStruct(shape, np.dtype(dtype))
                    for shape, dtype in avals_of(avals))
    program = fn
    if name is not None:
        def program(*args: Any) -> Any:
            return fn(*args)

        program.__name__ = program.__qualname__ = re.sub(r"\W", "_", name)
    jit_kwargs: dict[str, Any] = {}
    if in_shardings is not None:
        jit_kwargs["in_shardings"] = tuple(in_shardings)
    if out_shardings is not None:
        jit_kwargs["out_shardings"] = out_shardings
    if donate:
        jit_kwargs["donate_argnums"] = tuple(donate)
    return lowering.lower_to_stablehlo(program, structs, platform, **jit_kwargs)


@functools.lru_cache(maxsize=4096)
def lowered_text(name: str, fn: Callable[..., Any], avals: tuple[Aval, ...], client: Any) -> str:
    """:func:`lower` of ``fn`` for ``avals`` ((shape, dtype name), ...) named ``name``, for
    ``client``'s platform (``cuda``/``rocm`` for a GPU client reporting ``gpu``); cached."""
    return lower(fn, avals, client_platform(client), name=name)


class ProgramCache:
    """Compiled executables of one client, keyed by (program, avals, shardings, device ids).

    ``compiles`` counts compilations and ``hits`` loads served from the cache, so
    tests can check that the cache works and the report can show both. Used by the
    tests (the ``program_cache`` fixture, sharded runners, multi-process workers) and by
    the benchmarks.
    """

    def __init__(self, client: Any):
        self.client = client
        self.compiles = 0
        self.hits = 0
        self._executables: dict[tuple, tuple[Any, str]] = {}

    def _compiled(self, key: tuple, text: Callable[[], str], devices: list[Any]
                  ) -> tuple[Any, str]:
        hit = self._executables.get(key)
        if hit is None:
            program = text()
            hit = self._executables[key] = (self.client.compile_and_load(program, devices),
                                            program)
            self.compiles += 1
        else:
            self.hits += 1
        coverage.note_compiled(hit[1])
        return hit

    def load(self, name: str, fn: Callable[..., Any], avals: Sequence[Any],
             devices: list[Any], donate: tuple[int, ...] = ()) -> tuple[Any, str]:
        """The loaded executable and StableHLO text of ``fn`` at ``avals`` (arrays or
        ``(shape, dtype)`` pairs) over ``devices``, compiled on the first request. ``fn``
        may be StableHLO module text (ops jax does not lower): compiled as written.
        ``donate``: the arguments the program donates (input/output aliasing)."""
        avals = avals_of(avals)
        # fn in the key: one name may be two programs
        key = (name, fn, avals, tuple(d.id for d in devices), tuple(donate))
        if isinstance(fn, str):
            return self._compiled(key, lambda: fn, devices)
        if donate:
            return self._compiled(key, lambda: lower(fn, avals, client_platform(self.client),
                                                     name=name, donate=tuple(donate)), devices)
        return self._compiled(key, lambda: lowered_text(name, fn, avals, self.client), devices)

    def load_sharded(self, name: str, fn: Callable[..., Any], args: Sequence[Any],
                     in_shardings: Sequence[Any], out_sharding: Any) -> tuple[Any, str]:
        """:meth:`load` of an SPMD program with explicit shardings (``out_sharding``: one
        for every output, or a tuple of one per output), over the devices of
        ``in_shardings[0]`` in tile-assignment order. Keyed by ``name`` (not ``fn``:
        sharded programs are built anew for each example), avals, shardings and devices;
        the module is named ``@jit_<name>``."""
        devices = lowering.device_assignment_of(in_shardings[0])
        avals = avals_of(args)
        outs = list(out_sharding) if isinstance(out_sharding, tuple) else [out_sharding]
        key = (name, avals, tuple((tuple(s.mesh.devices.shape), s.mesh.axis_names, str(s.spec))
                                  for s in [*in_shardings, *outs]), len(outs),
               tuple(d.id for d in devices))
        platform = client_platform(self.client)
        return self._compiled(key, lambda: lower(fn, avals, platform, name=name,
                                                 in_shardings=in_shardings,
                                                 out_shardings=out_sharding), devices)

    def get(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
            device: Any) -> tuple[Any, str]:
        """The loaded executable and its StableHLO text for ``fn`` on ``args``."""
        return self.load(name, fn, args, [device])

    def run(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
            device: Any) -> tuple[list[np.ndarray], str]:
        """Transfer ``args`` to ``device``, execute, return host outputs and the program."""
        exe, text = self.get(name, fn, args, device)
        buffers = [self.client.buffer_from_pyval(
            a, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
            for a in args]
        outs = exe.execute(buffers)
        coverage.note_executed(text)
        return [np.asarray(o) for o in outs], text

    def run_replicated(self, name: str, fn: Callable[..., Any], args: list[np.ndarray]
                       ) -> tuple[list[list[tuple[Any, np.ndarray]]], str]:
        """Run ``fn`` on every local device at once; return per-output (device, host) lists.

        One SPMD executable over all local devices (compiled once per signature) takes
        inputs replicated with ``batched_device_put``, so every device computes the whole
        program on its own copy and each device's result is checked separately.
        """
        devices = self.client.local_devices()
        exe, text = self.load(name, fn, args, devices)
        sharding = NamedSharding(Mesh(np.array(devices), ("devices",)), PartitionSpec())
        arrays = [batched_device_put(
            lowering.shaped_array(a.shape, a.dtype), sharding, [a] * len(devices), devices, True,
            False, HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
            for a in args]
        results = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
        coverage.note_executed(text)
        return [[(next(iter(o.devices())), np.asarray(o)) for o in per_output]
                for per_output in results], text


def run_everywhere(program_cache: ProgramCache, name: str, fn: Callable[..., Any],
                   args: list[np.ndarray], dt: Any, call: str, *, n_outputs: int = 1
                   ) -> tuple[Any, str]:
    """Outputs of ``fn`` on every local device, one SPMD executable (replicated inputs).

    Returns ([(device, host array)] for a single output, or one such list per output
    when ``n_outputs > 1``) and the StableHLO text. A dtype the platform does not
    support is reported through ``capabilities.gated(dt, call)`` (``dt``: the
    ``dtype_helpers.DType`` whose capability gates the program). Raises AssertionError
    when the executable returns another number of outputs or devices.
    """
    from conformance.helpers import capabilities

    with capabilities.gated(dt, call):
        per_output, program = program_cache.run_replicated(name, fn, args)
    n = program_cache.client.local_device_count()
    assert len(per_output) == n_outputs and all(len(p) == n for p in per_output), (
        f"execute_sharded returned {len(per_output)} outputs x "
        f"{[len(p) for p in per_output]} devices, but should be {n_outputs} x {n} [{call}]")
    return (per_output[0] if n_outputs == 1 else per_output), program
