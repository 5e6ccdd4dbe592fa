"""Child processes of the suite, started, timed out and described in one way.

Every child is ``python -c CODE ARGS...`` (this interpreter) in its own process group,
with the project first on its ``PYTHONPATH``. At the timeout the child's whole group is
killed (a backend's helper processes go with it), and every group still alive when
:func:`run_many` returns is killed, so no child outlives the call. Each child first runs
:data:`conformance.processes.lifetime.PRELUDE`: it is killed when the process that
started it dies (also by SIGKILL), so it never outlives that process either. Used by
:mod:`.isolation` (a snippet against the backend), :mod:`.launcher` (the multi-process
workers) and :mod:`conformance.session.pjrt_plugin_info` (jaxlib's log of a plugin).
Times are seconds of ``time.monotonic``.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.processes.lifetime import PRELUDE

#: The folder that holds the ``conformance`` and ``runtime`` packages.
ROOT = str(Path(__file__).resolve().parents[2])


def signal_name(returncode: int | None) -> str | None:
    """``'SIGSEGV'``... for a return code that says a signal ended the process (negative),
    ``'signal N'`` for a number without a name, None for an exit or no return code."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with :data:`ROOT` first on ``PYTHONPATH`` and ``extra``
    set on top."""
    path = [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), **(extra or {})}


@dataclasses.dataclass
class ChildResult:
    """One child's outcome. ``returncode``: exit status (negative: the signal's number;
    None: killed at the timeout). ``stderr`` is '' when merged into ``stdout``.
    ``wall_s``: seconds from the start of :func:`run_many` to the exit (or to the kill);
    ``ended_at``: ``time.monotonic()`` at the exit (None when killed); ``pid``: the OS pid."""

    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    ended_at: float | None
    pid: int

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    @property
    def signal(self) -> str | None:
        """The signal that ended the child (``SIGABRT``...), None otherwise."""
        return signal_name(self.returncode)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to ``proc``'s process group (started by :func:`run_many`); no error when
    it is gone already."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_many(children: Sequence[tuple[str, Sequence[str]]], *, timeout: float,
             env: Mapping[str, str] | None = None, merge_stderr: bool = False
             ) -> list[ChildResult]:
    """Run every ``(code, args)`` of ``children`` at once as ``python -c code *args``
    and wait for all within ``timeout`` seconds (one deadline for all).

    ``env``: the children's environment (default :func:`child_env`). ``merge_stderr``:
    stderr goes to stdout (one interleaved text). Raises ValueError for a timeout
    that is not a positive number. Every child's process group is killed before
    returning, also when starting one of them fails.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"run_many: argument 'timeout' must be a positive number of seconds, "
                         f"got {timeout!r}")
    env = dict(env) if env is not None else child_env()
    procs: list[subprocess.Popen] = []
    n = len(children)
    outputs: list[tuple[str, str]] = [("", "")] * n
    ended: list[float | None] = [None] * n
    started = time.monotonic()
    deadline = started + timeout
    try:
        for code, args in children:
            procs.append(subprocess.Popen(
                [sys.executable, "-c", PRELUDE + code, *args], stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, text=True,
                env=env, start_new_session=True))

        def wait(i: int) -> None:  # one thread a child: exit times are exact
            proc = procs[i]
            try:
                out = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
                ended[i] = time.monotonic()
            except subprocess.TimeoutExpired:
                kill_group(proc)
                out = proc.communicate()
            outputs[i] = (out[0] or "", out[1] or "")

        threads = [threading.Thread(target=wait, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for proc in procs:
            kill_group(proc)
            if proc.poll() is None:
                proc.wait()
    return [ChildResult(procs[i].returncode if ended[i] is not None else None, *outputs[i],
                        (ended[i] or time.monotonic()) - started, ended[i], procs[i].pid)
            for i in range(n)]


def run_python(code: str, args: Sequence[str] = (), *, timeout: float,
               env: Mapping[str, str] | None = None, merge_stderr: bool = False
               ) -> ChildResult:
    """:func:`run_many` of one child."""
    return run_many([(code, args)], timeout=timeout, env=env, merge_stderr=merge_stderr)[0]
