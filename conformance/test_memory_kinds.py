"""Area memory_kinds: arrays in each memory a device lists, and copies between them
(seed 000 ``Memory``, ``Device.addressable_memories``; shardings' ``memory_kind``).

``device`` (the default memory) is core; ``pinned_host`` and ``unpinned_host``
belong to the ``memory_kinds`` capability. A kind the platform does not list
must be refused with a clear error, and its tests are then ``not_supported``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import assertions as ph
from conformance.helpers import sharding_helpers as shh
from conformance.helpers.capabilities import not_supported

KINDS = ("device", "pinned_host", "unpinned_host")


def _kind_param(*kinds: str):
    core = all(k == "device" for k in kinds)
    marks = [] if core else [pytest.mark.capability("memory_kinds")]
    return pytest.param(*kinds, id="-".join(kinds), marks=marks)


def _require(client, *kinds: str) -> None:
    """Skip as not_supported when a kind is not listed (after checking that using it
    anyway is a clear error)."""
    listed = {m.kind for m in client.local_devices()[0].addressable_memories()}
    for kind in kinds:
        if kind not in listed:
            with pytest.raises((ValueError, RuntimeError)):
                client.local_devices()[0].memory(kind)
            not_supported(f"memory kind {kind!r} is not listed by the platform "
                          f"({sorted(listed)})")


def test_memories_are_listed_consistently(device):
    kinds = [m.kind for m in device.addressable_memories()]
    assert kinds and all(isinstance(k, str) and k for k in kinds), (
        f"{device}.addressable_memories() kinds {kinds}, but should be non-empty strings")
    assert device.default_memory().kind in kinds, (
        f"default_memory().kind={device.default_memory().kind!r} not in {kinds} [{device}]")
    for kind in kinds:
        assert device.memory(kind).kind == kind, (
            f"{device}.memory({kind!r}).kind={device.memory(kind).kind!r}")
        assert device in device.memory(kind).addressable_by_devices(), (
            f"{device}.memory({kind!r}) is not addressable by {device}")


def test_unknown_memory_kind_is_a_clear_error(client, device):
    with pytest.raises((ValueError, RuntimeError), match="no_such_memory") as info:
        device.memory("no_such_memory")
    with pytest.raises(ValueError, match="no_such_memory"):
        mesh = Mesh(np.array(client.local_devices()), ("x",))
        NamedSharding(mesh, PartitionSpec(), memory_kind="no_such_memory")
    assert "device" in str(info.value), f"error does not list the available kinds: {info.value}"


@pytest.mark.parametrize("kind", [_kind_param(k) for k in KINDS])
@given(data=st.data())
def test_put_into_memory_kind(client, xc, kind, data):
    _require(client, kind)
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    sharding = case.sharding.with_memory_kind(kind)
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = shh.put_sharded(x, sharding, xc=xc)
    call = f"batched_device_put(..., memory_kind={kind!r})"
    assert arr.sharding.memory_kind == kind, (
        f"out.sharding.memory_kind={arr.sharding.memory_kind!r}, but should be {kind!r} [{call}]")
    for shard in arr.addressable_shards:
        ph.assert_bitwise_equal(np.asarray(shard.data), x[shard.index],
                                call=f"{call}: shard on {shard.device}")


@pytest.mark.parametrize("src,dst", [_kind_param(a, b) for a in KINDS for b in KINDS])
@given(data=st.data())
def test_copy_between_memory_kinds(client, xc, src, dst, data):
    _require(client, src, dst)
    case = data.draw(shh.sharded_cases(client.local_devices()), label="case")
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = shh.put_sharded(x, case.sharding.with_memory_kind(src), xc=xc)
    devices = xc.DeviceList(tuple(case.mesh.devices.flat))
    target = case.sharding.with_memory_kind(dst)
    call = f"batched_copy_array_to_devices_with_sharding({src} -> {dst}, ALWAYS_COPY)"
    (out,) = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [devices], [target], [xc.ArrayCopySemantics.ALWAYS_COPY])
    assert out.sharding.memory_kind == dst, (
        f"out.sharding.memory_kind={out.sharding.memory_kind!r}, but should be {dst!r} [{call}]")
    ph.assert_bitwise_equal(np.asarray(out), x, call=call)
    ph.assert_bitwise_equal(np.asarray(arr), x, call=f"input after {call}")
