"""Self-tests of the project's own host-side code, moved out of the certification tiers.

These tests used to sit in ``conformance/test_*.py`` (core or capability tiers), but no
backend can fail them: they check ``runtime``'s argument validation (done before any
backend call), the program cache (``conformance/programs/compiled_programs.py``), host-only
``HloSharding``/``NamedSharding`` computations, the runtime's registries and dtype/Shape
tables, the runtime's choice of default device and jaxlib's LAPACK registrations
(issue 33 item 8). Their assertions are the originals'; the client is a runtime CPU
client of two devices, ``xc`` is ``runtime.xla_client``.
"""

from __future__ import annotations

import datetime
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import NamedSharding, PartitionSpec

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import sharding_helpers
from conformance.programs import compiled_programs
from conformance.programs import catalog, lowering
from conformance.programs.catalog import ELEMENTWISE
from conformance.session.hypothesis_profiles import PROFILES
from runtime import cpu_sparse, lapack, xla_bridge, xla_client

#: The suite's ``ci`` Hypothesis profile (a tests/ run does not load it).
CI = settings(**PROFILES["ci"])


@pytest.fixture(scope="module")
def client():
    """A runtime CPU client of two devices (the suite's ``client`` fixture exists only in
    a conformance run)."""
    return xla_client.make_cpu_client(num_devices=2)


@pytest.fixture(scope="module")
def xc():
    return xla_client


@pytest.fixture(params=[0, 1], ids=["cpu:0", "cpu:1"])
def device(client, request):
    return client.local_devices()[request.param]


@pytest.fixture
def program_cache(client):
    return compiled_programs.ProgramCache(client)


# -- from conformance/test_execute.py: the program cache ----------------------------------

def test_executable_cache_reuses_compilations(client, device, program_cache):
    args = [np.ones(5, np.float32), np.ones(5, np.float32)]
    op = ELEMENTWISE["add"]
    program_cache.run(op.name, op.fn, args, device)
    before = program_cache.compiles
    for _ in range(3):
        program_cache.run(op.name, op.fn, [a * 2 for a in args], device)
    assert program_cache.compiles == before, (
        f"{program_cache.compiles - before} recompilations for one signature, but should be 0")


# -- from conformance/test_transfer.py: the runtime's default device ----------------------

def test_default_device_is_first_local(client):
    buf = client.buffer_from_pyval(np.arange(3, dtype=np.int32))
    first = client.local_devices()[0]
    assert buf.devices() == {first}, (f"out.devices()={buf.devices()}, but should be {{{first}}} "
                                      "[buffer_from_pyval(x) with device=None]")


# -- from conformance/test_sharding.py: host-only sharding computations -------------------

def _describe(case: sharding_helpers.ShardedCase) -> str:
    return (f"NamedSharding(mesh={dict(case.mesh.shape)} over "
            f"{[d.id for d in case.mesh.devices.flat]}, spec={case.spec}), shape={case.shape}")


def _as_gspmd(case: sharding_helpers.ShardedCase):
    """The GSPMDSharding with the same devices and HloSharding as ``case.sharding``."""
    hlo = lowering.hlo_sharding_of(case.sharding, len(case.shape))
    return xla_client.GSPMDSharding(lowering.device_assignment_of(case.sharding), hlo)


@CI
@given(data=st.data())
def test_indices_map_covers_each_element_once_per_replica(client, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    pieces = int(np.prod(sharding_helpers.shards_per_dim(case.mesh, case.spec, len(case.shape))))
    replicas = client.local_device_count() // pieces
    counts = sharding_helpers.coverage(case.sharding, case.shape)
    bad = np.argwhere(counts != replicas)
    assert bad.size == 0, (
        f"devices_indices_map covers element {tuple(bad[0])} {counts[tuple(bad[0])]} time(s), "
        f"but should cover every element {replicas} time(s) [{_describe(case)}]")


@CI
@given(data=st.data())
def test_equivalent_shardings_are_equal_and_hash_equal(client, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    ndim = len(case.shape)
    padded = NamedSharding(case.mesh, PartitionSpec(
        *case.spec, *([None] * (ndim - len(case.spec)))))
    assert padded == case.sharding and hash(padded) == hash(case.sharding), (
        f"{padded} and {case.sharding} differ only by trailing None, but compare unequal or "
        "hash differently")
    gspmd = _as_gspmd(case)
    assert gspmd.is_equivalent_to(case.sharding, ndim), (
        f"GSPMDSharding from the HloSharding of {_describe(case)} is not equivalent to it")
    assert gspmd.devices_indices_map(case.shape) == case.sharding.devices_indices_map(
        case.shape), f"GSPMDSharding and NamedSharding place shards differently [{_describe(case)}]"


def test_single_device_sharding(client, device):
    s = xla_client.SingleDeviceSharding(device)
    assert s == xla_client.SingleDeviceSharding(device) and hash(s) == hash(
        xla_client.SingleDeviceSharding(device)), f"SingleDeviceSharding({device}) != itself"
    assert s.device_set == {device} and s.is_fully_replicated, (
        f"SingleDeviceSharding({device}): device_set={s.device_set}, "
        f"is_fully_replicated={s.is_fully_replicated}")
    others = [d for d in client.local_devices() if d != device]
    if others:
        assert s != xla_client.SingleDeviceSharding(others[0]), (
            f"SingleDeviceSharding({device}) == SingleDeviceSharding({others[0]})")


@CI
@given(data=st.data())
def test_hlo_sharding_round_trip_and_predicates(client, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    hlo = lowering.hlo_sharding_of(case.sharding, len(case.shape))
    again = xla_client.HloSharding.from_proto(hlo.to_proto())
    assert again == hlo and hash(again) == hash(hlo), (
        f"HloSharding.from_proto(to_proto()) = {again}, but should be {hlo} [{_describe(case)}]")
    pieces = int(np.prod(sharding_helpers.shards_per_dim(case.mesh, case.spec, len(case.shape))))
    assert hlo.is_replicated() == (pieces == 1), (
        f"{hlo}.is_replicated()={hlo.is_replicated()}, but the spec cuts the array into "
        f"{pieces} piece(s) [{_describe(case)}]")
    assert hlo.is_tiled() == (pieces > 1), f"{hlo}.is_tiled()={hlo.is_tiled()} with {pieces} pieces"
    if pieces > 1:
        assert hlo.num_devices() == client.local_device_count(), (
            f"{hlo}.num_devices()={hlo.num_devices()}, but should be "
            f"{client.local_device_count()}")
    rep, man = xla_client.HloSharding.replicate(), xla_client.HloSharding.manual()
    assert rep.is_replicated() and not rep.is_tiled() and man.is_manual(), (
        f"replicate()={rep} / manual()={man} predicates are wrong")


# -- from conformance/test_errors.py: argument checks made before any backend call --------

def _add_text(client):
    return compiled_programs.lowered_text("add", catalog.ELEMENTWISE["add"].fn,
                                          (((3,), "float32"), ((3,), "float32")), client)


@pytest.mark.parametrize("bad,kind", [
    (np.array([object(), 1], dtype=object), "object array"),
    (np.array(["a", "b"]), "string array"),
    (np.array([datetime.datetime(2020, 1, 1)], dtype="datetime64[s]"), "datetime64 array"),
    ("text", "str"),
    ([1, [2, 3]], "ragged list"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_buffer_from_pyval_rejects_unsupported(client, device, bad, kind):
    keep = bad.copy() if isinstance(bad, np.ndarray) else bad
    with pytest.raises(TypeError, match="argument 'argument'") as info:
        client.buffer_from_pyval(bad, device)
    assert "got" in str(info.value), f"message does not say what was given: {info.value}"
    if isinstance(bad, np.ndarray):
        assert bad.dtype == keep.dtype and bad.shape == keep.shape


def test_buffer_from_pyval_rejects_foreign_device(client):
    other = xla_client.make_cpu_client(num_devices=1)
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(ValueError, match="argument 'device'"):
        client.buffer_from_pyval(x, other.local_devices()[0])
    assertions.assert_bitwise_equal(x, np.arange(3, dtype=np.float32), call="caller's array")


def test_buffer_from_pyval_rejects_non_device(client):
    with pytest.raises(TypeError, match="argument 'device'"):
        client.buffer_from_pyval(np.zeros(2), device="cpu:0")


def test_buffer_from_pyval_rejects_bad_semantics(client, device):
    with pytest.raises(TypeError, match="host_buffer_semantics"):
        client.buffer_from_pyval(np.zeros(2), device, host_buffer_semantics="copy")


def test_compile_rejects_empty_device_list(client):
    with pytest.raises(ValueError, match="executable_devices"):
        client.compile_and_load(_add_text(client), [])


def test_compile_rejects_non_text(client, device):
    with pytest.raises(TypeError, match="computation"):
        client.compile_and_load(12345, [device])


def test_compile_rejects_foreign_devices(client):
    other = xla_client.make_cpu_client(num_devices=1)
    with pytest.raises(ValueError, match="executable_devices"):
        client.compile_and_load(_add_text(client), other.local_devices())


def test_get_backend_unknown_platform():
    with pytest.raises(RuntimeError, match=r"Unknown platform 'nope'\. Available: \["):
        xla_bridge.get_backend("nope")


def test_make_cpu_client_rejects_bad_num_devices():
    for bad in (0, -1, 2.5, "4"):
        with pytest.raises(ValueError, match="num_devices"):
            xla_client.make_cpu_client(num_devices=bad)


# -- from conformance/test_custom_calls.py: the runtime's custom-call registry ------------

def _spotrf() -> object:
    """The LAPACK spotrf FFI handler (a dict of stage capsules), straight from jaxlib."""
    return next(fn for name, fn, _ in lapack.registrations()["cpu"]
                if name == "lapack_spotrf_ffi")


def test_lapack_targets_are_registered_on_cpu(xc, client):
    names = [name for name, _, _ in lapack.registrations()["cpu"]]
    assert len(names) >= 40, f"lapack.registrations() has {len(names)} targets, expected >= 40"
    listed = xc.custom_call_targets("cpu")
    absent = [n for n in names if n not in listed]
    assert not absent, f"LAPACK targets not in custom_call_targets('cpu'): {absent[:10]}"
    sparse = [name for name, _, _ in cpu_sparse.registrations()["cpu"]]
    assert sparse and all(n in listed for n in sparse), (
        f"cpu_sparse targets {sparse} are not all in custom_call_targets('cpu')")


@pytest.mark.parametrize("dtype, prefix", [(np.float32, "s"), (np.float64, "d"),
                                           (np.complex64, "c"), (np.complex128, "z")])
def test_prepare_lapack_call_names_a_registered_target(dtype, prefix):
    name = lapack.prepare_lapack_call("getrf", dtype)
    assert name == f"lapack_{prefix}getrf", f"prepare_lapack_call('getrf', {dtype}) = {name!r}"
    assert f"{name}_ffi" in {n for n, _, _ in lapack.registrations()["cpu"]}


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


# -- from conformance/test_types.py: the PrimitiveType <-> dtype table and Shape ----------

def test_every_array_primitive_type_has_a_dtype(xc):
    """The mapping is complete: only the non-array types lack a dtype."""
    lacking = {name for name, p in xc.PrimitiveType.__members__.items() if _no_dtype(xc, p)}
    assert lacking <= {"PRIMITIVE_TYPE_INVALID", "TUPLE", "OPAQUE_TYPE", "TOKEN", "BUFFER"}, (
        f"PrimitiveTypes without a numpy/ml_dtypes dtype: {sorted(lacking)}")


def _no_dtype(xc, p) -> bool:
    try:
        xc.etype_to_dtype(p)
    except ValueError:
        return True
    return False


@CI
@given(dims=st.lists(st.integers(0, 64), max_size=6),
       dt=st.sampled_from([d.dtype for d in dtype_helpers.TRANSFER_DTYPES]))
def test_array_shape_dimensions_and_rank(xc, dims, dt):
    shape = xc.Shape.array_shape(dt, dims)
    assert shape.dimensions() == tuple(dims), (
        f"Shape.array_shape({dt}, {dims}).dimensions()={shape.dimensions()}")
    assert shape.rank() == len(dims) and shape.is_array() and not shape.is_tuple()
    assert isinstance(shape, xc.Shape)
    layout = list(range(len(dims)))[::-1]
    assert xc.Shape.array_shape(dt, dims, layout).dimensions() == tuple(dims)


def test_shape_parses_text(xc):
    shape = xc.Shape("f32[2,3]")
    assert shape.dimensions() == (2, 3) and shape.numpy_dtype() == np.float32


@pytest.mark.parametrize("call, arg", [
    (lambda xc: xc.dtype_to_etype(np.dtype("U3")), "dtype"),
    (lambda xc: xc.dtype_to_etype(object), "dtype"),
    (lambda xc: xc.etype_to_dtype(xc.PrimitiveType.TUPLE), "etype"),
    (lambda xc: xc.etype_to_dtype(11), "etype"),
    (lambda xc: xc.Shape.array_shape("not a dtype", (2,)), "type"),
    (lambda xc: xc.Shape.array_shape(np.float32, (-1,)), "dims_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, "23"), "dims_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, (2, 3), (0, 0)), "layout_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, (2, 3), None, [True]), "dynamic_dimensions"),
    (lambda xc: xc.Shape("f32[2,"), "s"),
    (lambda xc: xc.Shape(3), "s"),
], ids=["str-dtype", "object", "tuple-etype", "int-etype", "bad-type", "negative-dim",
        "str-dims", "bad-layout", "dynamic-length", "bad-text", "int-text"])
def test_types_reject_bad_input(xc, call, arg):
    with pytest.raises((TypeError, ValueError), match=f"argument '{arg}'"):
        call(xc)


def test_a_compiler_pass_failure_is_not_blamed_on_the_module():
    """A module that parsed but broke a compiler pass (XLA's HLO verifier after SPMD
    partitioning) is the backend's error, not 'argument computation must be a valid
    StableHLO module'; a parser's error is still the caller's."""
    from runtime import _compile
    assert not _compile.is_parse_error(
        "INTERNAL: during context [hlo verifier]: Expected instruction to have shape equal "
        "to f32[1,2], actual shape is f32[1,1]")
    assert _compile.is_parse_error("INVALID_ARGUMENT: <unknown>:1:1: error: expected "
                                   "operation name in quotes")
