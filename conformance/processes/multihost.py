"""One process of a multi-host run: join the cluster, run the per-process part and the
global scenarios in lockstep, hand everything to process 0.

Started once per process by a real launcher (``mpirun``, ``srun``, a Kubernetes indexed
Job) or by hand with explicit flags (:mod:`conformance.processes.cluster`). Every
process connects to PJRT's coordination service (hosted by process 0, ``recoverable``
so that a dead process does not abort the others; heartbeat timeout
``heartbeat_s``), then:

1. *per process*: runs the suite on its local devices in a child ``pytest`` (the
   ``--pyargs conformance`` run of ``pjrt-conformance run``, area ``multihost``
   excluded) writing a bundle to a private temporary directory, and publishes its
   ``report.json`` and environment in the service's key-value store (zlib, base64,
   chunks of 512 KiB);
2. *global*: runs each entry of :data:`conformance.processes.mp_checks.GLOBAL`, in the
   same order in every process: a worker child (:func:`conformance.processes.launcher.run_worker`)
   joins a per-scenario service on process 0's host and builds its part of the global
   (process, local) mesh; the worker's outcome is published under the entry's key.

After each phase every process calls the service's ``get_live_nodes`` (it returns when
every live process has called it; a process whose heartbeats stopped is left out), so
all processes agree which ones are alive; a dead or hung process (no call within the
phase's timeout) stops the global phase. Process 0 gathers the published results
(:class:`Gathered`) and writes the one bundle; the others wait for its exit code.

Test hook: ``PJRT_CONFORMANCE_MULTIHOST_FAULT=kill:P:I`` (or ``hang:P:I``) makes
process P SIGKILL itself (or sleep forever) when it reaches global scenario I.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import signal
import socket
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from conformance.processes import launcher, mp_checks, runner
from conformance.processes.cluster import ClusterSpec

FAULT_ENV = "PJRT_CONFORMANCE_MULTIHOST_FAULT"
_PREFIX, _CHUNK = "pjrt-mh/", 512 * 1024
#: The per-process suite run: ``python -m pytest ARGS`` (started by :mod:`.runner`).
_PYTEST_MAIN = runner.Module("pytest")


class Cancelled(Exception):
    """SIGTERM/SIGINT reached this process (a launcher's cancel)."""


def _cancel(signum: int, frame: Any) -> None:
    raise Cancelled(signal.Signals(signum).name)


@dataclasses.dataclass
class Gathered:
    """What process 0 holds at the end: per process its local ``report.json`` document
    (None: none arrived) and facts; per global entry (by name) each process's worker
    summary and scenario result (None: none arrived); who is dead or hung and why the run
    stopped early (None: it did not)."""

    spec: ClusterSpec
    docs: dict[int, dict[str, Any] | None]
    facts: dict[int, dict[str, Any] | None]
    global_outcomes: dict[str, list[dict[str, Any] | None]]
    lost: dict[int, str]
    stopped: str | None = None
    wall_s: dict[str, float] = dataclasses.field(default_factory=dict)


class Link:
    """This process's client of the coordination service (process 0 also hosts it)."""

    def __init__(self, spec: ClusterSpec, *, heartbeat_s: int, join_timeout_s: int):
        from runtime import xla_client as xc
        from runtime._compat import distributed_recoverable_on

        self.spec, self.service = spec, None
        host, _, port = spec.coordinator.rpartition(":")
        self.host = host.strip("[]")
        # jaxlib 0.10+ makes the service recoverable, 0.7/0.8 each client (its task)
        on = distributed_recoverable_on()
        if spec.process_id == 0:
            self.service = xc.get_distributed_runtime_service(
                f"[::]:{port}", spec.process_count, heartbeat_timeout=heartbeat_s,
                shutdown_timeout=5, **({"recoverable": True} if on == "service" else {}))
        else:  # jaxlib aborts the process when connect() finds no service: wait for it first
            _wait_for_port(self.host, int(port), join_timeout_s)
        self.client = xc.get_distributed_runtime_client(
            spec.coordinator, spec.process_id, init_timeout=join_timeout_s,
            heartbeat_timeout=heartbeat_s, shutdown_timeout=5, shutdown_on_destruction=False,
            **({"recoverable": True} if on == "client" else {}))
        self.client.connect()

    def put(self, key: str, value: Any) -> None:
        """Publish ``value`` (JSON-able) under ``key``."""
        text = base64.b64encode(zlib.compress(json.dumps(value).encode(), 6)).decode()
        chunks = [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]
        for i, chunk in enumerate(chunks):
            self.client.key_value_set(f"{_PREFIX}{key}/{i}", chunk)
        self.client.key_value_set(f"{_PREFIX}{key}/n", str(len(chunks)))

    def get(self, key: str, timeout_s: float = 0) -> Any:
        """The value published under ``key``; None if it is not there within ``timeout_s``."""
        try:
            n = int(self.client.blocking_key_value_get(f"{_PREFIX}{key}/n",
                                                       max(1, int(timeout_s * 1000))))
            text = "".join(self.client.blocking_key_value_get(f"{_PREFIX}{key}/{i}", 10_000)
                           for i in range(n))
        except Exception:  # noqa: BLE001 - XlaRuntimeError: not there in time
            return None
        return json.loads(zlib.decompress(base64.b64decode(text)))

    def live(self, timeout_s: float) -> set[int] | None:
        """The live processes once every live process has called this (the service's
        ``get_live_nodes``); None when that did not happen within ``timeout_s``."""
        box: list[Any] = []
        everyone = list(range(self.spec.process_count))
        thread = threading.Thread(target=lambda: box.append(self.client.get_live_nodes(everyone)),
                                  daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout_s
        while thread.is_alive() and time.monotonic() < deadline:
            thread.join(0.25)
        return set(box[0]) if box else None


def _wait_for_port(host: str, port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, port), timeout=2).close()
            return
        except OSError as err:
            if time.monotonic() > deadline:
                raise ConnectionError(f"no coordination service at {host}:{port} within "
                                      f"{timeout_s:g} s ({err})") from None
            time.sleep(0.5)


def _own_address(peer_host: str) -> str:
    """The address of this machine that reaches ``peer_host`` (Gloo's hostname)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((peer_host, 9))
            return s.getsockname()[0]
    except OSError:
        return socket.gethostname()


def run_local_part(pytest_args: list[str], report_dir: Path,
                   timeout_s: float) -> tuple[dict | None, str]:
    """Run the per-process suite in a child pytest (``pytest_args``: its command line,
    which writes the bundle into ``report_dir``); return its report.json document (None
    if none was written) and the output's tail."""
    out = Path(report_dir)
    child = runner.run_python(_PYTEST_MAIN, pytest_args, timeout=timeout_s, merge_stderr=True)
    try:
        return json.loads((out / "report.json").read_text()), child.stdout[-3000:]
    except (OSError, ValueError):
        return None, child.stdout[-3000:]


def _fault(pid: int, index: int) -> None:
    action, _, where = os.environ.get(FAULT_ENV, "").partition(":")
    if action in ("kill", "hang") and where == f"{pid}:{index}":
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        while True:
            time.sleep(3600)


def _global(link: Link, check: mp_checks.GlobalCheck, index: int, hostname: str,
            timeout_s: float) -> dict[str, Any]:
    spec = link.spec
    if spec.process_id == 0:
        port = launcher.free_port()
        link.put(f"addr/{index}", {"address": f"{link.host}:{port}", "bind": f"[::]:{port}"})
    where = link.get(f"addr/{index}", timeout_s) or {}
    worker = {"scenario": check.scenario, "process_id": spec.process_id,
              "num_processes": spec.process_count, "coordinator": where.get("address"),
              "bind": where.get("bind"), "hostname": hostname,
              "devices_per_process": mp_checks.DEVICES_PER_PROCESS, "params": check.params()}
    if worker["coordinator"] is None:
        return {"summary": {"process": spec.process_id, "status": "error", "returncode": 1,
                            "wall_s": 0.0, "error": "process 0 published no address"},
                "result": None}
    r = launcher.run_worker(worker, timeout_s)
    return {"summary": r.summary(), "result": r.result}


def run(spec: ClusterSpec, local_args: list[str], *, report_dir: Path, heartbeat_s: int,
        join_timeout_s: int, local_timeout_s: float,
        global_timeout_s: float) -> tuple[Link, Gathered]:
    """This process's part of the run (see the module docstring; ``local_args``: the
    per-process child pytest's command line, writing into ``report_dir``): its link to the
    service (for :func:`finish`) and what it gathered (complete in process 0 only).
    Raises ConnectionError when the service cannot be reached within ``join_timeout_s``,
    and XlaRuntimeError from jaxlib when process 0 cannot bind the coordinator's port."""
    n, pid = spec.process_count, spec.process_id
    got = Gathered(spec, {i: None for i in range(n)}, {i: None for i in range(n)},
                   {c.name: [None] * n for c in mp_checks.GLOBAL}, {})
    link = Link(spec, heartbeat_s=heartbeat_s, join_timeout_s=join_timeout_s)
    previous = {s: signal.signal(s, _cancel) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        _phases(link, got, local_args, report_dir, local_timeout_s, global_timeout_s)
    except Cancelled as why:
        got.stopped = f"cancelled by {why} in process {pid}"
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return link, got


def _phase_end(link: Link, got: Gathered, phase: str, key: str, timeout_s: float) -> bool:
    """Agree on the live processes after ``phase`` (each process published ``key/<id>``);
    record the lost ones (dead: left out by the service; hung: no call within
    ``timeout_s`` and nothing published); True when every process is still there."""
    live = link.live(timeout_s)
    n = link.spec.process_count
    if live is None:
        live = {p for p in range(n) if link.get(f"{key}/{p}", 0.5) is not None}
        why = f"did not finish {phase} within {timeout_s:g} s (hung)"
    else:
        why = f"stopped (no heartbeat for --heartbeat-timeout) before the end of {phase}"
    for p in sorted(set(range(n)) - live - set(got.lost)):
        got.lost[p] = f"process {p} {why}"
    if got.lost:
        got.stopped = "; ".join(got.lost.values())
    elif len(live) < n:
        got.stopped = f"not every process finished {phase} within {timeout_s:g} s"
    return got.stopped is None


def _phases(link: Link, got: Gathered, local_args: list[str], report_dir: Path,
            local_timeout_s: float, global_timeout_s: float) -> None:
    from conformance.certification.verdict.report import environment

    pid, n = link.spec.process_id, link.spec.process_count
    t0 = time.monotonic()
    doc, tail = run_local_part(local_args, report_dir, local_timeout_s)
    link.put(f"local/{pid}", {"doc": doc, "tail": None if doc else tail, "facts": {
        "process": pid, "host": socket.gethostname(), "pid": os.getpid(),
        "environment": environment(), "local_wall_s": round(time.monotonic() - t0, 2)}})
    go_on = _phase_end(link, got, "the per-process part", "local", local_timeout_s)
    if pid == 0:
        got.wall_s["local"] = time.monotonic() - t0
        for p in range(n):
            value = link.get(f"local/{p}", 5) if p not in got.lost else None
            got.docs[p] = value["doc"] if value else None
            got.facts[p] = value["facts"] if value else None
            if value and value["doc"] is None:
                got.facts[p]["error"] = value["tail"]
    hostname = _own_address(link.host)
    for index, check in enumerate(mp_checks.GLOBAL):
        if not go_on:
            break
        _fault(pid, index)
        t1 = time.monotonic()
        link.put(f"g/{index}/{pid}", _global(link, check, index, hostname, global_timeout_s))
        go_on = _phase_end(link, got, f"global scenario {check.name}", f"g/{index}",
                           global_timeout_s + 30)
        if pid == 0:
            got.wall_s[check.name] = time.monotonic() - t1
            got.global_outcomes[check.name] = [
                link.get(f"g/{index}/{p}", 5) if p not in got.lost else None for p in range(n)]
    got.wall_s["total"] = time.monotonic() - t0


def finish(link: Link, got: Gathered, exit_code: int | None, timeout_s: float = 600) -> int:
    """End of the run: process 0 publishes ``exit_code`` (its bundle is written) and
    returns it; the others wait ``timeout_s`` for it and return it (4 when it never
    comes). All live processes then meet at a last barrier (10 s), so that none leaves
    while process 0's service still serves it."""
    live = sorted(set(range(link.spec.process_count)) - set(got.lost))
    if link.spec.process_id == 0:
        link.put("final", 4 if exit_code is None else exit_code)
        code = exit_code
    else:
        code = link.get("final", timeout_s)
    try:
        link.client.wait_at_barrier(f"{_PREFIX}exit", 10_000, live)
    except Exception:  # noqa: BLE001 - a process that is gone never arrives: exit anyway
        pass
    return int(code) if code is not None else 4
