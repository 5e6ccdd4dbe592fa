"""One process of a multi-process conformance scenario (area multi_process).

Run by :mod:`conformance.processes.launcher` through :func:`main` with argument SPEC
(JSON with ``scenario``, ``process_id``, ``num_processes``,
``coordinator``, ``devices_per_process``, ``params``). Process 0 hosts PJRT's
coordination service; every process joins it with its own
``DistributedRuntimeClient``. The scenario's result is printed as one line
``MP_RESULT <json>``; an exception is printed as ``MP_ERROR <json>``. Times
are seconds (``time.monotonic``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

SCENARIOS: dict[str, Callable[["Context"], dict[str, Any]]] = {}


def scenario(fn: Callable[["Context"], dict[str, Any]]) -> Callable[["Context"], dict[str, Any]]:
    SCENARIOS[fn.__name__] = fn
    return fn


class Context:
    """This process's place in the cluster, and its service/client once joined."""

    def __init__(self, spec: dict[str, Any]):
        self.pid: int = spec["process_id"]
        self.n: int = spec["num_processes"]
        self.address: str = spec["coordinator"]
        self.devices_per_process: int = spec.get("devices_per_process", 2)
        self.params: dict[str, Any] = spec.get("params", {})
        self.service: Any = None
        self.client: Any = None
        self.missed_heartbeats: list[tuple[float, str]] = []

    def join(self, *, heartbeat_timeout: int = 10, init_timeout: int = 30,
             shutdown_timeout: int = 10, with_callback: bool = True) -> Any:
        """Start the service (process 0) and connect this process's client."""
        from runtime import xla_client as xc

        if self.pid == 0:
            self.service = xc.get_distributed_runtime_service(
                self.address, self.n, heartbeat_timeout=heartbeat_timeout,
                shutdown_timeout=shutdown_timeout)
        callback = (lambda status: self.missed_heartbeats.append(
            (time.monotonic(), str(status)))) if with_callback else None
        self.client = xc.get_distributed_runtime_client(
            self.address, self.pid, init_timeout=init_timeout, heartbeat_timeout=heartbeat_timeout,
            shutdown_timeout=shutdown_timeout, missed_heartbeat_callback=callback,
            shutdown_on_destruction=False)
        self.client.connect()
        return self.client

    def leave(self) -> None:
        """Shut down the client (a barrier of all processes), then the service."""
        if self.client is not None:
            self.client.shutdown()
        if self.service is not None:
            self.service.shutdown()

    def cpu_client(self, *, collectives: bool) -> Any:
        """A CPU client of this process's devices, joined to the global topology."""
        from runtime import xla_client as xc

        gloo = xc.make_gloo_tcp_collectives(self.client, hostname="127.0.0.1") \
            if collectives else None
        return xc.make_cpu_client(distributed_client=self.client, node_id=self.pid,
                                  num_nodes=self.n, collectives=gloo,
                                  num_devices=self.devices_per_process)


def mark(name: str) -> None:
    """Tell the launcher when something happened (``MP_MARK name monotonic-seconds``): the
    runtime may end this process before it can report a result."""
    print(f"MP_MARK {name} {time.monotonic():.6f}", flush=True)


def _error(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _timed(fn: Callable[[], Any]) -> tuple[Any, str | None, float]:
    """(result, error or None, elapsed seconds) of ``fn()``."""
    t0 = time.monotonic()
    try:
        return fn(), None, time.monotonic() - t0
    except Exception as err:  # noqa: BLE001 - the error is the observation
        return None, _error(err), time.monotonic() - t0


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
    _, duplicate, _ = _timed(lambda: c.key_value_set(own, "second"))
    c.key_value_set(own, f"third-{ctx.pid}", allow_overwrite=True)
    c.wait_at_barrier("kv_overwrite", 30_000)
    peers = [c.blocking_key_value_get(f"mp/p{j}", 10_000) for j in range(ctx.n)]
    timeout_ms = ctx.params.get("missing_timeout_ms", 1000)
    _, missing, elapsed = _timed(lambda: c.blocking_key_value_get("mp/never-set", timeout_ms))
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
    _, all_error, all_elapsed = _timed(lambda: c.wait_at_barrier("all", 30_000))
    subset = [0, ctx.n - 1]
    subset_error = None
    if ctx.pid in subset:
        _, subset_error, _ = _timed(lambda: c.wait_at_barrier("pair", 30_000, subset))
    _, repeat_error, repeat_elapsed = _timed(lambda: c.wait_at_barrier("all", 5_000))
    c.wait_at_barrier("before_timeout", 30_000)
    timeout_ms = ctx.params.get("timeout_ms", 1000)
    lonely_error, lonely_elapsed = None, None
    if ctx.pid == 0:  # waits for process n-1, which never comes
        _, lonely_error, lonely_elapsed = _timed(
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

    from conformance.programs import lowering
    from conformance.programs import sharded as sp
    from runtime import xla_client as xc

    ctx.join()
    client = ctx.cpu_client(collectives=True)
    devices = sorted(client.devices(), key=lambda d: (d.process_index, d.id))
    mesh = Mesh(np.array(devices).reshape(ctx.n, ctx.devices_per_process), ("proc", "local"))
    local = {d.id for d in client.local_devices()}
    results = []
    for case in ctx.params["cases"]:
        collective = sp.COLLECTIVES[case["collective"]]
        n = mesh.shape[case["axis"]]
        block = (n * case["k0"], n * case["k1"])
        fn, x, in_s, out_s, expected, out_shape = sp.collective_case(
            mesh, case["axis"], collective, block, np.dtype(case["dtype"]),
            np.random.default_rng(case["seed"]))
        text = sp.lower(fn, [x], [in_s], out_s, "cpu")
        exe = client.compile_and_load(text, list(lowering.device_assignment_of(in_s)))
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
    del client
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
    _, barrier_error, barrier_elapsed = _timed(lambda: c.wait_at_barrier("after", timeout_ms))
    _, get_error, get_elapsed = _timed(lambda: c.blocking_key_value_get("mp/from-dead",
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
        _, out["shutdown_error"], out["shutdown_elapsed_s"] = _timed(ctx.service.shutdown)
        mark("shutdown_returned")
    else:
        time.sleep(0.5)
    timeout_ms = 3000
    _, out["get_error"], out["get_elapsed_s"] = _timed(
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
    _, error, elapsed = _timed(client.connect)
    return {"connect_error": error, "connect_elapsed_s": elapsed,
            "init_timeout_s": init_timeout}


#: Comma-separated modules every worker imports before its scenario (a vendor's setup,
#: or the project's self-tests, which break the distributed runtime this way).
PRELOAD_ENV = "PJRT_CONFORMANCE_WORKER_PRELOAD"


def main(argv: list[str]) -> int:
    import importlib

    spec = json.loads(argv[1])
    for module in filter(None, os.environ.get(PRELOAD_ENV, "").split(",")):
        importlib.import_module(module.strip())
    ctx = Context(spec)
    try:
        result = SCENARIOS[spec["scenario"]](ctx)
    except Exception as err:  # noqa: BLE001 - reported to the launcher, which fails the test
        print("MP_ERROR " + json.dumps({"error": _error(err),
                                         "traceback": traceback.format_exc()[-4000:]}),
              flush=True)
        return 1
    print("MP_RESULT " + json.dumps(result), flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: native clients may block on exit


if __name__ == "__main__":
    sys.exit(main(sys.argv))
