"""The first broken backends of the jaxlib API areas and kernels, as catalog mutants."""

from __future__ import annotations

import os
import signal
import types

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client
from runtime._compat import native, native_jax
from tests.mutants.base import Site, TransformedExecutable, is_float, perturb, transforming
from tests.mutants.catalog import add
from tests.mutants.legacy_io import _off_by_one


class BreaksSerialization(Client):
    """Executables loaded from serialized bytes compute results off by one."""

    def deserialize_executable(self, *args, **kwargs):
        return TransformedExecutable(super().deserialize_executable(*args, **kwargs), self,
                                     "", _off_by_one)


def _f16_as_bf16(dtype):
    etype = xc.dtype_to_etype(dtype)
    return xc.PrimitiveType.BF16 if etype == xc.PrimitiveType.F16 else etype


def _segfault(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)


def _key_error(dtype):
    raise KeyError(dtype)


class _Misreporting(TransformedExecutable):
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
        return _Misreporting(super().compile_and_load(*args, **kwargs), self, "", _off_by_one)


class HidesLiveArrays(Client):
    """live_arrays and live_buffers always say nothing is alive."""

    def live_arrays(self):
        return []

    def live_buffers(self):
        return []


class _SwallowsErrors:
    def __init__(self, exe):
        self._exe = exe

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        try:
            return [o.block_until_ready() for o in self._exe.execute(arguments)]
        except xc.XlaRuntimeError:
            return []


class SwallowsKernelErrors(Client):
    """Errors returned by kernels (an FFI handler's InvalidArgument) never reach Python."""

    def compile_and_load(self, *args, **kwargs):
        return _SwallowsErrors(super().compile_and_load(*args, **kwargs))


def _perturb_floats(site: Site, inputs, outputs):
    """Every float kernel result is off (the real part of complex ones; fp8 too), NaN
    results become 0, and the first element of a bool result is flipped."""
    out = []
    for o in outputs:
        if is_float(o):
            o = perturb(np.where(np.isnan(o.astype(np.float32)), 0, o).astype(o.dtype))
        elif o.dtype.kind == "c":
            z = o.copy()
            z.real = perturb(np.nan_to_num(o.real, nan=0.0, posinf=np.inf, neginf=-np.inf))
            o = z
        elif o.dtype == np.bool_ and o.size:
            o = o.copy()
            o.reshape(-1)[0] = ~o.reshape(-1)[0]
        out.append(o)
    return out


def _wrong_kernel_results(site: Site, inputs, outputs):
    """Every kernel result is wrong: floats, complex and bools as broken-kernels-ulp, then
    the first element of every numeric output +1 as broken-execute (one child run
    then shows that every kernel test can fail)."""
    return _off_by_one(site, inputs, _perturb_floats(site, inputs, outputs))


def _permute_lu_pivots(site: Site, inputs, outputs):
    """The first row interchange of an LU factorisation goes to another row."""
    if site.program != "lu" or len(outputs) != 3 or outputs[1].shape[-1] < 2:
        return outputs
    pivots = outputs[1].copy()
    pivots[..., 0] = (pivots[..., 0] + 1) % pivots.shape[-1]
    return [outputs[0], pivots, outputs[2]]


def _unnormalized_ifft(site: Site, inputs, outputs):
    """ifft without its 1/n (the forward normalisation applied to the inverse)."""
    if not site.program.startswith(("ifft", "irfft", "fft_round_trip")):
        return outputs
    return [(o * o.shape[-1]).astype(o.dtype) for o in outputs]


def _threefry_19_rounds(site: Site, inputs, outputs):
    """threefry2x32 runs 19 rounds instead of 20."""
    if site.program != "threefry2x32":
        return outputs
    from conformance.helpers.threefry import jax_threefry_2x32

    key, count = inputs
    return [jax_threefry_2x32((int(key[0]), int(key[1])), count, rounds=19)]


def _register():
    add("broken-serialize", "jaxlib_api", BreaksSerialization,
        "test_executables: test_serialize_deserialize_execute")
    add("broken-etype", "jaxlib_api", Client, "test_types: test_primitive_type_round_trip and "
        "float16", doc="dtype_to_etype maps float16 to BF16.",
        api={"dtype_to_etype": _f16_as_bf16})
    add("broken-custom-calls", "jaxlib_api", Client,
        "test_custom_calls: test_registered_target_is_listed",
        doc="custom_call_targets lists nothing.", api={"custom_call_targets": lambda p: {}})
    add("broken-fuzz", "jaxlib_api", Client,
        "test_fuzz: test_fuzz_public_function and (custom_call or dtype_to_etype)",
        doc="custom_call_targets kills the process; dtype_to_etype raises KeyError.",
        api={"custom_call_targets": _segfault, "dtype_to_etype": _key_error})
    add("broken-live", "jaxlib_api", HidesLiveArrays, "test_client: test_live_arrays")
    add("broken-programs", "jaxlib_api", MisreportsPrograms,
        "test_executables: not serialize and not rejects")
    add("broken-validation", "jaxlib_api", Client,
        "test_errors: test_distributed_topology_and_block",
        doc="jaxlib's own distributed, Gloo, topology and block functions: no argument checks.",
        api={"get_distributed_runtime_service": native_jax.get_distributed_runtime_service,
             "get_distributed_runtime_client": native_jax.get_distributed_runtime_client,
             "make_gloo_tcp_collectives": native_jax.make_gloo_tcp_collectives,
             "get_topology_for_devices": native.get_topology_for_devices,
             "batched_block_until_ready": native.batched_block_until_ready})
    add("broken-ffi-errors", "jaxlib_api", SwallowsKernelErrors,
        "test_kernels_ffi: error_reaches_python")
    add("broken-kernels-ulp", "output", transforming(_perturb_floats, _perturb_floats.__doc__),
        "test_kernels_elementwise: float32 and accuracy; test_kernels_reduce: float32; "
        "test_kernels_dot: float32")
    add("broken-kernel-results", "output",
        transforming(_wrong_kernel_results, _wrong_kernel_results.__doc__),
        "test_kernels_reduce: int32 or float32; test_kernels_convert: int32")
    add("broken-lu-pivots", "output", transforming(_permute_lu_pivots, _permute_lu_pivots.__doc__),
        "test_kernels_linalg: test_lu and float64")
    add("broken-fft-norm", "output", transforming(_unnormalized_ifft, _unnormalized_ifft.__doc__),
        "test_kernels_fft: ifft-complex64 or round_trip")
    add("broken-prng", "output", transforming(_threefry_19_rounds, _threefry_19_rounds.__doc__),
        "test_kernels_prng: threefry")


_register()
