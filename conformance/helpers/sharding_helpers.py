"""Meshes, PartitionSpecs and sharded host data for the sharding areas (alias ``shh``).

Strategies draw a mesh over the platform's devices (1-D, 2-D or 3-D, any
factorization of the device count, devices in a drawn order), a
``PartitionSpec`` for an array rank (each array dimension unsharded, on one
mesh axis or on several; each mesh axis used at most once; unused axes
replicate) and a global shape whose sharded dimensions divide evenly.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.programs import lowering
from runtime import xla_client

AXIS_NAMES = ("x", "y", "z")


def _factorizations(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(n,)]
    return [(d,) + rest for d in range(1, n + 1) if n % d == 0
            for rest in _factorizations(n // d, parts - 1)]


@st.composite
def meshes(draw: st.DrawFn, devices: list[Any], *, max_dims: int = 3) -> Mesh:
    """A ``Mesh`` over all ``devices`` in a drawn order, 1 to ``max_dims`` axes."""
    if not devices:
        raise ValueError("meshes: argument 'devices' must be a non-empty list")
    if not 1 <= max_dims <= len(AXIS_NAMES):
        raise ValueError(f"meshes: argument 'max_dims' must be in [1, 3], got {max_dims}")
    ndim = draw(st.integers(1, max_dims))
    shape = draw(st.sampled_from(_factorizations(len(devices), ndim)))
    order = draw(st.permutations(range(len(devices))))
    grid = np.array([devices[i] for i in order], dtype=object).reshape(shape)
    return Mesh(grid, AXIS_NAMES[:ndim])


@st.composite
def partition_specs(draw: st.DrawFn, mesh: Mesh, ndim: int) -> PartitionSpec:
    """A ``PartitionSpec`` of ``ndim`` entries over ``mesh``'s axes (each used at most once)."""
    free = list(mesh.axis_names)
    entries: list[Any] = []
    for _ in range(ndim):
        k = draw(st.integers(0, min(2, len(free))))
        axes = draw(st.permutations(free))[:k] if k else []
        for a in axes:
            free.remove(a)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else tuple(axes))
    return PartitionSpec(*entries)


def shards_per_dim(mesh: Mesh, spec: PartitionSpec, ndim: int) -> list[int]:
    """Number of pieces each array dimension is cut into."""
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    out = []
    for i in range(ndim):
        entry = spec[i] if i < len(spec) else None
        axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        out.append(math.prod(sizes[a] for a in axes))
    return out


class ShardedCase(NamedTuple):
    """A drawn sharding case: the sharding, its mesh and spec, and a global shape."""

    sharding: NamedSharding
    mesh: Mesh
    spec: PartitionSpec
    shape: tuple[int, ...]


@st.composite
def sharded_cases(draw: st.DrawFn, devices: list[Any], *, max_rank: int = 3,
                  min_block: int = 0, max_block: int = 3) -> ShardedCase:
    """A NamedSharding over a drawn mesh and spec, with an evenly divisible shape whose
    per-shard sides are in [min_block, max_block] (0: zero-size arrays included)."""
    if not 0 <= min_block <= max_block:
        raise ValueError(f"sharded_cases: need 0 <= min_block <= max_block, got {min_block}, "
                         f"{max_block}")
    mesh = draw(meshes(devices))
    rank = draw(st.integers(0, max_rank))
    spec = draw(partition_specs(mesh, rank))
    pieces = shards_per_dim(mesh, spec, rank)
    shape = tuple(p * draw(st.integers(min_block, max_block)) for p in pieces)
    return ShardedCase(NamedSharding(mesh, spec), mesh, spec, shape)


def coverage(sharding: Any, shape: tuple[int, ...]) -> np.ndarray:
    """How many devices hold each element of a ``shape`` array under ``sharding``."""
    counts = np.zeros(shape, dtype=np.int64)
    for index in sharding.devices_indices_map(shape).values():
        counts[index] += 1
    return counts


def put_sharded(x: np.ndarray, sharding: Any, *, xc: Any = xla_client, committed: bool = True,
                force_copy: bool = False, semantics: Any = None) -> Any:
    """``batched_device_put`` of ``x``'s per-device slices under ``sharding``."""
    index = sharding.devices_indices_map(x.shape)
    devices = list(index)
    kwargs = {}
    if semantics is not None:
        kwargs["host_buffer_semantics"] = semantics
    shards = [np.array(x[index[d]], copy=True, order="C") for d in devices]
    return xc.batched_device_put(lowering.shaped_array(x.shape, x.dtype), sharding, shards,
                                 devices, committed, force_copy, **kwargs)


def reordered(sharding: Any, order: list[Any], ndim: int) -> Any:
    """The sharding over devices ``order`` (a permutation of ``sharding``'s devices)
    under which every device keeps the shard index it has now: the destination
    that ``reorder_shards`` expects."""
    old = lowering.hlo_sharding_of(sharding, ndim)
    if old.is_replicated():
        return xla_client.GSPMDSharding(order, old)
    current = lowering.device_assignment_of(sharding)
    position = {d.id: i for i, d in enumerate(order)}
    proto = old.to_proto()
    proto.iota_reshape_dims = []
    proto.iota_transpose_perm = []
    proto.tile_assignment_devices = [position[current[i].id]
                                     for i in old.tile_assignment_devices()]
    return xla_client.GSPMDSharding(order, xla_client.HloSharding.from_proto(proto))


def moved(case: ShardedCase, order: list[Any]) -> NamedSharding:
    """The destination for ``batched_copy_array_to_devices_with_sharding`` that sends
    shard *k* of an array sharded by ``case`` to ``order[k]``: the same spec over a
    mesh of the same shape holding ``order``."""
    grid = np.array(order, dtype=object).reshape(case.mesh.devices.shape)
    return NamedSharding(Mesh(grid, case.mesh.axis_names), case.spec)
