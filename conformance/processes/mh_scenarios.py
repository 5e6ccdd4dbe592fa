"""Scenarios on a global mesh of every process's devices, beyond the collectives of
:mod:`conformance.processes.mp_scenarios`: global arrays built from local shards and
``reorder_shards`` across processes.

Registered in :data:`conformance.processes.mp_worker.SCENARIOS`; run on loopback by
:func:`conformance.processes.launcher.run_scenario` (area ``multihost``) and, in the
multi-host mode, once per process of a real cluster
(:mod:`conformance.processes.multihost`). Results are JSON-able observations; the checks
are in :mod:`conformance.processes.mp_checks`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from conformance.processes.mp_worker import Context, scenario, timed


def _digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


def _shards(arr: Any, x: np.ndarray) -> tuple[list[dict[str, Any]], list[str]]:
    """(this process's shards of ``arr`` as {device, index, digest}, mismatches against
    the host array ``x``)."""
    out, bad = [], []
    for shard in arr.addressable_shards:
        host = np.asarray(shard.data)
        want = x[shard.index]
        index = [[s.start, s.stop] for s in shard.index]
        if host.shape != want.shape or not np.array_equal(host, want):
            bad.append(f"device {shard.device.id} index {index}: holds {host.tolist()}, "
                       f"expected {want.tolist()}")
        out.append({"device": shard.device.id, "index": index, "digest": _digest(host)})
    return out, bad


@scenario
def global_arrays(ctx: Context) -> dict[str, Any]:
    """On the (proc, local) mesh of every process's devices: ``batched_device_put`` of
    this process's shards into one global array; the same array again from single-device
    arrays (``jax.make_array_from_single_device_arrays``); a program summing the global
    array (a cross-process all-reduce); and ``reorder_shards`` to the devices in reverse
    order (no data moves). ``params['rows']``: rows per device (default 2)."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from conformance.helpers import sharding_helpers
    from conformance.programs import lowering
    from conformance.programs.compiled_programs import ProgramCache
    from runtime import xla_client as xc

    ctx.join()
    client = ctx.cpu_client(collectives=True)
    devices = sorted(client.devices(), key=lambda d: (d.process_index, d.id))
    mesh = Mesh(np.array(devices).reshape(ctx.n, ctx.devices_per_process), ("proc", "local"))
    rows = ctx.params.get("rows", 2)
    shape = (ctx.n * rows, ctx.devices_per_process * 3)
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) - 7
    sharding = NamedSharding(mesh, PartitionSpec("proc", "local"))
    index = sharding.devices_indices_map(shape)
    mine = [d for d in client.local_devices()]
    put = xc.batched_device_put(lowering.shaped_array(shape, x.dtype), sharding,
                                [np.array(x[index[d]], order="C") for d in mine], mine,
                                True, False)
    out: dict[str, Any] = {"global_shape": list(put.shape),
                           "fully_addressable": bool(put.is_fully_addressable)}
    out["put_shards"], out["put_mismatches"] = _shards(put, x)
    singles = [s.data for s in put.addressable_shards]
    made, out["make_error"], _ = timed(lambda: jax.make_array_from_single_device_arrays(
        shape, sharding, singles))
    if made is not None:
        out["made_shards"], out["made_mismatches"] = _shards(made, x)
    replicated = NamedSharding(mesh, PartitionSpec())
    exe, _ = ProgramCache(client).load_sharded(
        "global-sum", lambda a: a.sum(dtype=np.int32), [x], [sharding], replicated)
    total = exe.execute_sharded([put]).disassemble_into_single_device_arrays()[0]
    out["sums"] = [int(np.asarray(t)) for t in total]
    out["expected_sum"] = int(x.sum(dtype=np.int32))
    order = list(reversed(devices))
    dst = sharding_helpers.reordered(sharding, order, len(shape))
    moved, out["reorder_error"], _ = timed(
        lambda: xc.reorder_shards(put, dst, xc.ArrayCopySemantics.REUSE_INPUT))
    if moved is not None:
        out["reorder_devices"] = [d.id for d in lowering.device_assignment_of(moved.sharding)]
        out["expected_reorder_devices"] = [d.id for d in order]
        out["reorder_shards"], out["reorder_mismatches"] = _shards(moved, x)
    ctx.client.wait_at_barrier("global_arrays_done", 60_000)
    del exe, total, put, made, moved, singles, client
    ctx.leave()
    return out
