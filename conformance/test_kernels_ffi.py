"""Area kernels_ffi: a C++ (and CUDA) XLA FFI handler, built at test time, end to end.

jaxlib's custom calls (``register_custom_call_target`` with ``api_version=1``).
``conformance/ffi/axpby_cpu.cc`` (``axpby_cuda.cu`` on CUDA) is compiled against jaxlib's
``jax.ffi.include_dir()`` headers with the system compiler, registered under a fresh name,
called from a StableHLO program lowered from ``jax.ffi.ffi_call``, and compared with NumPy
on every device. An error returned by the handler reaches Python as an exception. Skips
with the reason when no compiler is present, and for plugins whose custom-call registry is
not reachable from this process.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import tolerances
from conformance.programs import ffi_build
from conformance.programs import compiled_programs
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction
from runtime.xla_bridge import client_platform

F32 = dtype_helpers.BY_NAME["float32"]
pytestmark = pytest.mark.capability("custom_calls")


@pytest.fixture(scope="session")
def ffi_library(client, backend_spec, tmp_path_factory):
    """(loaded handler library, XLA platform name), built once per session; skips when
    the platform has no handler source or no compiler is found."""
    platform = client_platform(client)
    if platform == "cpu" and backend_spec.plugin_library is None:
        kind, xla_platform = "cpu", "cpu"
    elif platform == "cuda":
        kind, xla_platform = "cuda", "CUDA"
    else:
        pytest.skip(f"no FFI handler source for platform {platform} "
                    f"{backend_spec.plugin_library or ''}".rstrip())
    try:
        return ffi_build.build_handler(kind, tmp_path_factory.mktemp("ffi")), xla_platform
    except ffi_build.NoCompilerError as err:
        pytest.skip(str(err))


def _register(xc, ffi_library, symbol: str, prefix: str) -> str:
    lib, xla_platform = ffi_library
    name = f"pjrt_conformance_{prefix}_{uuid.uuid4().hex[:8]}"
    with capabilities.optional_feature("custom_calls", f"register_custom_call_target({name})"):
        xc.register_custom_call_target(name, ffi_build.handler_capsule(lib, symbol),
                                       xla_platform, api_version=1)
    return name


@pytest.fixture(scope="session")
def axpby_target(xc, ffi_library) -> str:
    """Name of the registered axpby FFI target."""
    return _register(xc, ffi_library, ffi_build.HANDLER_SYMBOL, "axpby")


@pytest.fixture(scope="session")
def ordinal_target(xc, ffi_library) -> str:
    """Name of the registered placement probe (int32 scalar: the device ordinal it ran on)."""
    return _register(xc, ffi_library, ffi_build.DEVICE_ORDINAL_SYMBOL, "device_ordinal")


def _axpby(target: str, a: float, b: float, out_shape: tuple[int, ...]):
    def program(x, y):
        import jax
        import jax.ffi

        call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(out_shape, np.float32))
        return call(x, y, a=np.float32(a), b=np.float32(b))
    return program


@given(shape=st.sampled_from(((0,), (7,), (3, 4))), ab=st.sampled_from(((2.0, -1.0),
                                                                         (0.5, 3.0))),
       data=st.data())
def test_ffi_handler_matches_numpy(program_cache, float_controls, axpby_target, shape, ab,
                                   data):
    x = data.draw(strategies.finite_arrays(F32, shape), label="x")
    y = data.draw(strategies.finite_arrays(F32, shape), label="y")
    a, b = ab
    call = f"execute(custom_call @{axpby_target} a={a} b={b}, float32{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"axpby_{a}_{b}",
                                                     _axpby(axpby_target, a, b, shape), [x, y], F32,
                                                     call)
    assert f"@{axpby_target}" in program, f"the program does not call @{axpby_target}"
    ax, by = np.float32(a) * x, np.float32(b) * y
    # two roundings (nvcc may fuse into an FMA: one fewer); each may also land below
    # tiny and be flushed where the backend declares float32 FTZ/DAZ (the handler runs on
    # the backend's threads, with their mode: XLA's CPU threads flush float32), an
    # absolute error of up to tiny
    bound = tolerances.bound(
        "rounding", np.float32,
        magnitude=np.abs(np.float64(a) * x) + np.abs(np.float64(b) * y), roundings=2,
        controls=float_controls, name="2*eps*(|a x| + |b y|) + 2*tiny")
    with reproduction(call, program=program, inputs=[x, y]):
        for device, out in outs:
            assertions.assert_within_bound(out, (ax + by).astype(np.float32), bound,
                                           call=f"{call} on {device}")


def test_ffi_handler_error_reaches_python(client, device, xc, axpby_target):
    """The handler's InvalidArgument (x and y differ in size) is an exception, not a crash."""
    text = compiled_programs.lowered_text("axpby_mismatch", _axpby(axpby_target, 1.0, 1.0, (3,)),
                                          (((3,), "float32"), ((4,), "float32")), client)
    exe = client.compile_and_load(text, [device])
    args = [client.buffer_from_pyval(np.ones(n, np.float32), device) for n in (3, 4)]
    with pytest.raises(xc.XlaRuntimeError, match="x and y differ in size"):
        for out in exe.execute(args):
            out.block_until_ready()


def _device_ordinal(target: str):
    def program(x):
        import jax
        import jax.ffi

        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((), np.int32))(x)
    return program


def test_single_device_program_runs_on_its_device(client, device, ordinal_target):
    """A program loaded on device k runs there: the FFI handler inside it sees ordinal
    k (``local_hardware_id``) in its call context, not only an output labelled k."""
    text = compiled_programs.lowered_text("device_ordinal", _device_ordinal(ordinal_target),
                                          (((4,), "float32"),), client)
    call = f"execute(custom_call @{ordinal_target}) of a program loaded on {device}"
    exe = client.compile_and_load(text, [device])
    (out,) = exe.execute([client.buffer_from_pyval(np.zeros(4, np.float32), device)])
    ran_on = int(np.asarray(out))
    with reproduction(call, program=text):
        assert out.devices() == {device}, (
            f"out.devices()={out.devices()}, but should be {{{device}}} [{call}]")
        assert ran_on == device.local_hardware_id, (
            f"the handler ran on device ordinal {ran_on}, but should run on "
            f"{device.local_hardware_id} ({device}) [{call}]")


def test_spmd_program_runs_on_every_device(program_cache, ordinal_target):
    """One SPMD executable over every device: each device's output comes from its own
    device (the handler's ordinal is that device's ``local_hardware_id``)."""
    x = np.zeros(4, np.float32)
    call = f"execute_sharded(custom_call @{ordinal_target}) over every device"
    outs, program = compiled_programs.run_everywhere(program_cache, "device_ordinal",
                                                     _device_ordinal(ordinal_target), [x], F32,
                                                     call)
    ran_on = {device.id: int(out) for device, out in outs}
    expected = {device.id: device.local_hardware_id for device, _ in outs}
    with reproduction(call, program=program):
        assert ran_on == expected, (f"device id -> ordinal the handler ran on: {ran_on}, but "
                                    f"should be {expected} [{call}]")
