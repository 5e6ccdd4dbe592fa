"""Shared machinery of the mutation operators: wrapped executables, namespaces, perturbations."""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client


def namespace(**overrides: Any) -> types.SimpleNamespace:
    """runtime.xla_client's public names with some replaced."""
    ns = types.SimpleNamespace(**{k: getattr(xc, k) for k in dir(xc) if not k.startswith("_")})
    vars(ns).update(overrides)
    return ns


def program_text(computation: Any) -> str:
    return computation.decode(errors="replace") if isinstance(computation, bytes) else \
        str(computation)


def program_name(computation: Any) -> str:
    """``<name>`` of ``module @jit_<name>`` (the suite's program naming), else ""."""
    m = re.search(r"module @jit_(\w+)", program_text(computation))
    return m.group(1) if m else ""


def put(client: Any, host: np.ndarray, device: Any) -> Any:
    """``host`` on ``device`` through the unbroken Client path."""
    return Client.buffer_from_pyval(client, np.array(host, order="C"), device)


@dataclasses.dataclass(frozen=True)
class Site:
    """Where an output is transformed: the program's name, the device, its index among
    the executable's devices and their count."""

    program: str
    device: Any
    index: int
    count: int


Transform = Callable[[Site, list[np.ndarray], list[np.ndarray]], list[np.ndarray]]


class TransformedExecutable:
    """A loaded executable whose per-device outputs go through ``transform``."""

    def __init__(self, exe: Any, client: Any, program: str, transform: Transform):
        self._exe, self._client, self._program = exe, client, program
        self._transform = transform

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def execute(self, arguments: list[Any]) -> list[Any]:
        raw = self._exe.execute(arguments)
        if not raw:
            return raw
        device = next(iter(raw[0].devices()))
        site = Site(self._program, device, 0, 1)
        outs = self._transform(site, [np.asarray(a) for a in arguments],
                               [np.array(o) for o in raw])
        return [put(self._client, o, next(iter(r.devices()))) for o, r in zip(outs, raw)]

    def execute_sharded(self, arguments: list[Any], with_tokens: bool = False) -> Any:
        return TransformedResults(self._exe.execute_sharded(arguments, with_tokens=with_tokens),
                                  arguments, self)


class TransformedResults:
    """ExecuteResults whose per-device outputs went through the executable's transform."""

    def __init__(self, results: Any, arguments: list[Any], exe: TransformedExecutable):
        self._results, self._args, self._exe = results, arguments, exe

    def disassemble_into_single_device_arrays(self) -> list[list[Any]]:
        per_output = self._results.disassemble_into_single_device_arrays()
        if not per_output:
            return per_output
        inputs = [np.asarray(a) for a in self._args]
        count = len(per_output[0])
        fixed = [[None] * count for _ in per_output]
        for d in range(count):
            device = next(iter(per_output[0][d].devices()))
            site = Site(self._exe._program, device, d, count)
            outs = self._exe._transform(site, inputs, [np.array(o[d]) for o in per_output])
            for i, host in enumerate(outs):
                fixed[i][d] = put(self._exe._client, host, next(iter(per_output[i][d].devices())))
        return fixed

    def consume_token(self) -> Any:
        return self._results.consume_token()


def transforming(transform: Transform, doc: str) -> type:
    """A Client class whose compiled executables transform their outputs."""
    class TransformsOutputs(Client):
        def compile_and_load(self, computation, executable_devices, compile_options=None,
                             *args, **kwargs):
            exe = super().compile_and_load(computation, executable_devices, compile_options,
                                           *args, **kwargs)
            return TransformedExecutable(exe, self, program_name(computation), transform)
    TransformsOutputs.__doc__ = doc
    return TransformsOutputs


def adjusting_puts(adjust: Callable[..., tuple], doc: str) -> type:
    """A Client class whose ``buffer_from_pyval(argument, device, force_copy, semantics)``
    passes ``adjust(client, argument, device, force_copy, semantics)`` (the same four,
    changed) to the unbroken one."""
    class AdjustsPuts(Client):
        def buffer_from_pyval(self, argument, device=None, force_copy=False,
                              host_buffer_semantics=None):
            return super().buffer_from_pyval(*adjust(self, argument, device, force_copy,
                                                     host_buffer_semantics))
    AdjustsPuts.__doc__ = doc
    return AdjustsPuts


def rewriting(name: str, mutation: Any, doc: str) -> type:
    """A Client class that compiles ``program`` rewritten by ``mutation`` (a
    :class:`tests.mutants.stablehlo_rewrite.Mutation`) instead of it, for mutant ``name``. Each
    compile is logged (:mod:`tests.mutants.rewrite_log`); a rewrite that selects
    operations but changes nothing raises :class:`~tests.mutants.stablehlo_rewrite.NoOpRewrite`
    (logged, so the runner reports the mutant as an error, not as killed)."""
    from tests.mutants import stablehlo_rewrite, rewrite_log

    class RewritesPrograms(Client):
        def compile_and_load(self, computation, executable_devices, compile_options=None,
                             *args, **kwargs):
            program = program_name(computation)
            try:
                changed = stablehlo_rewrite.apply(computation, mutation, name)
            except stablehlo_rewrite.NoOpRewrite as err:
                rewrite_log.record(name, program, rewrite_log.NO_OP, str(err))
                raise
            except Exception as err:
                rewrite_log.record(name, program, rewrite_log.FAILED,
                                   f"{type(err).__name__}: {err}")
                raise
            rewrite_log.record(name, program, rewrite_log.SKIPPED if changed is None
                               else rewrite_log.CHANGED)
            return super().compile_and_load(computation if changed is None else changed,
                                            executable_devices, compile_options, *args, **kwargs)
    RewritesPrograms.__doc__ = doc
    RewritesPrograms.mutation = mutation
    return RewritesPrograms


def ulp_up(x: np.ndarray, n: int) -> np.ndarray:
    """Every finite float element moved ``n`` representable values up (toward the largest
    finite value: fp8 types without infinities have no inf to aim at)."""
    import ml_dtypes

    y, top = x, np.full_like(x, ml_dtypes.finfo(x.dtype).max)
    for _ in range(n):
        y = np.nextafter(y, top)
    return np.where(np.isfinite(x), y, x).astype(x.dtype)


def perturb(x: np.ndarray) -> np.ndarray:
    """Scaled by 1 + 2**-9, then 64 ULP up: beyond the ULP table and every error bound."""
    with np.errstate(over="ignore", invalid="ignore"):
        return ulp_up((x * (1 + 2.0**-9)).astype(x.dtype), 64)


def is_float(x: np.ndarray) -> bool:
    from conformance.helpers import dtype_helpers

    return x.dtype in {d.dtype for d in dtype_helpers.TRANSFER_DTYPES if d.kind == "float"}


def wrong_value(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` (any dtype) with every element wrong: floats perturbed (NaN -> 0),
    complex real parts perturbed, integers + 1 (wrapping), bools flipped."""
    if is_float(x):
        return perturb(np.where(np.isnan(x.astype(np.float32)), 0, x).astype(x.dtype))
    if x.dtype.kind == "c":
        z = x.copy()
        z.real = perturb(np.nan_to_num(x.real, nan=1.0))
        return z
    if x.dtype == np.bool_:
        return ~x
    if x.dtype.kind in "iu":
        with np.errstate(over="ignore"):
            return (x + np.ones((), x.dtype)).astype(x.dtype)
    return x


def wrong_at(x: np.ndarray, flat_mask: np.ndarray) -> np.ndarray:
    """``x`` with the elements at the True entries of the flat mask made wrong."""
    if not flat_mask.any():
        return x
    out = np.array(x, copy=True).reshape(-1)
    out[flat_mask] = wrong_value(out[flat_mask])
    return out.reshape(x.shape)
