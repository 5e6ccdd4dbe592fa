"""Meshes, PartitionSpecs and sharded host data for the sharding areas.

Strategies draw a mesh over the platform's devices (1-D, 2-D or 3-D, any
factorization of the device count, devices in a drawn order), a
``PartitionSpec`` for an array rank (each array dimension unsharded, on one
mesh axis or on several; each mesh axis used at most once; unused axes
replicate) and a global shape whose sharded dimensions divide evenly.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import jax_shardings
from runtime import xla_client

AXIS_NAMES = ("x", "y", "z")


def mesh_shapes(n: int, ndim: int) -> list[tuple[int, ...]]:
    """Every ``ndim``-axis mesh shape over ``n`` devices (ordered factorisations of ``n``,
    factors of 1 included): for 8 and 2 axes (1, 8), (2, 4), (4, 2), (8, 1).
    Raises ValueError for ``n`` < 1 or ``ndim`` < 1."""
    if n < 1 or ndim < 1:
        raise ValueError(f"mesh_shapes: arguments 'n' and 'ndim' must be >= 1, got {n}, {ndim}")
    if ndim == 1:
        return [(n,)]
    return [(d,) + rest for d in range(1, n + 1) if n % d == 0
            for rest in mesh_shapes(n // d, ndim - 1)]



def grid_mesh(devices: list[Any], shape: tuple[int, ...]) -> Mesh:
    """A ``Mesh`` of ``devices`` in their order, reshaped to ``shape`` (axes x, y, z)."""
    return Mesh(np.array(devices, dtype=object).reshape(shape), AXIS_NAMES[:len(shape)])


def one_mib_shards(devices: list[Any], ndim: int) -> tuple[Mesh, PartitionSpec, tuple[int, ...]]:
    """A pinned large case: the most even ``ndim``-axis mesh over ``devices`` (1 to 3), a
    spec that shards over every axis (``P('x')``, ``P('x', 'y')``, ``P(('x', 'y'), 'z')``)
    and a global shape whose float32 shards are 1 MiB each. Raises ValueError for
    another ``ndim``."""
    if ndim not in (1, 2, 3):
        raise ValueError(f"one_mib_shards: argument 'ndim' must be 1, 2 or 3, got {ndim}")
    mesh_shape = max(mesh_shapes(len(devices), ndim), key=lambda s: (min(s), s))
    spec = {1: PartitionSpec("x"), 2: PartitionSpec("x", "y"),
            3: PartitionSpec(("x", "y"), "z")}[ndim]
    block = {1: (1 << 18,), 2: (512, 512), 3: (512, 512)}[ndim]
    pieces = shards_per_dim(grid_mesh(devices, mesh_shape), spec, len(block))
    return grid_mesh(devices, mesh_shape), spec, tuple(b * p for b, p in zip(block, pieces))


def all_partition_specs(axis_names: tuple[str, ...], ndim: int) -> list[PartitionSpec]:
    """Every ``PartitionSpec`` of ``ndim`` entries over ``axis_names``: each mesh axis
    unused or on one array dimension, the order of several axes on one dimension
    mattering (``('x', 'y')`` and ``('y', 'x')`` are different specs)."""
    specs = []
    for placement in itertools.product(range(-1, ndim), repeat=len(axis_names)):
        groups = [[a for a, p in zip(axis_names, placement) if p == i] for i in range(ndim)]
        for orders in itertools.product(*[itertools.permutations(g) for g in groups]):
            specs.append(PartitionSpec(*[None if not o else o[0] if len(o) == 1 else tuple(o)
                                         for o in orders]))
    return specs


def expected_index(mesh: Mesh, spec: PartitionSpec, shape: tuple[int, ...]
                   ) -> dict[Any, tuple[slice, ...]]:
    """The block of a ``shape`` array each device of ``mesh`` holds under ``spec``,
    computed from the device's mesh coordinates (axes of one dimension major-first),
    independently of jax's ``devices_indices_map``. Raises ValueError when a sharded
    dimension does not divide evenly."""
    pieces = shards_per_dim(mesh, spec, len(shape))
    if any(n % p for n, p in zip(shape, pieces)):
        raise ValueError(f"expected_index: shape {shape} does not divide into {pieces} pieces")
    position = {a: i for i, a in enumerate(mesh.axis_names)}
    out = {}
    for coords in np.ndindex(*mesh.devices.shape):
        index = []
        for dim, (n, p) in enumerate(zip(shape, pieces)):
            entry = spec[dim] if dim < len(spec) else None
            block = 0
            for a in () if entry is None else (entry,) if isinstance(entry, str) else entry:
                block = block * mesh.shape[a] + coords[position[a]]
            index.append(slice(block * (n // p), (block + 1) * (n // p)))
        out[mesh.devices[coords]] = tuple(index)
    return out


@st.composite
def meshes(draw: st.DrawFn, devices: list[Any], *, max_dims: int = 3) -> Mesh:
    """A ``Mesh`` over all ``devices`` in a drawn order, 1 to ``max_dims`` axes."""
    if not devices:
        raise ValueError("meshes: argument 'devices' must be a non-empty list")
    if not 1 <= max_dims <= len(AXIS_NAMES):
        raise ValueError(f"meshes: argument 'max_dims' must be in [1, 3], got {max_dims}")
    ndim = draw(st.integers(1, max_dims))
    shape = draw(st.sampled_from(mesh_shapes(len(devices), ndim)))
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


@st.composite
def divisible_partition_specs(draw: st.DrawFn, mesh: Mesh, shape: tuple[int, ...]
                              ) -> PartitionSpec:
    """A ``PartitionSpec`` for an array of ``shape`` over ``mesh``: each dimension
    unsharded (what a shrunk example keeps) or sharded by one or two mesh axes not used
    by another dimension, whose sizes' product divides it (jax refuses an output
    sharding that does not divide its dimension). The sliced, updated or reduced
    dimension of a program is drawn like any other."""
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    free = list(mesh.axis_names)
    entries: list[Any] = []
    for n in shape:
        options: list[tuple[str, ...]] = [()]
        options += [(a,) for a in free if n % sizes[a] == 0]
        options += [(a, b) for a in free for b in free
                    if a != b and n % (sizes[a] * sizes[b]) == 0]
        axes = draw(st.sampled_from(options))
        for a in axes:
            free.remove(a)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
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
                force_copy: bool = False, semantics: Any = None,
                copy_shards: bool = True) -> Any:
    """``batched_device_put`` of ``x``'s per-device slices under ``sharding``.

    ``copy_shards=False`` hands the runtime views of ``x`` itself (no private copies),
    so that aliasing of the caller's memory can be observed.
    """
    index = sharding.devices_indices_map(x.shape)
    devices = list(index)
    kwargs = {}
    if semantics is not None:
        kwargs["host_buffer_semantics"] = semantics
    shards = [np.array(x[index[d]], copy=True, order="C") if copy_shards else x[index[d]]
              for d in devices]
    return xc.batched_device_put(jax_shardings.shaped_array(x.shape, x.dtype), sharding, shards,
                                 devices, committed, force_copy, **kwargs)


def reordered(sharding: Any, order: list[Any], ndim: int) -> Any:
    """The sharding over devices ``order`` (a permutation of ``sharding``'s devices)
    under which every device keeps the shard index it has now: the destination
    that ``reorder_shards`` expects."""
    old = jax_shardings.hlo_sharding_of(sharding, ndim)
    if old.is_replicated():
        return xla_client.GSPMDSharding(order, old)
    current = jax_shardings.device_assignment_of(sharding)
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
