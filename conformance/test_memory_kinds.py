"""Area memory_kinds: arrays in each memory a device lists, and copies between them
(the xla_client API's ``Memory``, ``Device.addressable_memories``; shardings'
``memory_kind``).

``device`` (the default memory) is core; ``pinned_host`` and ``unpinned_host``
belong to the ``memory_kinds`` capability. A kind the platform does not list
must be refused with a clear error, and its tests are then ``not_supported``.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import assertions
from conformance.helpers import sharding_helpers
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
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    sharding = case.sharding.with_memory_kind(kind)
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
    call = f"batched_device_put(..., memory_kind={kind!r})"
    assert arr.sharding.memory_kind == kind, (
        f"out.sharding.memory_kind={arr.sharding.memory_kind!r}, but should be {kind!r} [{call}]")
    for shard in arr.addressable_shards:
        assertions.assert_bitwise_equal(np.asarray(shard.data), x[shard.index],
                                        call=f"{call}: shard on {shard.device}")


@pytest.mark.parametrize("src,dst", [_kind_param(a, b) for a in KINDS for b in KINDS])
@given(data=st.data())
def test_copy_between_memory_kinds(client, xc, src, dst, data):
    _require(client, src, dst)
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices()), label="case")
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    arr = sharding_helpers.put_sharded(x, case.sharding.with_memory_kind(src), xc=xc)
    devices = xc.DeviceList(tuple(case.mesh.devices.flat))
    target = case.sharding.with_memory_kind(dst)
    call = f"batched_copy_array_to_devices_with_sharding({src} -> {dst}, ALWAYS_COPY)"
    (out,) = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [devices], [target], [xc.ArrayCopySemantics.ALWAYS_COPY])
    assert out.sharding.memory_kind == dst, (
        f"out.sharding.memory_kind={out.sharding.memory_kind!r}, but should be {dst!r} [{call}]")
    assertions.assert_bitwise_equal(np.asarray(out), x, call=call)
    assertions.assert_bitwise_equal(np.asarray(arr), x, call=f"input after {call}")


# -- where each shard's buffer lives ------------------------------------------------------

_SHARD = 1 << 18  # float32 elements: 1 MiB per shard


def _one_mib_shards(client, kind: str):
    """(name, sharding, host array) for a replicated and a split 1-D array over every
    device in memory ``kind``; every shard is 1 MiB."""
    devices = client.local_devices()
    mesh = Mesh(np.array(devices), ("x",))
    for name, spec, n in (("replicated", PartitionSpec(), _SHARD),
                          ("split", PartitionSpec("x"), _SHARD * len(devices))):
        yield name, NamedSharding(mesh, spec, memory_kind=kind), np.arange(n, dtype=np.float32)


@pytest.mark.parametrize("kind", [_kind_param(k) for k in KINDS])
def test_each_shard_lives_in_the_named_memory(client, xc, kind):
    """Every shard's buffer (not only the array's sharding) reports the memory kind the
    sharding names, and holds its slice; the same after a copy into that kind."""
    _require(client, kind)
    for name, sharding, x in _one_mib_shards(client, kind):
        arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
        _check_shard_memory(arr, x, kind, f"batched_device_put(float32[{x.size}], {name}, "
                                          f"memory_kind={kind!r})")
        _check_shard_memory(_copy_to(xc, arr, sharding), x, kind,
                            f"copy(float32[{x.size}], {name}, device -> {kind!r})")


def _check_shard_memory(arr, x: np.ndarray, kind: str, call: str) -> None:
    __tracebackhide__ = True
    for shard in arr.addressable_shards:
        held = shard.data.sharding.memory_kind
        assert held == kind, (f"the shard on {shard.device} lives in memory {held!r}, "
                              f"but should be in {kind!r} [{call}]")
        assertions.assert_bitwise_equal(np.asarray(shard.data), x[shard.index],
                                        call=f"{call}: shard on {shard.device}")


def _copy_to(xc, arr, sharding):
    """``arr`` copied (ALWAYS_COPY) from the default memory into ``sharding``'s kind."""
    src = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [xc.DeviceList(tuple(sharding.mesh.devices.flat))],
        [sharding.with_memory_kind("device")], [xc.ArrayCopySemantics.ALWAYS_COPY])[0]
    return xc.batched_copy_array_to_devices_with_sharding(
        [src], [xc.DeviceList(tuple(sharding.mesh.devices.flat))], [sharding],
        [xc.ArrayCopySemantics.ALWAYS_COPY])[0]


def _in_use(devices) -> dict[int, int] | None:
    stats = [d.memory_stats() for d in devices]
    if any(s is None or "bytes_in_use" not in s for s in stats):
        return None
    return {d.id: int(s["bytes_in_use"]) for d, s in zip(devices, stats)}


@pytest.mark.informational  # memory_stats() is optional (None on jaxlib's CPU client)
@pytest.mark.parametrize("kind", [_kind_param(k) for k in KINDS])
def test_memory_stats_account_for_the_memory_kind(client, xc, kind):
    """Where the platform reports ``memory_stats()``: a 1 MiB shard in ``device`` memory
    raises that device's ``bytes_in_use`` by at least 1 MiB; one in a host memory kind
    raises it by less (it lives in host memory). Informational: skipped where
    ``memory_stats()`` is None; a wrong accounting is still a wrong result."""
    _require(client, kind)
    devices = client.local_devices()
    if _in_use(devices) is None:
        pytest.skip(f"{client.platform} reports no memory_stats()['bytes_in_use']: host vs "
                    "device accounting cannot be observed")
    nbytes = _SHARD * 4
    for name, sharding, x in _one_mib_shards(client, kind):
        gc.collect()
        before = _in_use(devices)
        arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
        arr.block_until_ready()
        grew = {i: v - before[i] for i, v in _in_use(devices).items()}
        call = f"batched_device_put(float32[{x.size}], {name}, memory_kind={kind!r})"
        wrong = {i: g for i, g in grew.items() if (g >= nbytes) != (kind == "device")}
        assert not wrong, (
            f"device bytes_in_use grew by {wrong} bytes on devices {sorted(wrong)}, but a "
            f"{nbytes}-byte shard in {kind!r} memory should add "
            f"{'at least' if kind == 'device' else 'less than'} {nbytes} [{call}]")
        del arr
