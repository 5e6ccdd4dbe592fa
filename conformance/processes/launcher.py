"""The multi-process launcher: N worker processes on loopback, one scenario, always cleaned up.

``--num-processes=N`` (pytest and ``pjrt-conformance run``) sets N for the
multi_process area. Each test of that area calls :func:`run_scenario`, which
picks a free loopback port for the coordination service (hosted by process 0),
starts N worker processes (:mod:`conformance.processes.mp_main`, which runs
:func:`conformance.processes.mp_worker.main`) with
:func:`conformance.processes.runner.run_many`, each in its own process group, waits
for all of them within ``timeout`` seconds, and kills every group that is still
alive (a hung or dead worker never outlives the call). Each
worker's outcome (result, error, exit code, wall time) comes back as a
:class:`WorkerResult`; the test asserts on them and records them in the report.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from typing import Any

from conformance.processes import mh_scenarios, mp_scenarios  # noqa: F401 - registers them
from conformance.processes import mp_worker, runner

#: The worker's command (not ``mp_worker`` itself: see :mod:`.mp_main`).
_WORKER_MAIN = runner.Module("conformance.processes.mp_main")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclasses.dataclass
class WorkerResult:
    """One worker's outcome. ``result``: the scenario's dict (None unless it finished);
    ``error``: its exception; ``returncode``: exit status (negative: signal; None:
    killed by the launcher at the timeout); ``wall_s``: seconds from launch to exit."""

    process_id: int
    returncode: int | None
    result: dict[str, Any] | None
    error: str | None
    wall_s: float
    output: str
    ended_at: float | None = None
    marks: dict[str, float] = dataclasses.field(default_factory=dict)
    os_pid: int | None = None

    @property
    def signal(self) -> str | None:
        """The signal that ended the process (``SIGABRT``...), None otherwise."""
        return runner.signal_name(self.returncode)

    def summary(self) -> dict[str, Any]:
        """The record kept in the report (no raw output)."""
        status = "pass" if self.result is not None and self.returncode == 0 else (
            "timeout" if self.returncode is None else "error")
        return {"process": self.process_id, "status": status, "returncode": self.returncode,
                "wall_s": round(self.wall_s, 3),
                "error": self.error.splitlines()[0] if self.error else None}


def _parse(output: str) -> tuple[dict[str, Any] | None, str | None, dict[str, float]]:
    result, error, marks = None, None, {}
    for line in output.splitlines():
        if line.startswith("MP_MARK "):
            _, name, when = line.split()
            marks[name] = float(when)
        elif line.startswith("MP_RESULT "):
            result = json.loads(line[len("MP_RESULT "):])
        elif line.startswith("MP_ERROR "):
            err = json.loads(line[len("MP_ERROR "):])
            error = f"{err['error']}\n{err['traceback']}"
    return result, error, marks


def run_scenario(scenario: str, num_processes: int, *, params: dict[str, Any] | None = None,
                 devices_per_process: int = 2, timeout: float = 120.0,
                 coordinator: str | None = None) -> list[WorkerResult]:
    """Run ``scenario`` of :mod:`conformance.processes.mp_worker` in ``num_processes`` processes.

    ``timeout``: seconds for the whole cluster; workers alive after it are killed
    (their ``returncode`` is None). ``coordinator``: ``host:port`` of the service
    (default: 127.0.0.1 and a free port). Raises ValueError for ``num_processes`` < 1
    or an unknown scenario. Every worker process group is killed before returning.
    """
    if isinstance(num_processes, bool) or not isinstance(num_processes, int) or \
            num_processes < 1:
        raise ValueError(f"run_scenario: argument 'num_processes' must be an int >= 1, got "
                         f"{num_processes!r}")
    if scenario not in mp_worker.SCENARIOS:
        raise ValueError(f"run_scenario: unknown scenario {scenario!r}; known: "
                         f"{sorted(mp_worker.SCENARIOS)}")
    address = coordinator or f"127.0.0.1:{free_port()}"
    specs = [{"scenario": scenario, "process_id": pid, "num_processes": num_processes,
              "coordinator": address, "devices_per_process": devices_per_process,
              "params": params or {}} for pid in range(num_processes)]
    children = runner.run_many([(_WORKER_MAIN, [json.dumps(spec)]) for spec in specs],
                               timeout=timeout, env=runner.child_env({"JAX_PLATFORMS": "cpu"}),
                               merge_stderr=True)
    return [worker_result(i, child, timeout) for i, child in enumerate(children)]


def worker_result(process_id: int, child: runner.ChildResult, timeout: float) -> WorkerResult:
    """The :class:`WorkerResult` of one finished (or killed) worker child."""
    result, error, marks = _parse(child.stdout)
    if result is None and error is None:
        error = (f"no result (exit {child.returncode}); output tail:\n{child.stdout[-2000:]}"
                 if not child.timed_out else f"killed after the {timeout:g} s timeout; "
                 f"output tail:\n{child.stdout[-2000:]}")
    return WorkerResult(process_id, child.returncode, result, error, child.wall_s,
                        child.stdout, child.ended_at, marks, child.pid)


def run_worker(spec: dict[str, Any], timeout: float) -> WorkerResult:
    """Run one worker (``spec`` as in :func:`run_scenario`'s specs, plus optional ``bind``
    and ``hostname``) in this machine's share of a cluster; killed after ``timeout`` s."""
    child = runner.run_many([(_WORKER_MAIN, [json.dumps(spec)])], timeout=timeout,
                            env=runner.child_env({"JAX_PLATFORMS": "cpu"}),
                            merge_stderr=True)[0]
    return worker_result(spec["process_id"], child, timeout)
