"""A partitioned program re-run through the PJRT C API with its recorded placement.

The below-the-framework check (:mod:`conformance.capi.child`) runs a program recorded
with a placement (``failures[].arrays.sharding``,
:func:`conformance.helpers.reproduction.placement`) the way the test ran it: compiled
once with ``num_partitions`` = the mesh size, the SPMD partitioner on and partition
``i`` on ``device_ids[i]``, each input cut by its PartitionSpec, executed on every
device at once (``PJRT_LoadedExecutable_Execute`` over all of them), and the output
assembled from its shards (replicas must agree bit for bit). NumPy only: no jax.

The standalone reproductions run the same code: :data:`STANDALONE` names the functions
that :func:`conformance.certification.rendering.repro.shared` copies, source and all, into
every bundle's ``repro/pjrt_repro.py`` (which imports nothing of this suite), so that a
C API plugin's partitioned failure is reproduced on the plugin, as here. They use only
``math``, ``numpy`` and each other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The functions copied into the standalone reproductions' ``pjrt_repro.py``.
STANDALONE = ("_axes", "block_index", "global_shape", "output_spec", "assemble",
              "device_assignment", "execute")


def declined_detail(partitions: int) -> str:
    """Why a program of ``partitions`` partitions without its placement is not re-run."""
    return (f"not run: partitioned program ({partitions} partitions) recorded without its "
            f"placement; the C API re-run would run one device, not the failing "
            f"configuration")


def _axes(entry: Any) -> list[str]:
    """The mesh axes of one PartitionSpec entry (None, a name or a list of names)."""
    return [] if entry is None else [entry] if isinstance(entry, str) else list(entry)


def block_index(sharding: dict[str, Any], spec: list[Any], partition: int,
                shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of a global array of ``shape`` that partition ``partition`` holds under
    ``spec`` (the first axis of an entry is the major one, as in jax). Raises ValueError
    when a dimension does not divide evenly."""
    sizes = dict(zip(sharding["axis_names"], sharding["mesh_shape"]))
    coords = dict(zip(sharding["axis_names"],
                      np.unravel_index(partition, sharding["mesh_shape"])))
    out = []
    for k, n in enumerate(shape):
        idx, pieces = 0, 1
        for axis in _axes(spec[k] if k < len(spec) else None):
            idx, pieces = idx * sizes[axis] + int(coords[axis]), pieces * sizes[axis]
        if n % pieces:
            raise ValueError(f"dimension {k} of {list(shape)} does not divide into {pieces}")
        out.append(slice(idx * (n // pieces), (idx + 1) * (n // pieces)))
    return tuple(out)


def global_shape(sharding: dict[str, Any], spec: list[Any],
                 shard: tuple[int, ...]) -> tuple[int, ...]:
    """The global shape of an output whose shards have shape ``shard`` under ``spec``."""
    sizes = dict(zip(sharding["axis_names"], sharding["mesh_shape"]))
    return tuple(n * math.prod(sizes[a] for a in _axes(spec[k] if k < len(spec) else None))
                 for k, n in enumerate(shard))


def output_spec(sharding: dict[str, Any], output: int) -> list[Any]:
    """The PartitionSpec (as listed) of output ``output``: its entry of ``out_specs``
    where the placement has one per output, else ``out_spec`` (every output's)."""
    specs = sharding.get("out_specs")
    return specs[output] if specs else sharding["out_spec"]


def assemble(sharding: dict[str, Any], shards: list[np.ndarray],
             output: int = 0) -> tuple[np.ndarray, str]:
    """The global output ``output`` from one shard per partition (its
    :func:`output_spec`), and a problem ('' when none): a shard of another shape than its
    partition's, or replicas of one block that differ in their bits."""
    spec = output_spec(sharding, output)
    shape = global_shape(sharding, spec, shards[0].shape)
    out, seen = np.zeros(shape, shards[0].dtype), {}
    for p, shard in enumerate(shards):
        where = block_index(sharding, spec, p, shape)
        if out[where].shape != shard.shape:
            return out, (f"partition {p} (device {sharding['device_ids'][p]}) returned "
                         f"shape {list(shard.shape)}, its block is {list(out[where].shape)}")
        key = tuple((w.start, w.stop) for w in where)
        if key in seen and seen[key].tobytes() != shard.tobytes():
            return out, (f"replicas of block {key} differ (device "
                         f"{sharding['device_ids'][p]})")
        seen[key] = shard
        out[where] = shard
    return out, ""


def device_assignment(device_ids: list[int]) -> bytes:
    """A serialized ``xla.DeviceAssignmentProto``: one replica, partition ``i`` on
    ``device_ids[i]`` (fields 1 replica_count, 2 computation_count, 3
    computation_devices, each with 1 replica_device_ids)."""
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)
    out = b"\x08\x01\x10" + varint(len(device_ids))
    for i in device_ids:
        inner = b"\x08" + varint(i)
        out += b"\x1a" + varint(len(inner)) + inner
    return out


def execute(client: Any, pypjrt: Any, program: str, inputs: list[np.ndarray],
        sharding: dict[str, Any], put: Any, get: Any) -> tuple[list[np.ndarray], str]:
    """Compile ``program`` for ``sharding``'s partitions and run it on their devices;
    return (the global outputs, a problem or ''). ``put(a, device)`` places a host
    array, ``get(buffer)`` reads one back. Raises LookupError when a recorded device is
    not one of the client's, ValueError for inputs that do not divide by their spec, and
    pypjrt's errors from compiling or running."""
    ids = [int(i) for i in sharding["device_ids"]]
    with client.devices() as devices:
        by_id = {d.id: d for d in devices}
        if any(i not in by_id for i in ids):
            raise LookupError(f"the placement needs devices {sorted(ids)}; the plugin's "
                              f"client has {sorted(by_id)}")
        many = len(ids) > 1
        opts = pypjrt.CompileOptions(num_replicas=1, num_partitions=len(ids),
                                     use_spmd_partitioning=many, use_shardy_partitioner=many,
                                     device_assignment=device_assignment(ids))
        exe = client.compile(program, options=opts)
        args = [[put(np.ascontiguousarray(a[block_index(sharding, spec, p, a.shape)])
                     if a.ndim else a, by_id[i])
                 for a, spec in zip(inputs, sharding["in_specs"])]
                for p, i in enumerate(ids)]
        per_device = exe.execute_sharded(args)
        outputs, problems = [], []
        for j in range(len(per_device[0])):
            out, problem = assemble(sharding, [get(row[j]) for row in per_device], j)
            outputs.append(out)
            problems += [f"output {j}: {problem}"] if problem else []
        return outputs, "; ".join(problems)
