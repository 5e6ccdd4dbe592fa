"""Area custom_calls: the custom-call registry and kernel registrations (seed 000
Custom Operations and Hardware-Specific Operations).

A target registered under a new name is listed by ``custom_call_targets`` and
called by a StableHLO program that names it; a program naming an unregistered
target fails with a Python error, never a crash.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from conformance.helpers import assertions as ph
from conformance.programs import cache as programs
from runtime import cpu_sparse, gpu_linalg, gpu_sparse, lapack
from runtime.xla_bridge import client_platform, is_gpu


def _cholesky_text(client, n: int) -> str:
    import jax.numpy as jnp

    return programs.lowered_text("cholesky", jnp.linalg.cholesky, (((n, n), "float32"),),
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


@pytest.mark.capability("custom_calls")
def test_lapack_targets_are_registered_on_cpu(xc, client, backend_spec):
    _cpu_only(client, backend_spec)
    names = [name for name, _, _ in lapack.registrations()["cpu"]]
    assert len(names) >= 40, f"lapack.registrations() has {len(names)} targets, expected >= 40"
    listed = xc.custom_call_targets("cpu")
    absent = [n for n in names if n not in listed]
    assert not absent, f"LAPACK targets not in custom_call_targets('cpu'): {absent[:10]}"
    sparse = [name for name, _, _ in cpu_sparse.registrations()["cpu"]]
    assert sparse and all(n in listed for n in sparse), (
        f"cpu_sparse targets {sparse} are not all in custom_call_targets('cpu')")


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


@pytest.mark.parametrize("dtype, prefix", [(np.float32, "s"), (np.float64, "d"),
                                           (np.complex64, "c"), (np.complex128, "z")])
def test_prepare_lapack_call_names_a_registered_target(dtype, prefix):
    name = lapack.prepare_lapack_call("getrf", dtype)
    assert name == f"lapack_{prefix}getrf", f"prepare_lapack_call('getrf', {dtype}) = {name!r}"
    assert f"{name}_ffi" in {n for n, _, _ in lapack.registrations()["cpu"]}


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
    ph.assert_allclose(out, np.linalg.cholesky(spd.astype(np.float64)).astype(np.float32),
                       rtol=1e-4, atol=1e-4, call=f"custom_call @{alias} on {device}")


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


def test_handler_receives_targets_registered_before_and_after_it(xc):
    platform = f"conformance_{uuid.uuid4().hex[:8]}"
    fn = _spotrf()
    seen = []
    xc.register_custom_call_target("early", fn, platform, api_version=1)
    xc.register_custom_call_handler(platform, lambda *args: seen.append(args[0]))
    xc.register_custom_call_target("late", fn, platform, api_version=1)
    assert seen == ["early", "late"], f"handler saw {seen}, but should see ['early', 'late']"


@pytest.mark.parametrize("call, arg, exc", [
    (lambda xc, fn: xc.register_custom_call_target("", fn, "cpu", 1), "name", TypeError),
    (lambda xc, fn: xc.register_custom_call_target("x", "not a capsule", "cpu"), "fn",
     TypeError),
    (lambda xc, fn: xc.register_custom_call_target("x", fn, "cpu", 7), "api_version", ValueError),
    (lambda xc, fn: xc.register_custom_call_target("x", {"execute": fn}, "cpu", 0), "fn",
     ValueError),
    (lambda xc, fn: xc.register_custom_call_target("x", fn, 3, 1), "platform", TypeError),
    (lambda xc, fn: xc.register_custom_call_target("x", fn, "cpu", 1, traits=5), "traits",
     TypeError),
    (lambda xc, fn: xc.register_custom_call_handler("cpu", None), "handler", TypeError),
    (lambda xc, fn: xc.register_custom_call_partitioner("x", None, None, None),
     "prop_user_sharding", TypeError),
    (lambda xc, fn: xc.custom_call_targets(None), "platform", TypeError),
    (lambda xc, fn: lapack.prepare_lapack_call("getrf", np.int32), "dtype", ValueError),
    (lambda xc, fn: lapack.prepare_lapack_call("nosuchroutine", np.float32), "fn_base",
     ValueError),
    (lambda xc, fn: lapack.prepare_lapack_call(3, np.float32), "fn_base", TypeError),
], ids=["empty-name", "fn-not-capsule", "api-version", "dict-for-v0", "platform-int",
        "traits-int", "handler-none", "partitioner-none", "targets-none", "lapack-int-dtype",
        "lapack-unknown", "lapack-int-name"])
def test_registry_rejects_bad_input(xc, call, arg, exc):
    fn = _spotrf()
    before = set(xc.custom_call_targets("cpu"))
    with pytest.raises(exc, match=f"argument '{arg}'"):
        call(xc, fn)
    assert set(xc.custom_call_targets("cpu")) == before, "a rejected call changed the registry"
