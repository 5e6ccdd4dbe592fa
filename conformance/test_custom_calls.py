"""Area custom_calls: the custom-call registry and kernel registrations (jaxlib's custom
calls: ``register_custom_call_target``...; kernel registrations: ``lapack``, ``gpu_linalg``,
``cpu_sparse``/``gpu_sparse``).

A target registered under a new name is listed by ``custom_call_targets`` and
called by a StableHLO program that names it; a program naming an unregistered
target fails with a Python error, never a crash.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from conformance.helpers import assertions
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from runtime import gpu_linalg, gpu_sparse, lapack
from runtime.xla_bridge import client_platform, is_gpu


def _cholesky_text(client, n: int) -> str:
    import jax.numpy as jnp

    return compiled_programs.lowered_text("cholesky", jnp.linalg.cholesky, (((n, n), "float32"),),
                                          client)


def _cpu_only(client, backend_spec) -> None:
    """Skip unless the backend is jaxlib's built-in CPU client, whose custom-call
    registry is this process's (a plugin keeps its kernels in its own library)."""
    if client.platform != "cpu" or backend_spec.plugin_library is not None:
        pytest.skip(f"the LAPACK targets belong to jaxlib's built-in cpu client, not "
                    f"{client.platform} {backend_spec.plugin_library or ''}".rstrip())


def _spotrf() -> object:
    """The LAPACK spotrf FFI handler (a dict of stage capsules), straight from jaxlib."""
    return next(fn for name, fn, _ in lapack.registrations()["cpu"]
                if name == "lapack_spotrf_ffi")


def test_gpu_registrations_name_the_missing_package(xc, client):
    try:
        regs = {mod.__name__: mod.registrations() for mod in (gpu_linalg, gpu_sparse)}
    except xc.GpuLibNotLinkedError as err:
        assert "jax-cuda13-plugin" in str(err), f"error does not name the package: {err}"
        if is_gpu(client_platform(client)):
            pytest.fail(f"{client_platform(client)} client without its kernels: {err}")
        return
    platform = "CUDA" if client_platform(client) != "rocm" else "ROCM"
    for name, reg in regs.items():
        assert reg[platform], f"{name}.registrations()[{platform!r}] is empty"
        assert all(isinstance(t, str) and api in (0, 1) for t, _, api in reg[platform])


@pytest.mark.capability("custom_calls")
def test_registered_target_is_listed_and_called(xc, client, device, backend_spec):
    _cpu_only(client, backend_spec)
    alias = f"conformance_{uuid.uuid4().hex[:8]}_spotrf_ffi"
    xc.register_custom_call_target(alias, _spotrf(), "cpu", api_version=1)
    assert alias in xc.custom_call_targets("cpu"), f"{alias} is not listed after registration"
    n = 6
    text = _cholesky_text(client, n)
    assert "@lapack_spotrf_ffi" in text, "the lowered cholesky does not call lapack_spotrf_ffi"
    exe = client.compile_and_load(text.replace("@lapack_spotrf_ffi", f"@{alias}"), [device])
    rng = np.random.default_rng(0)
    m = rng.standard_normal((n, n)).astype(np.float32)
    spd = (m @ m.T + n * np.eye(n)).astype(np.float32)
    out = np.asarray(exe.execute([client.buffer_from_pyval(spd, device)])[0])
    tol = tolerances.bound("fixed", np.float32, check="custom_call_cholesky")
    assertions.assert_allclose(out,
                               np.linalg.cholesky(spd.astype(np.float64)).astype(np.float32),
                               rtol=tol.rtol, atol=tol.atol,
                               call=f"custom_call @{alias} on {device}")


def test_unregistered_target_is_a_clear_error(client, device, isolated):
    text = _cholesky_text(client, 4)
    target = next((t for t in ("lapack_spotrf_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi")
                   if f"@{t}" in text), None)
    if target is None:
        pytest.skip(f"cholesky lowers to no custom call on {client.platform}")
    missing = text.replace(f"@{target}", "@conformance_never_registered_ffi")
    out = isolated(f"""
text = {missing!r}
try:
    exe = client.compile_and_load(text, [device])
    arg = client.buffer_from_pyval(np.eye(4, dtype=np.float32), device)
    exe.execute([arg])[0].block_until_ready()
except Exception as err:
    print("RAISED", type(err).__name__, str(err).splitlines()[0])
else:
    print("RAN")
""", device=device, call="a program calling an unregistered custom call")
    assert "RAISED" in out and "conformance_never_registered_ffi" in out, (
        f"an unregistered custom-call target should raise an error naming it, got:\n{out}")
