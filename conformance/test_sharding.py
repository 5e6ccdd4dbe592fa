"""Area sharding: shardings over drawn meshes, ``batched_device_put`` and ``reorder_shards``
(the array API: shardings, ``batched_device_put``, ``reorder_shards``).

Meshes are drawn over all local devices (1-D, 2-D, 3-D, any device order),
PartitionSpecs put array dimensions on none, one or several mesh axes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import host_memory
from conformance.helpers import sharding_helpers
from conformance.helpers import strategies
from conformance.helpers.reproduction import placement, reproduction
from conformance.programs import lowering
from conformance.programs import moves
from conformance.programs import sharded_programs
from runtime import xla_client

DTYPES = [capabilities.param(d) for d in dtype_helpers.TRANSFER_DTYPES]


def _describe(case: sharding_helpers.ShardedCase) -> str:
    return (f"NamedSharding(mesh={dict(case.mesh.shape)} over "
            f"{[d.id for d in case.mesh.devices.flat]}, spec={case.spec}), shape={case.shape}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_batched_device_put_shards_hold_their_slices(client, xc, dt, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    x = data.draw(strategies.bit_patterns(dt, case.shape), label="x")
    call = f"batched_device_put({dt.name}{list(case.shape)}, {_describe(case)})"
    with capabilities.gated(dt, call):
        arr = sharding_helpers.put_sharded(x, case.sharding, xc=xc)
        shards = [(s.device, s.index, np.asarray(s.data)) for s in arr.addressable_shards]
    with reproduction(call, inputs=[x]):
        assert arr.sharding == case.sharding, (
            f"out.sharding={arr.sharding}, but should be {case.sharding} [{call}]")
        assert arr.committed, f"out.committed=False, but should be True [{call}]"
        expected_index = case.sharding.devices_indices_map(case.shape)
        assert len(shards) == client.local_device_count(), (
            f"{len(shards)} addressable shards, but should be {client.local_device_count()}")
        for device, index, held in shards:
            assert index == expected_index[device], (
                f"shard on {device} has index {index}, but should be {expected_index[device]}")
            assertions.assert_bitwise_equal(held, x[index], call=f"{call}: shard on {device}")


@given(data=st.data())
def test_batched_device_put_committed_flag(client, xc, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    x = np.arange(int(np.prod(case.shape)), dtype=np.int32).reshape(case.shape)
    for committed in (True, False):
        arr = sharding_helpers.put_sharded(x, case.sharding, xc=xc, committed=committed)
        assert arr.committed is committed, (
            f"out.committed={arr.committed}, but should be {committed} "
            f"[batched_device_put(..., committed={committed})]")


def _split_meshes(devices) -> list[tuple[str, NamedSharding]]:
    """A replicated and a split sharding of a 1-D array over a 1-D mesh of ``devices``."""
    mesh = Mesh(np.array(devices), ("x",))
    return [("replicated", NamedSharding(mesh, PartitionSpec())),
            ("split", NamedSharding(mesh, PartitionSpec("x")))]


def _put_views_then_overwrite(client, xc, semantics, force_copy: bool, n: int) -> dict:
    """For a replicated and a split sharding over every device: put shards that are
    views of one aligned ``n``-element host array (not private copies), overwrite the
    array, and check every shard (:func:`host_memory.check_put_detaches`). Returns what each
    sharding's shards showed."""
    __tracebackhide__ = True
    seen = {}
    for name, sharding in _split_meshes(client.local_devices()):
        x = host_memory.host_buffer(n, np.float32, offset=0)
        call = (f"batched_device_put(float32[{n}] as views, {name}, force_copy={force_copy}, "
                f"{semantics.name})")
        seen[name] = host_memory.check_put_detaches(
            lambda h: sharding_helpers.put_sharded(h, sharding, xc=xc, force_copy=force_copy,
                                                   semantics=semantics, copy_shards=False),
            x, semantics, force_copy, call).value
    return seen


def test_force_copy_detaches_from_the_host_array(client, xc):
    """force_copy=True under every semantics, 1 MiB in all: the host shards handed over
    are views of the caller's aligned array, which is overwritten after the put; no
    shard may change."""
    count = client.local_device_count()
    n = count * (host_memory.transfer_sizes(4)["1MiB"] // count)  # about 1 MiB, divisible
    for semantics in xla_client.HostBufferSemantics.__members__.values():
        _put_views_then_overwrite(client, xc, semantics, True, n)


@pytest.mark.parametrize("force_copy", [False, True], ids=["no-force-copy", "force_copy"])
@pytest.mark.parametrize("semantics", list(xla_client.HostBufferSemantics.__members__.values()),
                         ids=lambda s: s.name)
def test_batched_device_put_then_overwrite_the_host_array(client, xc, semantics, force_copy,
                                                          record_property):
    """Shards handed over as views of an aligned host array (replicated: every shard is
    the whole array; split: each a slice); after a copying put overwriting the array
    changes no shard; aliasing under ZERO_COPY is recorded (``host_aliasing``)."""
    seen = _put_views_then_overwrite(client, xc, semantics, force_copy,
                                     64 * client.local_device_count())
    record_property("host_aliasing", ", ".join(f"{k}:{v}" for k, v in seen.items()))


@given(data=st.data())
def test_reorder_shards_preserves_data(client, xc, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    order = data.draw(st.permutations(client.local_devices()), label="order")
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = sharding_helpers.put_sharded(x, case.sharding, xc=xc)
    dst = sharding_helpers.reordered(case.sharding, list(order), len(case.shape))
    call = f"reorder_shards(x, dst over {[d.id for d in order]}, REUSE_INPUT) [{_describe(case)}]"
    out = xc.reorder_shards(arr, dst, xc.ArrayCopySemantics.REUSE_INPUT)
    assert out.sharding == dst, f"out.sharding={out.sharding}, but should be {dst} [{call}]"
    assertions.assert_bitwise_equal(np.asarray(out), x, call=call)
    assertions.assert_bitwise_equal(np.asarray(arr), x, call=f"input after {call}")


@pytest.mark.capability("multi_device")
@given(data=st.data())
def test_uneven_shapes_are_refused_clearly(client, xc, two_devices, data):
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices(), min_block=1),
                     label="case")
    pieces = sharding_helpers.shards_per_dim(case.mesh, case.spec, len(case.shape))
    cut = [i for i, p in enumerate(pieces) if p > 1]
    assume(cut)  # something is partitioned, so one more element cannot divide evenly
    shape = list(case.shape)
    shape[cut[0]] += 1
    x = np.zeros(shape, dtype=np.float32)
    aval = lowering.shaped_array(tuple(shape), x.dtype)
    with pytest.raises(ValueError, match="evenly divide"):  # not a silent partial put
        xc.batched_device_put(aval, case.sharding, [x] * client.local_device_count(),
                              client.local_devices())


# -- every mesh factorisation x every PartitionSpec, and pinned shards of 1 MiB ------------

def _check_shards(arr, x: np.ndarray, mesh: Mesh, spec: PartitionSpec, call: str) -> None:
    """Every device's shard holds the block NumPy expects from its mesh coordinates."""
    __tracebackhide__ = True
    expected = sharding_helpers.expected_index(mesh, spec, x.shape)
    shards = {s.device: s for s in arr.addressable_shards}
    assert set(shards) == set(expected), (
        f"shards on {sorted(d.id for d in shards)}, but should be on "
        f"{sorted(d.id for d in expected)} [{call}]")
    for device, index in expected.items():
        assertions.assert_bitwise_equal(np.asarray(shards[device].data), x[index],
                                        call=f"{call}: shard on {device} (mesh block {index})")


@pytest.mark.parametrize("mesh_ndim", [1, 2, 3], ids=["1d-meshes", "2d-meshes", "3d-meshes"])
def test_every_mesh_and_partition_spec(client, xc, mesh_ndim):
    """Every ordered factorisation of the device count into ``mesh_ndim`` axes, every
    assignment of those axes to the dimensions of a rank-``mesh_ndim`` array:
    ``batched_device_put`` puts on each device the block its mesh coordinates select
    (NumPy's slicing is the reference, not ``devices_indices_map``)."""
    devices = client.local_devices()
    for mesh_shape in sharding_helpers.mesh_shapes(len(devices), mesh_ndim):
        mesh = sharding_helpers.grid_mesh(devices, mesh_shape)
        for spec in sharding_helpers.all_partition_specs(mesh.axis_names, mesh_ndim):
            pieces = sharding_helpers.shards_per_dim(mesh, spec, mesh_ndim)
            shape = tuple(p * b for p, b in zip(pieces, (2, 3, 1)))
            x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
            call = f"batched_device_put(int32{list(shape)}, mesh {mesh_shape}, {spec})"
            arr = sharding_helpers.put_sharded(x, NamedSharding(mesh, spec), xc=xc)
            _check_shards(arr, x, mesh, spec, call)


@pytest.fixture(scope="module")
def runner(client, xc):
    return sharded_programs.ShardedRunner(client, xc)


@pytest.mark.parametrize("ndim", [1, 2, 3], ids=["1d-x", "2d-x-y", "3d-xy-z"])
def test_one_mib_shards(client, xc, runner, ndim):
    """Shards of 1 MiB each: ``batched_device_put`` places them, an SPMD program
    (``2 x + 1``) computes on them, ``reorder_shards`` moves them intact, and SPMD
    transpose, broadcast_in_dim and reverse move arbitrary bits across them exactly."""
    devices = client.local_devices()
    mesh, spec, shape = sharding_helpers.one_mib_shards(devices, ndim)
    mesh_shape = mesh.devices.shape
    sharding = NamedSharding(mesh, spec)
    x = np.random.default_rng(ndim).standard_normal(shape).astype(np.float32)
    call = f"float32{list(shape)} (1 MiB shards), mesh {mesh_shape}, {spec}"
    _check_shards(sharding_helpers.put_sharded(x, sharding, xc=xc), x, mesh, spec,
                  f"batched_device_put({call})")
    out, problem, text, _ = runner.run("affine", lambda a: a * 2 + 1, [x], [sharding],
                                       sharding, shape)
    with reproduction(f"execute_sharded(2 x + 1, {call})", program=text,
                      sharding=placement([sharding], sharding)):
        assert not problem, f"{problem} [execute_sharded(2 x + 1, {call})]"
        assertions.assert_bitwise_equal(out, x * np.float32(2) + np.float32(1),
                                        call=f"execute_sharded(2 x + 1, {call})")
    arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
    dst = sharding_helpers.reordered(sharding, devices[::-1], len(shape))
    moved = xc.reorder_shards(arr, dst, xc.ArrayCopySemantics.ALWAYS_COPY)
    assertions.assert_bitwise_equal(np.asarray(moved), x, call=f"reorder_shards({call}, reversed)")
    # Transpose, broadcast_in_dim and reverse of arbitrary float32 bits (NaN payloads,
    # subnormals) as SPMD programs under the same sharding: every shard moves, bit for bit.
    bits = np.random.default_rng(ndim).integers(0, 2**32, shape, np.uint32).view(np.float32)
    entries = tuple(spec) + (None,) * (len(shape) - len(spec))
    for move in moves.moves_of(shape):
        out_sharding = NamedSharding(mesh, PartitionSpec(*move.result_spec(entries)))
        what = f"execute_sharded({move.describe}, {call})"
        got, problem, text, _ = runner.run(f"one_mib_{move.name}", move.fn, [bits], [sharding],
                                           out_sharding, move.result_shape)
        with reproduction(what, program=text, inputs=[bits],
                          sharding=placement([sharding], out_sharding)):
            assert not problem, f"{problem} [{what}]"
            assertions.assert_bitwise_equal(got, move.expected(bits), call=what)


@pytest.mark.parametrize("spec", [("x", None), (None, "x")], ids=["P(x,None)", "P(None,x)"])
def test_zero_size_output_shards_have_the_shard_shape(client, runner, spec):
    """An SPMD program's zero-size output cut along its non-empty dimension: each device's
    output has the shard shape (``int32[0, n]`` under ``P(None, 'x')`` over n devices:
    shards of (0, 1)), not the global shape."""
    n = client.local_device_count()
    mesh = Mesh(np.array(client.local_devices()), ("x",))
    shape = (n, 0) if spec[0] else (0, n)
    sharding = NamedSharding(mesh, PartitionSpec(*spec))
    x = np.zeros(shape, np.int32)
    call = f"execute_sharded(add, int32{list(shape)} under {sharding.spec} over {n} devices)"
    out, problem, text, _ = runner.run("add", lax.add, [x, x], [sharding] * 2, sharding, shape)
    with reproduction(call, inputs=[x, x], program=text,
                      sharding=placement([sharding] * 2, sharding)):
        assert not problem, f"{problem} [{call}]"
        assertions.assert_exact(out, x, call=call)
