"""Helpers of the transfer and sharding areas: they classify and reject what they should."""

import ctypes
import types

import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec

from conformance.helpers import host_memory
from conformance.helpers import sharding_helpers
from conformance.programs import ffi_build


def test_host_buffer_alignment_and_pattern():
    for offset in host_memory.ALIGNMENTS.values():
        x = host_memory.host_buffer(1000, np.float32, offset=offset)
        assert host_memory.misalignment(x) == offset and x.flags.writeable and np.all(x != 0)


@pytest.mark.parametrize("kwargs,match", [
    (dict(n=-1, dtype=np.float32, offset=0), "argument 'n' must be >= 0"),
    (dict(n=4, dtype=np.float32, offset=2), "argument 'offset' must be a multiple of 4"),
    (dict(n=4, dtype=np.uint8, offset=64), r"in \[0, 64\), got 64"),
])
def test_host_buffer_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        host_memory.host_buffer(kwargs.pop("n"), kwargs.pop("dtype"), **kwargs)


def test_transfer_sizes_per_profile():
    ci = host_memory.transfer_sizes(4, "ci")
    assert ci == {"empty": 0, "one": 1, "under-page": 1021, "1MiB": 1 << 18}
    assert host_memory.transfer_sizes(4, "nightly")["64MiB"] * 4 == 64 << 20
    with pytest.raises(ValueError, match="argument 'itemsize' must divide 4096, got 3"):
        host_memory.transfer_sizes(3, "ci")


class _Fake:
    """A one-shard 'device array' that holds whatever ``hold(x)`` returns."""

    def __init__(self, held):
        self.addressable_shards = [types.SimpleNamespace(index=(slice(None),), data=held)]

    def block_until_ready(self):
        return self


@pytest.mark.parametrize("hold,seen", [
    (lambda x: x.copy(), host_memory.Seen.COPY),
    (lambda x: x, host_memory.Seen.ALIASED),
    (lambda x: x[::-1].copy(), host_memory.Seen.CORRUPT),
])
def test_observe_put_classifies(hold, seen):
    x = host_memory.host_buffer(16, np.int32, offset=0)
    assert host_memory.observe_put(lambda h: _Fake(hold(h)), x).seen is seen


class _TornFake(_Fake):
    """Half of the shard aliases the host array, half was copied at put time."""

    def __init__(self, h):
        self.h, self.old = h, h.copy()

    @property
    def addressable_shards(self):
        held = np.concatenate([self.h[:8], self.old[8:]])
        return [types.SimpleNamespace(index=(slice(None),), data=held)]


def test_observe_put_sees_a_torn_alias():
    x = host_memory.host_buffer(16, np.int32, offset=0)
    assert host_memory.observe_put(_TornFake, x).seen is host_memory.Seen.CORRUPT


def test_check_put_detaches_fails_on_aliasing_under_a_copying_semantics():
    semantics = types.SimpleNamespace(name="IMMUTABLE_UNTIL_TRANSFER_COMPLETES")
    x = host_memory.host_buffer(16, np.int32, offset=0)
    with pytest.raises(AssertionError, match="must copy"):
        host_memory.check_put_detaches(lambda h: _Fake(h), x, semantics, False, "put")
    zero_copy = types.SimpleNamespace(name="ZERO_COPY")
    assert host_memory.check_put_detaches(lambda h: _Fake(h),
                                          host_memory.host_buffer(4, np.int32, offset=0), zero_copy,
                                          False, "put") is host_memory.Seen.ALIASED
    with pytest.raises(AssertionError, match="must copy"):
        host_memory.check_put_detaches(lambda h: _Fake(h),
                                       host_memory.host_buffer(4, np.int32, offset=0), zero_copy,
                                       True, "put")
    with pytest.raises(AssertionError):
        host_memory.check_put_detaches(lambda h: _TornFake(h),
                                       host_memory.host_buffer(16, np.int32, offset=0), zero_copy,
                                       False, "put")


def test_mesh_shapes_and_specs():
    assert sharding_helpers.mesh_shapes(8, 2) == [(1, 8), (2, 4), (4, 2), (8, 1)]
    assert (2, 2, 2) in sharding_helpers.mesh_shapes(8, 3)
    assert sharding_helpers.mesh_shapes(1, 3) == [(1, 1, 1)]
    with pytest.raises(ValueError, match="must be >= 1"):
        sharding_helpers.mesh_shapes(0, 2)
    specs = sharding_helpers.all_partition_specs(("x", "y"), 2)
    assert len(specs) == len(set(specs)) == 11
    assert PartitionSpec(("y", "x"), None) in specs and PartitionSpec(None, "x") in specs


class _Dev:
    def __init__(self, i):
        self.id = i

    def __repr__(self):
        return f"d{self.id}"


def test_expected_index_follows_mesh_coordinates_major_first():
    devices = [_Dev(i) for i in range(4)]
    mesh = Mesh(np.array(devices, dtype=object).reshape(2, 2), ("x", "y"))
    index = sharding_helpers.expected_index(mesh, PartitionSpec(("y", "x")), (8,))
    # device at mesh (x=1, y=0) is block y*2 + x = 1 under ('y', 'x')
    assert index[devices[2]] == (slice(2, 4),) and index[devices[1]] == (slice(4, 6),)
    with pytest.raises(ValueError, match="does not divide"):
        sharding_helpers.expected_index(mesh, PartitionSpec("x"), (3,))


@pytest.mark.parametrize("count", [1, 6, 8])
def test_one_mib_shards_are_one_mib(count):
    devices = [_Dev(i) for i in range(count)]
    for ndim in (1, 2, 3):
        mesh, spec, shape = sharding_helpers.one_mib_shards(devices, ndim)
        pieces = sharding_helpers.shards_per_dim(mesh, spec, len(shape))
        assert mesh.devices.size == count and np.prod(pieces) == count
        assert int(np.prod(shape)) // count * 4 == 1 << 20, (ndim, shape)
    with pytest.raises(ValueError, match="argument 'ndim' must be 1, 2 or 3, got 4"):
        sharding_helpers.one_mib_shards(devices, 4)


def test_handler_capsule_names_a_missing_symbol():
    lib = ctypes.CDLL(None)
    with pytest.raises(ValueError, match="argument 'symbol' 'NoSuchHandler' is not exported"):
        ffi_build.handler_capsule(lib, "NoSuchHandler")
