"""StableHLO programs under test: lowered from jax functions, compiled through runtime.

Programs are lowered with jax for the platform under test and compiled and run
with ``runtime`` (never ``jax.jit`` dispatch). Lowered text is cached per
(program, avals, platform) and executables per (program, avals, device), so
Hypothesis examples of one signature compile once.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from runtime import _compat
from runtime._platforms import client_platform
from runtime.xla_client import HostBufferSemantics, NamedSharding, batched_device_put


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (StableHLO ``divide`` on integers)."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(q.dtype)).astype(a.dtype)


@dataclasses.dataclass(frozen=True)
class Elementwise:
    """An elementwise StableHLO op and its NumPy reference.

    ``kinds``: dtype kinds the op accepts. ``exact``: IEEE or two's complement
    defines the result exactly (compared with zero rtol). ``domain``: float input
    range (None: +-1e3). ``atol_scale``: absolute tolerance in units of rtol, for
    results near zero. ``int_reference``: reference for integer dtypes if it
    differs from ``reference``.
    """

    name: str
    fn: Callable[..., Any]
    arity: int
    reference: Callable[..., np.ndarray]
    kinds: tuple[str, ...]
    exact: bool = True
    domain: tuple[float, float] | None = None
    atol_scale: float = 1.0
    returns_bool: bool = False
    int_reference: Callable[..., np.ndarray] | None = None


_NUM = ("int", "uint", "float", "complex")
_ORDERED = ("int", "uint", "float")

ELEMENTWISE: dict[str, Elementwise] = {op.name: op for op in [
    Elementwise("add", lax.add, 2, np.add, _NUM),
    Elementwise("subtract", lax.sub, 2, np.subtract, _NUM),
    Elementwise("multiply", lax.mul, 2, np.multiply, _NUM),
    Elementwise("divide", lax.div, 2, np.divide, _NUM, int_reference=_trunc_divide),
    Elementwise("maximum", lax.max, 2, np.maximum, _ORDERED),
    Elementwise("minimum", lax.min, 2, np.minimum, _ORDERED),
    Elementwise("negate", lax.neg, 1, np.negative, _NUM),
    Elementwise("abs", lax.abs, 1, np.abs, ("int", "float", "complex"), exact=False),
    Elementwise("exp", lax.exp, 1, np.exp, ("float",), exact=False, domain=(-10, 10)),
    Elementwise("log", lax.log, 1, np.log, ("float",), exact=False, domain=(1e-3, 1e3)),
    Elementwise("sqrt", lax.sqrt, 1, np.sqrt, ("float",), domain=(0, 1e3)),
    Elementwise("sin", lax.sin, 1, np.sin, ("float",), exact=False, domain=(-30, 30),
                atol_scale=32),
    Elementwise("cos", lax.cos, 1, np.cos, ("float",), exact=False, domain=(-30, 30),
                atol_scale=32),
    Elementwise("tanh", lax.tanh, 1, np.tanh, ("float",), exact=False, domain=(-10, 10)),
    Elementwise("compare_eq", lax.eq, 2, np.equal, _NUM + ("bool",), returns_bool=True),
    Elementwise("compare_ne", lax.ne, 2, np.not_equal, _NUM + ("bool",), returns_bool=True),
    Elementwise("compare_lt", lax.lt, 2, np.less, _ORDERED, returns_bool=True),
    Elementwise("compare_le", lax.le, 2, np.less_equal, _ORDERED, returns_bool=True),
    Elementwise("compare_gt", lax.gt, 2, np.greater, _ORDERED, returns_bool=True),
    Elementwise("compare_ge", lax.ge, 2, np.greater_equal, _ORDERED, returns_bool=True),
]}


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
    return _compat.lower_to_stablehlo(program, structs, client_platform(client))


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
            _compat.shaped_array(a.shape, a.dtype), sharding, [a] * len(devices), devices, True,
            False, HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, **_compat.device_put_kwargs())
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
    from conformance import capabilities

    with capabilities.gated(dt, call):
        per_output, program = program_cache.run_replicated(name, fn, args)
    n = program_cache.client.local_device_count()
    assert len(per_output) == n_outputs and all(len(p) == n for p in per_output), (
        f"execute_sharded returned {len(per_output)} outputs x "
        f"{[len(p) for p in per_output]} devices, but should be {n_outputs} x {n} [{call}]")
    return (per_output[0] if n_outputs == 1 else per_output), program
