"""Area sharding: shardings over drawn meshes, ``batched_device_put`` and ``reorder_shards``
(seed 000/001 shardings, ``batched_device_put``, ``reorder_shards``).

Meshes are drawn over all local devices (1-D, 2-D, 3-D, any device order),
PartitionSpecs put array dimensions on none, one or several mesh axes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import assertions as ph
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers as dh
from conformance.helpers import sharding_helpers as shh
from conformance.helpers import strategies as hh
from conformance.helpers.reproduction import reproduction
from conformance.programs import lowering
from runtime import xla_client

DTYPES = [capabilities.param(d) for d in dh.TRANSFER_DTYPES]


def _describe(case: shh.ShardedCase) -> str:
    return (f"NamedSharding(mesh={dict(case.mesh.shape)} over "
            f"{[d.id for d in case.mesh.devices.flat]}, spec={case.spec}), shape={case.shape}")


@given(data=st.data())
def test_indices_map_covers_each_element_once_per_replica(client, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    pieces = int(np.prod(shh.shards_per_dim(case.mesh, case.spec, len(case.shape))))
    replicas = client.local_device_count() // pieces
    counts = shh.coverage(case.sharding, case.shape)
    bad = np.argwhere(counts != replicas)
    assert bad.size == 0, (
        f"devices_indices_map covers element {tuple(bad[0])} {counts[tuple(bad[0])]} time(s), "
        f"but should cover every element {replicas} time(s) [{_describe(case)}]")


@given(data=st.data())
def test_equivalent_shardings_are_equal_and_hash_equal(client, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    ndim = len(case.shape)
    padded = NamedSharding(case.mesh, PartitionSpec(*case.spec, *([None] * (ndim - len(case.spec)))))
    assert padded == case.sharding and hash(padded) == hash(case.sharding), (
        f"{padded} and {case.sharding} differ only by trailing None, but compare unequal or "
        "hash differently")
    gspmd = _as_gspmd(case)
    assert gspmd.is_equivalent_to(case.sharding, ndim), (
        f"GSPMDSharding from the HloSharding of {_describe(case)} is not equivalent to it")
    assert gspmd.devices_indices_map(case.shape) == case.sharding.devices_indices_map(
        case.shape), f"GSPMDSharding and NamedSharding place shards differently [{_describe(case)}]"


def _as_gspmd(case: shh.ShardedCase):
    """The GSPMDSharding with the same devices and HloSharding as ``case.sharding``."""
    hlo = lowering.hlo_sharding_of(case.sharding, len(case.shape))
    return xla_client.GSPMDSharding(lowering.device_assignment_of(case.sharding), hlo)


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


@given(data=st.data())
def test_hlo_sharding_round_trip_and_predicates(client, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    hlo = lowering.hlo_sharding_of(case.sharding, len(case.shape))
    again = xla_client.HloSharding.from_proto(hlo.to_proto())
    assert again == hlo and hash(again) == hash(hlo), (
        f"HloSharding.from_proto(to_proto()) = {again}, but should be {hlo} [{_describe(case)}]")
    pieces = int(np.prod(shh.shards_per_dim(case.mesh, case.spec, len(case.shape))))
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


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_batched_device_put_shards_hold_their_slices(client, xc, dt, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    x = data.draw(hh.bit_patterns(dt, case.shape), label="x")
    call = f"batched_device_put({dt.name}{list(case.shape)}, {_describe(case)})"
    with capabilities.gated(dt, call):
        arr = shh.put_sharded(x, case.sharding, xc=xc)
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
            ph.assert_bitwise_equal(held, x[index], call=f"{call}: shard on {device}")


@given(data=st.data())
def test_batched_device_put_committed_flag(client, xc, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    x = np.arange(int(np.prod(case.shape)), dtype=np.int32).reshape(case.shape)
    for committed in (True, False):
        arr = shh.put_sharded(x, case.sharding, xc=xc, committed=committed)
        assert arr.committed is committed, (
            f"out.committed={arr.committed}, but should be {committed} "
            f"[batched_device_put(..., committed={committed})]")


def test_force_copy_detaches_from_the_host_array(client, xc):
    x = np.arange(64, dtype=np.float32)
    keep = x.copy()
    sharding = NamedSharding(Mesh(np.array(client.local_devices()), ("x",)), PartitionSpec())
    arr = shh.put_sharded(x, sharding, xc=xc, force_copy=True,
                          semantics=xla_client.HostBufferSemantics.ZERO_COPY)
    arr.block_until_ready()
    x[:] = -1
    for shard in arr.addressable_shards:
        ph.assert_bitwise_equal(np.asarray(shard.data), keep,
                                call=f"batched_device_put(force_copy=True) then host write, "
                                     f"shard on {shard.device}")


@given(data=st.data())
def test_reorder_shards_preserves_data(client, xc, data):
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    order = data.draw(st.permutations(client.local_devices()), label="order")
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = shh.put_sharded(x, case.sharding, xc=xc)
    dst = shh.reordered(case.sharding, list(order), len(case.shape))
    call = f"reorder_shards(x, dst over {[d.id for d in order]}, REUSE_INPUT) [{_describe(case)}]"
    out = xc.reorder_shards(arr, dst, xc.ArrayCopySemantics.REUSE_INPUT)
    assert out.sharding == dst, f"out.sharding={out.sharding}, but should be {dst} [{call}]"
    ph.assert_bitwise_equal(np.asarray(out), x, call=call)
    ph.assert_bitwise_equal(np.asarray(arr), x, call=f"input after {call}")


@pytest.mark.capability("multi_device")
@given(data=st.data())
def test_uneven_shapes_are_refused_clearly(client, xc, two_devices, data):
    case = data.draw(shh.sharded_cases(client.local_devices(), min_block=1), label="case")
    pieces = shh.shards_per_dim(case.mesh, case.spec, len(case.shape))
    cut = [i for i, p in enumerate(pieces) if p > 1]
    assume(cut)  # something is partitioned, so one more element cannot divide evenly
    shape = list(case.shape)
    shape[cut[0]] += 1
    x = np.zeros(shape, dtype=np.float32)
    aval = lowering.shaped_array(tuple(shape), x.dtype)
    with pytest.raises(ValueError, match="evenly divide"):  # not a silent partial put
        xc.batched_device_put(aval, case.sharding, [x] * client.local_device_count(),
                              client.local_devices())
