"""One process of a multi-process conformance scenario (area multi_process): the cluster
context, the scenario registry and the worker's entry point.

The scenarios themselves are in :mod:`conformance.processes.mp_scenarios` (imported by
the launcher's worker command; a vendor's or a self-test's extra scenarios register with
:func:`scenario` from modules named in ``PJRT_CONFORMANCE_WORKER_PRELOAD``).
Run by :mod:`conformance.processes.launcher` through :func:`main` (the command is
:mod:`conformance.processes.mp_main`, not this module: see there) with argument SPEC
(JSON with ``scenario``, ``process_id``, ``num_processes``,
``coordinator``, ``devices_per_process``, ``params``; optional ``bind`` and
``hostname``, see :class:`Context`). Process 0 hosts PJRT's
coordination service; every process joins it with its own
``DistributedRuntimeClient``. The scenario's result is printed as one line
``MP_RESULT <json>``; an exception is printed as ``MP_ERROR <json>``. Times
are seconds (``time.monotonic``).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

SCENARIOS: dict[str, Callable[["Context"], dict[str, Any]]] = {}


def scenario(fn: Callable[["Context"], dict[str, Any]]) -> Callable[["Context"], dict[str, Any]]:
    """Register ``fn`` as the scenario named ``fn.__name__`` (a decorator)."""
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
        #: Where process 0's service listens (default: the coordinator address) and the
        #: address peers reach this process's Gloo collectives at (multi-host mode).
        self.bind: str = spec.get("bind") or self.address
        self.hostname: str = spec.get("hostname") or "127.0.0.1"
        self.service: Any = None
        self.client: Any = None
        self.missed_heartbeats: list[tuple[float, str]] = []

    def join(self, *, heartbeat_timeout: int = 10, init_timeout: int = 30,
             shutdown_timeout: int = 10, with_callback: bool = True) -> Any:
        """Start the service (process 0) and connect this process's client."""
        from runtime import xla_client as xc

        if self.pid == 0:
            self.service = xc.get_distributed_runtime_service(
                self.bind, self.n, heartbeat_timeout=heartbeat_timeout,
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

        gloo = xc.make_gloo_tcp_collectives(self.client, hostname=self.hostname) \
            if collectives else None
        return xc.make_cpu_client(distributed_client=self.client, node_id=self.pid,
                                  num_nodes=self.n, collectives=gloo,
                                  num_devices=self.devices_per_process)


def mark(name: str) -> None:
    """Tell the launcher when something happened (``MP_MARK name monotonic-seconds``): the
    runtime may end this process before it can report a result."""
    print(f"MP_MARK {name} {time.monotonic():.6f}", flush=True)


def error_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def timed(fn: Callable[[], Any]) -> tuple[Any, str | None, float]:
    """(result, error or None, elapsed seconds) of ``fn()``."""
    t0 = time.monotonic()
    try:
        return fn(), None, time.monotonic() - t0
    except Exception as err:  # noqa: BLE001 - the error is the observation
        return None, error_line(err), time.monotonic() - t0


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
        print("MP_ERROR " + json.dumps({"error": error_line(err),
                                         "traceback": traceback.format_exc()[-4000:]}),
              flush=True)
        return 1
    print("MP_RESULT " + json.dumps(result), flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: native clients may block on exit

