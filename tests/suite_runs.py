"""Child conformance runs shared by the self-tests that read them, one per selection.

Many self-tests run the suite on a mutant backend in a child pytest and assert on a
different part of the same result (its verdict, one failure's message, its command...).
:class:`SuiteRuns` runs each distinct child once per session and hands every test the
same parsed result. Under pytest-xdist the workers share one directory: the first worker
that needs a selection runs it while the others wait on its lock (``fcntl.flock``) and
then read what it wrote.

A child starts as every mutant child does (:func:`tests.mutants.runner.run_child`, on
:mod:`conformance.processes.runner`): a scratch directory whose conftest registers the
mutants, no ``PYTEST_ADDOPTS``, ``HOME`` there.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import resource
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests import k_modules
from tests.mutants.runner import FAILURE_PROFILE, run_child

#: Seconds a shared child may run before it is killed and the test needing it fails.
TIMEOUT_S = 1800


@dataclasses.dataclass(frozen=True)
class ChildRun:
    """One finished child: its exit code ``ret``, its ``stdout`` and ``stderr``
    (:class:`pytest.LineMatcher`, as a pytester ``RunResult`` has them) and ``doc``, its
    report.json (None when it wrote none)."""

    ret: int
    stdout: pytest.LineMatcher
    stderr: pytest.LineMatcher
    doc: dict | None


class SuiteRuns:
    """Run or reuse child conformance runs under ``shared`` (a directory every xdist
    worker of the session sees). Raises ValueError for a ``shared`` that is not a
    directory."""

    def __init__(self, shared: Path):
        if not Path(shared).is_dir():
            raise ValueError(f"argument 'shared': {shared} is not a directory")
        self.shared = Path(shared)
        self._memo: dict[str, ChildRun] = {}

    def run(self, platform: str, *select: str, expect_platform: str | None = "cpu",
            devices: int = 2, first_failure: bool = False,
            env: dict[str, str] | None = None,
            targets: Sequence[str] | None = None) -> ChildRun:
        """``pytest --pyargs conformance --platform=<platform> ... <select>`` in a child
        (only the modules that ``select``'s ``-k`` can select: :mod:`tests.k_modules`)
        (``devices``: its ``--cpu-devices``; ``expect_platform``: its
        ``--expect-platform``, None for none; ``first_failure``: Hypothesis stops at its
        first failing example (:data:`FAILURE_PROFILE`), for a child that only needs to
        fail; ``env``: added to the child's environment; ``targets``: the ``--pyargs``
        targets, e.g. ``conformance.test_x::test_y[p]``, instead of the modules ``-k``
        can select). The same arguments give the same :class:`ChildRun`, run once per
        session."""
        args = ["--pyargs", *(targets or k_modules.pyargs_of(select)), f"--platform={platform}",
                f"--cpu-devices={devices}",
                *([f"--expect-platform={expect_platform}"] if expect_platform else []),
                "--profile=none", "-p", "no:cacheprovider",
                *([f"--hypothesis-profile={FAILURE_PROFILE}"] if first_failure else []),
                *select]
        env = dict(sorted((env or {}).items()))
        key = hashlib.sha256(json.dumps([args, env]).encode()).hexdigest()[:20]
        if key not in self._memo:
            self._memo[key] = self._run_once(key, args, env)
        return self._memo[key]

    def _run_once(self, key: str, args: list[str], env: dict[str, str]) -> ChildRun:
        home = self.shared / key
        with open(self.shared / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be running it
            done = home / "child.json"
            if not done.exists():
                home.mkdir(exist_ok=True)
                out = home / "report"
                cpu = _children_cpu_s()
                proc = run_child([*args, f"--report-dir={out}", "--force-report-dir"],
                                 home=home, timeout=TIMEOUT_S, env=env)
                if proc.timed_out:
                    pytest.fail(f"the child run {args} ran past its {TIMEOUT_S} s timeout; "
                                f"its output ends: {(proc.stdout + proc.stderr)[-2000:]}")
                report = out / "report.json"
                doc = json.loads(report.read_text()) if report.exists() else None
                done.write_text(json.dumps({
                    "ret": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                    "doc": doc, "args": args,  # and what it cost, for docs/ci.md:
                    "wall_s": proc.wall_s, "cpu_s": _children_cpu_s() - cpu}))
            saved = json.loads(done.read_text())
        return ChildRun(saved["ret"], pytest.LineMatcher(saved["stdout"].splitlines()),
                        pytest.LineMatcher(saved["stderr"].splitlines()), saved["doc"])


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def shared_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's directory for shared child runs: the parent of every xdist worker's
    base temporary directory, or the base directory itself without xdist."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared = root / "suite-runs"
    shared.mkdir(exist_ok=True)
    return shared
