"""The scenarios of the multi_process area, run by every worker process
(:mod:`conformance.processes.mp_worker`) of :func:`conformance.processes.launcher.run_scenario`.

Each takes the process's :class:`~conformance.processes.mp_worker.Context` and returns a
JSON-able dict of observations (errors as ``"Type: first line"``, times in seconds); the
test in ``conformance/test_multi_process.py`` asserts on them.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import numpy as np

from conformance.processes.mp_worker import Context, mark, scenario, timed


@scenario
def key_value(ctx: Context) -> dict[str, Any]:
    """Set/get across processes, allow_overwrite both ways, unicode and large values,
    and a get of a missing key that must time out within its timeout."""
    c = ctx.join()
    values = {"mp/ascii": "hello", "mp/unicode": "ключ-値-🔑-\u00e9",
              "mp/large": "x" * ctx.params.get("large_bytes", 1 << 20)}
    if ctx.pid == 0:
        for k, v in values.items():
            c.key_value_set(k, v)
    c.wait_at_barrier("kv_set", 30_000)
    got = {k: hashlib.sha256(c.blocking_key_value_get(k, 10_000).encode()).hexdigest()
           for k in values}
    own = f"mp/p{ctx.pid}"
    c.key_value_set(own, "first")
    _, duplicate, _ = timed(lambda: c.key_value_set(own, "second"))
    c.key_value_set(own, f"third-{ctx.pid}", allow_overwrite=True)
    c.wait_at_barrier("kv_overwrite", 30_000)
    peers = [c.blocking_key_value_get(f"mp/p{j}", 10_000) for j in range(ctx.n)]
    timeout_ms = ctx.params.get("missing_timeout_ms", 1000)
    _, missing, elapsed = timed(lambda: c.blocking_key_value_get("mp/never-set", timeout_ms))
    c.wait_at_barrier("kv_done", 30_000)
    ctx.leave()
    return {"digests": got,
            "expected_digests": {k: hashlib.sha256(v.encode()).hexdigest()
                                 for k, v in values.items()},
            "duplicate_set_error": duplicate, "peers": peers, "missing_error": missing,
            "missing_elapsed_s": elapsed, "missing_timeout_s": timeout_ms / 1000}


@scenario
def barriers(ctx: Context) -> dict[str, Any]:
    """All processes, a subset (process_ids), a repeated id, and a barrier that times out."""
    c = ctx.join()
    _, all_error, all_elapsed = timed(lambda: c.wait_at_barrier("all", 30_000))
    subset = [0, ctx.n - 1]
    subset_error = None
    if ctx.pid in subset:
        _, subset_error, _ = timed(lambda: c.wait_at_barrier("pair", 30_000, subset))
    _, repeat_error, repeat_elapsed = timed(lambda: c.wait_at_barrier("all", 5_000))
    c.wait_at_barrier("before_timeout", 30_000)
    timeout_ms = ctx.params.get("timeout_ms", 1000)
    lonely_error, lonely_elapsed = None, None
    if ctx.pid == 0:  # waits for process n-1, which never comes
        _, lonely_error, lonely_elapsed = timed(
            lambda: c.wait_at_barrier("lonely", timeout_ms, [0, ctx.n - 1]))
    return {"all_error": all_error, "all_elapsed_s": all_elapsed, "subset": subset,
            "subset_error": subset_error, "repeat_error": repeat_error,
            "repeat_elapsed_s": repeat_elapsed, "lonely_error": lonely_error,
            "lonely_elapsed_s": lonely_elapsed, "timeout_s": timeout_ms / 1000}


@scenario
def global_view(ctx: Context) -> dict[str, Any]:
    """The global device list, ids and process indices seen by this process."""
    ctx.join()
    client = ctx.cpu_client(collectives=False)
    out = {"process_index": client.process_index(),
           "devices": [[d.id, d.process_index] for d in client.devices()],
           "local_devices": [[d.id, d.process_index] for d in client.local_devices()],
           "device_count": client.device_count(),
           "local_device_count": client.local_device_count()}
    ctx.client.wait_at_barrier("view_done", 30_000)
    del client
    ctx.leave()
    return out


@scenario
def collectives(ctx: Context) -> dict[str, Any]:
    """Cross-process collectives through execute_sharded on a global (process, local)
    mesh with Gloo; each case's local output shards are checked against NumPy here and
    their digests returned so the launcher can compare processes."""
    from jax.sharding import Mesh

    from conformance.programs import sharded_programs
    from conformance.programs.compiled_programs import ProgramCache
    from conformance.programs import lowering
    from runtime import xla_client as xc

    ctx.join()
    client = ctx.cpu_client(collectives=True)
    programs = ProgramCache(client)
    devices = sorted(client.devices(), key=lambda d: (d.process_index, d.id))
    mesh = Mesh(np.array(devices).reshape(ctx.n, ctx.devices_per_process), ("proc", "local"))
    local = {d.id for d in client.local_devices()}
    results = []
    for case in ctx.params["cases"]:
        collective = sharded_programs.COLLECTIVES[case["collective"]]
        n = mesh.shape[case["axis"]]
        block = (n * case["k0"], n * case["k1"])
        fn, x, in_s, out_s, expected, out_shape = sharded_programs.collective_case(
            mesh, case["axis"], collective, block, np.dtype(case["dtype"]),
            np.random.default_rng(case["seed"]))
        exe, _ = programs.load_sharded(f"{case['collective']}-{case['axis']}", fn, [x], [in_s],
                                       out_s)
        index = in_s.devices_indices_map(x.shape)
        mine = [d for d in index if d.id in local]
        arr = xc.batched_device_put(
            lowering.shaped_array(x.shape, x.dtype), in_s,
            [np.array(x[index[d]], order="C") for d in mine], mine, True, False)
        outs = exe.execute_sharded([arr]).disassemble_into_single_device_arrays()[0]
        out_index = out_s.devices_indices_map(out_shape)
        shards, mismatches = [], []
        for o in outs:
            d = next(iter(o.devices()))
            host = np.asarray(o)
            where = out_index[d]
            want = expected[where]
            if host.shape != want.shape or not np.array_equal(host, want):
                mismatches.append(f"device {d.id} index {where}: got {host.tolist()}, "
                                  f"expected {want.tolist()}")
            shards.append({"device": d.id, "index": [[s.start, s.stop] for s in where],
                           "digest": hashlib.sha256(host.tobytes()).hexdigest()})
        results.append({"case": case, "shards": shards, "mismatches": mismatches,
                        "global_shape": list(out_shape)})
        del exe, arr, outs
    ctx.client.wait_at_barrier("collectives_done", 60_000)
    del programs, client  # the CPU client (and its executables) go before the service
    ctx.leave()
    return {"results": results}


@scenario
def dead_peer(ctx: Context) -> dict[str, Any]:
    """The last process dies after joining. With a heartbeat timeout longer than the
    calls' timeouts, the others' barrier and get fail with an error within their
    timeouts. No callback: jaxlib's default (terminate on a fatal error) stays."""
    c = ctx.join(heartbeat_timeout=ctx.params.get("heartbeat_timeout_s", 30),
                 with_callback=False)
    c.wait_at_barrier("joined", 30_000)
    if ctx.pid == ctx.n - 1:
        mark("dead")
        os._exit(17)  # killed mid-run: no shutdown, no goodbye
    time.sleep(0.2)
    timeout_ms = ctx.params.get("timeout_ms", 2000)
    _, barrier_error, barrier_elapsed = timed(lambda: c.wait_at_barrier("after", timeout_ms))
    _, get_error, get_elapsed = timed(lambda: c.blocking_key_value_get("mp/from-dead",
                                                                         timeout_ms))
    return {"barrier_error": barrier_error, "barrier_elapsed_s": barrier_elapsed,
            "get_error": get_error, "get_elapsed_s": get_elapsed, "timeout_s": timeout_ms / 1000}


@scenario
def heartbeat_detection(ctx: Context) -> dict[str, Any]:
    """The last process dies; the service notices the missing heartbeats and the others
    end (jaxlib terminates them, or their callback fires): the time to detect a dead peer.
    ``params['callback']``: install a missed_heartbeat_callback on the survivors."""
    hb = ctx.params.get("heartbeat_timeout_s", 2)
    c = ctx.join(heartbeat_timeout=hb, with_callback=ctx.params.get("callback", False))
    c.wait_at_barrier("joined", 30_000)
    if ctx.pid == ctx.n - 1:
        mark("dead")
        os._exit(17)
    mark("waiting")
    deadline = time.monotonic() + ctx.params.get("wait_s", 10 * hb)
    while not ctx.missed_heartbeats and time.monotonic() < deadline:
        time.sleep(0.05)
    if ctx.missed_heartbeats:
        mark("callback")
    return {"missed_heartbeats": [[t, s] for t, s in ctx.missed_heartbeats],
            "heartbeat_timeout_s": hb}


@scenario
def service_shutdown(ctx: Context) -> dict[str, Any]:
    """The service shuts down while every client is still attached: the shutdown returns,
    and a client call afterwards fails with an error instead of hanging."""
    c = ctx.join(shutdown_timeout=5, with_callback=False)
    c.wait_at_barrier("joined", 30_000)
    out: dict[str, Any] = {}
    if ctx.pid == 0:
        mark("shutdown_start")
        _, out["shutdown_error"], out["shutdown_elapsed_s"] = timed(ctx.service.shutdown)
        mark("shutdown_returned")
    else:
        time.sleep(0.5)
    timeout_ms = 3000
    _, out["get_error"], out["get_elapsed_s"] = timed(
        lambda: c.blocking_key_value_get("mp/never", timeout_ms))
    out["timeout_s"] = timeout_ms / 1000
    return out


@scenario
def wrong_address(ctx: Context) -> dict[str, Any]:
    """A client connecting to an address where no service listens fails within
    init_timeout (no service is started: ``coordinator`` is a free, closed port)."""
    from runtime import xla_client as xc

    init_timeout = ctx.params.get("init_timeout_s", 2)
    client = xc.get_distributed_runtime_client(ctx.address, ctx.pid, init_timeout=init_timeout,
                                               shutdown_on_destruction=False)
    mark("connect_start")
    _, error, elapsed = timed(client.connect)
    return {"connect_error": error, "connect_elapsed_s": elapsed,
            "init_timeout_s": init_timeout}
