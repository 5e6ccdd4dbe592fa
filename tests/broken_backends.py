"""Deliberately broken backends: the suite must fail on each of them.

Loaded as a conftest by ``test_broken_backend.py``; each registers itself
through ``runtime.xla_bridge.register_backend_factory``.
"""

import functools

import numpy as np

from runtime import xla_bridge, xla_client
from runtime._client import Client
from runtime._compat import native


class FlipOneElement(Client):
    """buffer_from_pyval stores a copy whose first element has its lowest bit flipped."""

    def buffer_from_pyval(self, argument, device=None, force_copy=False,
                          host_buffer_semantics=None):
        host = np.array(argument, copy=True)
        if host.size and host.dtype.itemsize in (1, 2, 4, 8) and host.dtype != np.bool_:
            flat = host.reshape(-1).view(f"u{host.dtype.itemsize}")
            flat[0] ^= 1
        elif host.size and host.dtype == np.bool_:
            host.reshape(-1)[0] = ~host.reshape(-1)[0]
        return super().buffer_from_pyval(host, device, force_copy, host_buffer_semantics)


class WrongDtype(Client):
    """buffer_from_pyval silently converts every array to float32."""

    def buffer_from_pyval(self, argument, device=None, force_copy=False,
                          host_buffer_semantics=None):
        host = np.asarray(argument).astype(np.float32)
        return super().buffer_from_pyval(host, device, force_copy, host_buffer_semantics)


class _OffByOneExecutable:
    def __init__(self, exe, client):
        self._exe, self._client = exe, client

    def execute(self, arguments):
        outs = self._exe.execute(arguments)
        bad = []
        for out in outs:
            host = np.array(out)
            if host.size and host.dtype.kind in "iuf":
                host.reshape(-1)[0] += 1
            bad.append(Client.buffer_from_pyval(self._client, host, list(out.devices())[0]))
        return bad


class _OffByOneResults:
    """ExecuteResults whose last device's outputs are off by one."""

    def __init__(self, results, client):
        self._results, self._client = results, client

    def disassemble_into_single_device_arrays(self):
        per_output = self._results.disassemble_into_single_device_arrays()
        out = []
        for arrays in per_output:
            host = np.array(arrays[-1])
            if host.size and host.dtype.kind in "iuf":
                host.reshape(-1)[0] += 1
            bad = Client.buffer_from_pyval(self._client, host, list(arrays[-1].devices())[0])
            out.append(list(arrays[:-1]) + [bad])
        return out

    def consume_token(self):
        return self._results.consume_token()


def _execute_sharded(self, arguments, with_tokens=False):
    return _OffByOneResults(self._exe.execute_sharded(arguments, with_tokens=with_tokens),
                            self._client)


_OffByOneExecutable.execute_sharded = _execute_sharded


def _loads_off_by_one(method):
    """``Client.<method>`` whose executables add 1 to their outputs' first element."""
    def load(self, *args, **kwargs):
        return _OffByOneExecutable(getattr(Client, method)(self, *args, **kwargs), self)
    return load


class OffByOneExecute(Client):
    """Executables add 1 to the first element of every numeric output."""

    compile_and_load = _loads_off_by_one("compile_and_load")


class WrongProcessIndex(Client):
    """Claims to be process 1 of a single-process client (its devices say process 0)."""

    def process_index(self):
        return 1


BROKEN = {"broken-flip": FlipOneElement, "broken-dtype": WrongDtype,
          "broken-execute": OffByOneExecute, "broken-process-index": WrongProcessIndex,
          "healthy-control": Client}



def _register(classes):
    """Register each Client subclass as a platform over a 2-device CPU client."""
    for name, cls in classes.items():
        xla_bridge.register_backend_factory(
            name, (lambda c: lambda: c(native.make_cpu_client(num_devices=2)))(cls),
            priority=-1)


_register(BROKEN)


# -- copy semantics and sharding: the module-level functions of the seed API -----------------

import re  # noqa: E402
import types  # noqa: E402

from runtime import xla_client as _xc  # noqa: E402

_SEM = _xc.ArrayCopySemantics


def _namespace(**overrides):
    """runtime.xla_client with some functions replaced."""
    ns = types.SimpleNamespace(**{k: getattr(_xc, k) for k in dir(_xc) if not k.startswith("_")})
    vars(ns).update(overrides)
    return ns


def _rolled_reorder(x, dst, semantics):
    from conformance.helpers import sharding_helpers as shh

    out = _xc.reorder_shards(x, dst, semantics)
    return shh.put_sharded(np.roll(np.asarray(out), 1), dst)


def _swap_semantics(old, new):
    def reorder(x, dst, semantics):
        return _xc.reorder_shards(x, dst, new if semantics == old else semantics)

    def copy(arrays, device_lists, shardings, semantics):
        return _xc.batched_copy_array_to_devices_with_sharding(
            arrays, device_lists, shardings, [new if s == old else s for s in semantics])
    return {"reorder_shards": reorder, "batched_copy_array_to_devices_with_sharding": copy}


def _rotated_put(aval, sharding, xs, devices, *args, **kwargs):
    return _xc.batched_device_put(aval, sharding, list(xs[1:]) + list(xs[:1]), devices, *args,
                                  **kwargs)


class RotatedPut(Client):
    """batched_device_put puts each shard on the next device."""

    xla_client = property(lambda self: _namespace(batched_device_put=_rotated_put))


class WrongReorder(Client):
    """reorder_shards returns the data rotated by one element."""

    xla_client = property(lambda self: _namespace(reorder_shards=_rolled_reorder))


class IgnoresDonation(Client):
    """DONATE_INPUT behaves as REUSE_INPUT: the input survives."""

    xla_client = property(lambda self: _namespace(**_swap_semantics(_SEM.DONATE_INPUT,
                                                                     _SEM.REUSE_INPUT)))


class AliasesOnAlwaysCopy(Client):
    """ALWAYS_COPY behaves as REUSE_INPUT: the result may share the input's buffers."""

    xla_client = property(lambda self: _namespace(**_swap_semantics(_SEM.ALWAYS_COPY,
                                                                     _SEM.REUSE_INPUT)))


def _copy_keeping_memory_kind(arrays, device_lists, shardings, semantics):
    kept = [s.with_memory_kind(a.sharding.memory_kind) for a, s in zip(arrays, shardings)]
    return _xc.batched_copy_array_to_devices_with_sharding(arrays, device_lists, kept, semantics)


class IgnoresMemoryKind(Client):
    """Copies stay in the source's memory kind whatever the destination asks for."""

    xla_client = property(lambda self: _namespace(
        batched_copy_array_to_devices_with_sharding=_copy_keeping_memory_kind))


def _singleton_groups(match):
    ids = [int(v) for v in re.findall(r"\d+", match.group(1))]
    groups = ", ".join(f"[{i}]" for i in ids)
    return f"replica_groups = dense<[{groups}]> : tensor<{len(ids)}x1xi64>"


class AllReduceDropsDevices(Client):
    """all_reduce programs are rewritten so that every device reduces alone."""

    def compile_and_load(self, computation, executable_devices, compile_options=None,
                         host_callbacks=()):
        text = computation if isinstance(computation, str) else computation.decode()
        if "stablehlo.all_reduce" in text:
            text = re.sub(r"replica_groups = dense<(\[\[.*?\]\])> : tensor<\d+x\d+xi64>",
                          _singleton_groups, text)
        return super().compile_and_load(text, executable_devices, compile_options,
                                        host_callbacks)


class DropsAliasing(Client):
    """Programs lose their input/output aliasing: donated inputs survive execution."""

    def compile_and_load(self, computation, executable_devices, compile_options=None,
                         host_callbacks=()):
        text = computation if isinstance(computation, str) else computation.decode()
        text = re.sub(r",?\s*tf\.aliasing_output = \d+ : i32", "", text)
        return super().compile_and_load(text, executable_devices, compile_options,
                                        host_callbacks)


_register({"broken-put": RotatedPut, "broken-reorder": WrongReorder,
          "broken-donate": IgnoresDonation,
          "broken-always-copy": AliasesOnAlwaysCopy,
          "broken-memory-kind": IgnoresMemoryKind,
          "broken-all-reduce": AllReduceDropsDevices,
          "broken-aliasing": DropsAliasing})


# -- seed API areas: executables, types, custom calls, client, fuzz ---------------------------

import os  # noqa: E402

from runtime._compat import native_jax as _native_jax  # noqa: E402
import signal  # noqa: E402


class BreaksSerialization(Client):
    """Executables loaded from serialized bytes compute results off by one."""

    deserialize_executable = _loads_off_by_one("deserialize_executable")


def _f16_as_bf16(dtype):
    etype = _xc.dtype_to_etype(dtype)
    return _xc.PrimitiveType.BF16 if etype == _xc.PrimitiveType.F16 else etype


class WrongPrimitiveType(Client):
    """dtype_to_etype maps float16 to BF16."""

    xla_client = property(lambda self: _namespace(dtype_to_etype=_f16_as_bf16))


class ForgetsCustomCalls(Client):
    """custom_call_targets lists nothing."""

    xla_client = property(lambda self: _namespace(custom_call_targets=lambda platform: {}))


def _segfault(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)


def _key_error(dtype):
    raise KeyError(dtype)


class CrashesOnJunk(Client):
    """custom_call_targets kills the process; dtype_to_etype raises KeyError."""

    xla_client = property(lambda self: _namespace(custom_call_targets=_segfault,
                                                  dtype_to_etype=_key_error))


class _MisreportingExecutable(_OffByOneExecutable):
    """Off-by-one results, and metadata that contradicts the program."""

    def hlo_modules(self):
        return []

    def get_compiled_memory_stats(self):
        stats = self._exe.get_compiled_memory_stats()
        sizes = {f: getattr(stats, f) for f in dir(stats) if f.endswith("_in_bytes")}
        sizes["argument_size_in_bytes"] *= 2
        return types.SimpleNamespace(**sizes)

    def cost_analysis(self):
        return {**self._exe.cost_analysis(), "flops": 0.0}

    def get_output_memory_kinds(self):
        return [["pinned_host" for _ in kinds] for kinds in self._exe.get_output_memory_kinds()]


class MisreportsPrograms(Client):
    """Loaded executables compute off by one and misreport their metadata."""

    def compile_and_load(self, *args, **kwargs):
        return _MisreportingExecutable(super().compile_and_load(*args, **kwargs), self)


def _accepts_skew(cls):
    """A factory that makes check_plugin_version accept every version (for this run)."""
    def make():
        from runtime import plugin_support

        plugin_support.check_plugin_version = lambda name, jaxlib, plugin: True
        return cls(native.make_cpu_client(num_devices=2))
    return make


xla_bridge.register_backend_factory("broken-plugin-support", _accepts_skew(Client), priority=-1)


class UncheckedArguments(Client):
    """jaxlib's own distributed, Gloo, topology and block functions: no argument checks."""

    xla_client = property(lambda self: _namespace(
        get_distributed_runtime_service=_native_jax.get_distributed_runtime_service,
        get_distributed_runtime_client=_native_jax.get_distributed_runtime_client,
        make_gloo_tcp_collectives=_native_jax.make_gloo_tcp_collectives,
        get_topology_for_devices=native.get_topology_for_devices,
        batched_block_until_ready=native.batched_block_until_ready))


class HidesLiveArrays(Client):
    """live_arrays and live_buffers always say nothing is alive."""

    def live_arrays(self):
        return []

    def live_buffers(self):
        return []


_register({"broken-serialize": BreaksSerialization,
          "broken-etype": WrongPrimitiveType,
          "broken-custom-calls": ForgetsCustomCalls,
          "broken-fuzz": CrashesOnJunk,
          "broken-live": HidesLiveArrays,
          "broken-programs": MisreportsPrograms,
          "broken-validation": UncheckedArguments})


# -- kernels: results perturbed per program (module @jit_<name>) --------------------------

def _program_name(computation) -> str:
    text = computation.decode(errors="replace") if isinstance(computation, bytes) else \
        str(computation)
    m = re.search(r"module @(\w+)", text)
    return m.group(1) if m else ""


class _TransformedResults:
    """ExecuteResults whose per-device outputs went through ``transform``."""

    def __init__(self, results, arguments, transform, client):
        self._results, self._args, self._transform = results, arguments, transform
        self._client = client

    def disassemble_into_single_device_arrays(self):
        per_output = self._results.disassemble_into_single_device_arrays()
        inputs = [np.asarray(a) for a in self._args]
        fixed = [[None] * len(per_output[0]) for _ in per_output] if per_output else []
        for d in range(len(per_output[0]) if per_output else 0):
            outs = self._transform(inputs, [np.array(o[d]) for o in per_output])
            for i, host in enumerate(outs):
                dev = list(per_output[i][d].devices())[0]
                fixed[i][d] = Client.buffer_from_pyval(self._client, np.array(host, order="C"),
                                                       dev)
        return fixed

    def consume_token(self):
        return self._results.consume_token()


class _TransformedExecutable:
    def __init__(self, exe, client, transform):
        self._exe, self._client, self._transform = exe, client, transform

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        raw = self._exe.execute(arguments)
        outs = self._transform([np.asarray(a) for a in arguments], [np.array(o) for o in raw])
        return [Client.buffer_from_pyval(self._client, np.array(o, order="C"),
                                         next(iter(r.devices())))
                for o, r in zip(outs, raw)]

    def execute_sharded(self, arguments, with_tokens=False):
        return _TransformedResults(self._exe.execute_sharded(arguments, with_tokens=with_tokens),
                                   arguments, self._transform, self._client)


def _ulp_up(x: np.ndarray, n: int) -> np.ndarray:
    """Every finite float element moved ``n`` representable values up (toward the largest
    finite value: fp8 types without infinities have no inf to aim at)."""
    import ml_dtypes

    y, top = x, np.full_like(x, ml_dtypes.finfo(x.dtype).max)
    for _ in range(n):
        y = np.nextafter(y, top)
    return np.where(np.isfinite(x), y, x).astype(x.dtype)


def _perturb(x: np.ndarray) -> np.ndarray:
    """Scaled by 1 + 2**-9, then 64 ULP up: beyond the ULP table and every error bound."""
    with np.errstate(over="ignore"):
        return _ulp_up((x * (1 + 2.0**-9)).astype(x.dtype), 64)


def _perturb_floats(name, inputs, outputs):
    """Every float kernel result is off (the real part of complex ones; fp8 too), NaN
    results become 0, and the first element of a bool result is flipped."""
    from conformance.helpers import dtype_helpers as dh

    floats = {d.dtype for d in dh.TRANSFER_DTYPES if d.kind == "float"}
    out = []
    for o in outputs:
        if o.dtype in floats:
            o = _perturb(np.where(np.isnan(o.astype(np.float32)), 0, o).astype(o.dtype))
        elif o.dtype.kind == "c":
            z = o.copy()
            z.real = _perturb(np.nan_to_num(o.real, nan=0.0, posinf=np.inf, neginf=-np.inf))
            o = z
        elif o.dtype == np.bool_ and o.size:
            o = o.copy()
            o.reshape(-1)[0] = ~o.reshape(-1)[0]
        out.append(o)
    return out


def _permute_lu_pivots(name, inputs, outputs):
    if name != "jit_lu" or len(outputs) != 3 or outputs[1].shape[-1] < 2:
        return outputs
    pivots = outputs[1].copy()  # the first row interchange goes to another row
    pivots[..., 0] = (pivots[..., 0] + 1) % pivots.shape[-1]
    return [outputs[0], pivots, outputs[2]]


def _unnormalized_ifft(name, inputs, outputs):
    """ifft without its 1/n (the forward normalisation applied to the inverse)."""
    if not (name.startswith("jit_ifft") or name.startswith("jit_irfft")
            or name == "jit_fft_round_trip"):
        return outputs
    return [(o * o.shape[-1]).astype(o.dtype) for o in outputs]


def _threefry_19_rounds(name, inputs, outputs):
    if name != "jit_threefry2x32":
        return outputs
    from conformance.helpers.threefry import jax_threefry_2x32

    key, count = inputs
    return [jax_threefry_2x32((int(key[0]), int(key[1])), count, rounds=19)]


def _kernel_client(transform):
    class PerturbsKernels(Client):
        def compile_and_load(self, computation, executable_devices, compile_options=None):
            exe = super().compile_and_load(computation, executable_devices, compile_options)
            name = _program_name(computation)
            return _TransformedExecutable(exe, self, functools.partial(transform, name))
    return PerturbsKernels


_register({"broken-kernels-ulp": _kernel_client(_perturb_floats),
           "broken-lu-pivots": _kernel_client(_permute_lu_pivots),
           "broken-fft-norm": _kernel_client(_unnormalized_ifft),
           "broken-prng": _kernel_client(_threefry_19_rounds)})


class _SwallowsErrors:
    """An executable whose ``execute`` hides a failed run: no outputs, no exception."""

    def __init__(self, exe):
        self._exe = exe

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        try:
            return [o.block_until_ready() for o in self._exe.execute(arguments)]
        except xla_client.XlaRuntimeError:
            return []


class SwallowsKernelErrors(Client):
    """Errors returned by kernels (an FFI handler's InvalidArgument) never reach Python."""

    def compile_and_load(self, *args, **kwargs):
        return _SwallowsErrors(super().compile_and_load(*args, **kwargs))


_register({"broken-ffi-errors": SwallowsKernelErrors})
