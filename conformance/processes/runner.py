"""Child processes of the suite, started, timed out and described in one way.

A child runs a :class:`Module` (``python -m NAME ARGS...``) or, for the runner's
self-tests, Python source (``python -c CODE ARGS...``), with this interpreter, in its own
process group, with the project first on its ``PYTHONPATH``. At the timeout the child's
whole group is killed (a backend's helper processes go with it), and every group still
alive when :func:`run_many` returns is killed, so no child outlives the call. Each child
starts in :mod:`conformance.processes.child_start`, which first makes it die when the
process that started it dies (also by SIGKILL), so it never outlives that process
either, and then runs the module (source: :data:`~.child_start.SOURCE_PRELUDE` first).
The child programs are modules, so that linters and type checkers see them: the
multi-process worker (:mod:`.mp_main`), ``pytest`` (the per-process run of a multi-host
run, the reference differential's re-run, and every child pytest of the self-tests:
``tests/mutants/runner.py``'s ``run_child``), and, where the child opens the backend
under test (which this layer may not import), modules of ``conformance.session`` named
here, never imported:
:mod:`conformance.session.isolation_child`, :mod:`conformance.session.preflight_child`,
:mod:`conformance.session.pjrt_plugin_probe`; and :mod:`conformance.capi.child`.
Times are seconds of ``time.monotonic``. No other code of the project starts a Python
child by itself: ``tests/test_child_launchers.py`` lists each exception with its reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.processes.child_start import SOURCE_PRELUDE

#: The folder that holds the ``conformance`` and ``runtime`` packages.
ROOT = str(Path(__file__).resolve().parents[2])
#: The module every child starts in.
ENTRY = "conformance.processes.child_start"


@dataclasses.dataclass(frozen=True)
class Module:
    """A child program that is a module: run as ``python -m name`` runs it (its
    ``__name__`` is ``'__main__'``, ``sys.argv[0]`` its file, then the arguments)."""

    name: str


def command(program: Module | str, args: Sequence[str] = ()) -> list[str]:
    """The command line of a child that runs ``program`` (a :class:`Module`, or Python
    source) with ``args``, starting in :data:`ENTRY`."""
    if isinstance(program, Module):
        return [sys.executable, "-m", ENTRY, program.name, *args]
    if isinstance(program, str):
        return [sys.executable, "-c", SOURCE_PRELUDE + program, *args]
    raise TypeError(f"a child program is a runner.Module or Python source (str), got "
                    f"{type(program).__name__}")


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


def run_many(children: Sequence[tuple[Module | str, Sequence[str]]], *, timeout: float,
             env: Mapping[str, str] | None = None, merge_stderr: bool = False,
             stdin: str | None = None,
             cwd: str | os.PathLike[str] | None = None) -> list[ChildResult]:
    """Run every ``(program, args)`` of ``children`` at once (:func:`command`: a
    :class:`Module` as ``python -m``, source as ``python -c``) and wait for all within
    ``timeout`` seconds (one deadline for all).

    ``env``: the children's environment (default :func:`child_env`; one given must put
    the project on the path too, as :func:`child_env` does). ``merge_stderr``:
    stderr goes to stdout (one interleaved text). ``stdin``: text written to every
    child's standard input, which is then closed (an argument has at most 128 KiB on
    Linux: a large document goes this way); None: the children inherit this process's
    standard input. ``cwd``: the children's working directory (default: this process's;
    a child pytest finds its ``conftest.py`` and writes its ``.hypothesis`` there).
    Raises ValueError for a timeout that is not a positive number. Every child's process
    group is killed before returning, also when starting one of them fails.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"run_many: argument 'timeout' must be a positive number of seconds, "
                         f"got {timeout!r}")
    commands = [command(program, args) for program, args in children]
    env = dict(env) if env is not None else child_env()
    procs: list[subprocess.Popen] = []
    n = len(children)
    outputs: list[tuple[str, str]] = [("", "")] * n
    ended: list[float | None] = [None] * n
    started = time.monotonic()
    deadline = started + timeout
    try:
        for argv in commands:
            procs.append(subprocess.Popen(
                argv, stdin=subprocess.PIPE if stdin is not None else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, text=True,
                env=env, cwd=cwd, start_new_session=True))

        def wait(i: int) -> None:  # one thread a child: exit times are exact
            proc = procs[i]
            try:
                out = proc.communicate(input=stdin,
                                       timeout=max(0.1, deadline - time.monotonic()))
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
    results = [ChildResult(procs[i].returncode if ended[i] is not None else None, *outputs[i],
                           (ended[i] or time.monotonic()) - started, ended[i], procs[i].pid)
               for i in range(n)]
    _log_times(commands, results)
    return results


#: Environment variable naming a file to which every child's command and wall time are
#: appended, one JSON line each (docs/ci.md: where the self-tests' time goes).
TIMES_LOG = "PJRT_CONFORMANCE_CHILD_TIMES"


def log_time(record: Mapping[str, object]) -> None:
    """Append ``record`` and the test that caused it (``PYTEST_CURRENT_TEST``) as one JSON
    line to the file that :data:`TIMES_LOG` names; nothing when it is not set."""
    path = os.environ.get(TIMES_LOG)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"caller": os.environ.get("PYTEST_CURRENT_TEST", ""),
                                  **record}) + "\n")


def _log_times(commands: Sequence[Sequence[str]], results: Sequence[ChildResult]) -> None:
    for argv, result in zip(commands, results):
        program = list(argv[3:]) if argv[1] == "-m" else ["-c", *argv[3:]]   # after ENTRY
        log_time({"argv": program[:40], "wall_s": round(result.wall_s, 3),
                  "returncode": result.returncode})


def run_python(program: Module | str, args: Sequence[str] = (), *, timeout: float,
               env: Mapping[str, str] | None = None, merge_stderr: bool = False,
               stdin: str | None = None,
               cwd: str | os.PathLike[str] | None = None) -> ChildResult:
    """:func:`run_many` of one child: ``program`` (a :class:`Module`, or Python source)
    with ``args`` (and ``stdin``, in ``cwd``)."""
    return run_many([(program, args)], timeout=timeout, env=env, merge_stderr=merge_stderr,
                    stdin=stdin, cwd=cwd)[0]
