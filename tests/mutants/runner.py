"""Run mutants in child pytest sessions and score the suite.

Each mutant runs as ``pytest --pyargs conformance
--platform=<mutant> --cpu-devices=N --profile=none -p no:cacheprovider -k <its targets>``
in a scratch directory whose ``conftest.py`` registers the mutants. Every child pytest
of the self-tests (the mutants here, :mod:`tests.suite_runs`, the ``run_suite``
fixture, pytester's children through :func:`pytester_run`) starts through
:func:`run_child`, on :mod:`conformance.processes.runner`. A result *fails* when it is
neither ``pass`` nor a skip (``skipped``, ``not_supported``). The healthy control is the
plain ``cpu`` platform run with the union of the same selections: it must have no
failures other than the known defects of jaxlib's CPU backend (the defect catalog
``conformance/defects``). A mutant is *killed* in an area when one of that area's tests
fails on it and not on the control (a test that fails on the healthy backend too tells
nothing about the mutant).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest

from conformance.processes import runner
from tests import k_modules
from tests.mutants import rewrite_log
from tests.mutants.catalog import CATALOG, Mutant, Target

ROOT = Path(__file__).resolve().parents[2]
HARMLESS = frozenset({"pass", "skipped", "not_supported"})
CONTROL = "cpu"
#: Hypothesis settings of a child that only needs a failure: the ``ci`` profile's examples
#: (8, derandomized), but no shrinking and no search for a second bug: a test stops at its
#: first failing example and reports it as found. (One example is not enough: the first
#: example is the simplest, e.g. a length-1 FFT, where a wrong normalization is exact.)
#: Registered by the child's conftest and chosen with ``--hypothesis-profile``; the suite's
#: plugin accepts it like its own profiles. Mutant children use it (a kill needs one
#: failing example; shrinking it cost out-last-device 60 of its 67 s); the healthy
#: control keeps ``ci``.
FAILURE_PROFILE = "selftest-first-failure"
# The child's setup file: registers the mutant platforms (the suite's isolated child
# processes run the session's conftest files too, so they see the same mutants) and the
# first-failure profile.
CONFTEST = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            "from tests.mutants import register_platforms\nregister_platforms()\n"
            "import hypothesis\n"
            "from conformance.session.hypothesis_profiles import PROFILES\n"
            f"hypothesis.settings.register_profile({FAILURE_PROFILE!r}, **{{**PROFILES['ci'], "
            "'report_multiple_bugs': False, 'phases': [hypothesis.Phase.explicit, "
            "hypothesis.Phase.reuse, hypothesis.Phase.generate]})\n")


@dataclasses.dataclass
class Outcome:
    """One child run: ``platform``, the ``areas`` it targeted, the areas with a result
    that is neither pass nor a skip (``killed_areas``), its status counts, the exit code,
    wall seconds, and ``error`` when the run gave no results (usage error, timeout...)."""

    platform: str
    kind: str
    areas: tuple[str, ...]
    killed_areas: list[str]
    statuses: dict[str, int]
    returncode: int
    seconds: float
    failing: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None

    @property
    def killed(self) -> bool:
        return bool(self.killed_areas)


#: The child program: pytest, run as ``python -m pytest`` by the runner.
PYTEST = runner.Module("pytest")
#: Variables of this process's environment a child pytest does not inherit: the outer
#: session's options and tox's cache (as ``pytester`` drops them).
NOT_INHERITED = ("PYTEST_ADDOPTS", "TOX_ENV_DIR")


def run_child(args: Sequence[str], *, home: Path, timeout: float,
              env: Mapping[str, str] | None = None, conftest: bool = True) -> runner.ChildResult:
    """``pytest ARGS`` in a child (:func:`conformance.processes.runner.run_python`: its own
    process group, killed at the timeout and when this process dies; stdout and stderr
    captured apart; standard input closed), set up as ``pytester.runpytest_subprocess``
    sets one up: working directory, ``HOME`` and ``--basetemp`` (``home/basetemp``) in
    ``home`` (an existing directory), no :data:`NOT_INHERITED` variable, ``PY_COLORS=0``,
    ``home`` then the project first on ``PYTHONPATH`` (pytester puts the working
    directory first), ``env`` on top. ``conftest``: write :data:`CONFTEST` (the
    mutants' registration) to ``home/conftest.py`` first (False: the caller wrote one).
    ``timeout``: seconds, > 0 (a child past it is killed with its process group and has
    ``returncode`` None). Raises ValueError for a bad timeout."""
    if conftest:
        (home / "conftest.py").write_text(CONFTEST)
    base = runner.child_env({"HOME": str(home), "USERPROFILE": str(home), "PY_COLORS": "0",
                             **(env or {})})
    child_env = {k: v for k, v in base.items() if k not in NOT_INHERITED}
    child_env["PYTHONPATH"] = os.pathsep.join([str(home), child_env["PYTHONPATH"]])
    return runner.run_python(PYTEST, [f"--basetemp={home / 'basetemp'}", *args],
                             timeout=timeout, env=child_env, cwd=home, stdin="")


#: Seconds a :func:`pytester_run` child may run before it is killed and its test fails.
PYTESTER_TIMEOUT_S = 1800


def pytester_run(pytester: pytest.Pytester, *args: str | os.PathLike[str],
                 timeout: float = PYTESTER_TIMEOUT_S) -> pytest.RunResult:
    """What ``pytester.runpytest_subprocess(*args)`` returns, with the child started by
    :func:`run_child` in ``pytester.path`` (its conftest, if any, is the test's own), and
    its command and output printed as pytester prints them (shown when the test fails).
    ``timeout``: seconds, > 0; a child past it fails the test (``pytest.fail``)."""
    argv = [os.fspath(a) for a in args]
    print("running: pytest", *argv, "\n     in:", pytester.path)
    child = run_child(argv, home=pytester.path, timeout=timeout, conftest=False)
    print(child.stdout, end="")
    print(child.stderr, end="", file=sys.stderr)
    if child.timed_out:
        pytest.fail(f"the child pytest {argv} ran past its {timeout:g} s timeout")
    return pytest.RunResult(child.returncode, child.stdout.splitlines(),
                            child.stderr.splitlines(), child.wall_s)


def pytest_args(platform: str, targets: Iterable[Target], devices: int, report_dir: Path,
                fast: bool = False, first_failure: bool = False) -> list[str]:
    """The child pytest's arguments for ``platform`` over ``targets``; ``first_failure``:
    with :data:`FAILURE_PROFILE`."""
    expression = " or ".join(dict.fromkeys(t.expression() for t in targets))
    return ["--pyargs", *k_modules.pyargs(expression),
            f"--platform={platform}", f"--cpu-devices={devices}", "--expect-platform=cpu",
            "--profile=none", "-p", "no:cacheprovider", f"--report-dir={report_dir}", "-q",
            "-k", expression, *(["-x"] if fast else []),
            *([f"--hypothesis-profile={FAILURE_PROFILE}"] if first_failure else [])]


def run(platform: str, kind: str, targets: Iterable[Target], devices: int, *,
        fast: bool = False, timeout: float = 900, env: dict[str, str] | None = None,
        rewrites: bool = False, first_failure: bool = False) -> Outcome:
    """Run ``platform`` over ``targets`` in a child pytest (``env`` added to its
    environment) and classify its results. ``rewrites``: the platform rewrites programs;
    when its rewrite changed no program (or raised NoOpRewrite) the outcome is an error
    naming it, never a kill or a plain survivor. ``first_failure``: each test stops at its
    first failing example (:data:`FAILURE_PROFILE`)."""
    targets = list(targets)
    areas = tuple(dict.fromkeys(t.area for t in targets))
    with tempfile.TemporaryDirectory(prefix=f"mutant-{platform}-") as tmp:
        home = Path(tmp)
        report = home / "report"
        log = home / "rewrites.jsonl"
        proc = run_child(pytest_args(platform, targets, devices, report, fast, first_failure),
                         home=home, timeout=timeout,
                         env={**(env or {}), rewrite_log.ENV: str(log)})
        if proc.timed_out:
            return Outcome(platform, kind, areas, [], {}, -1, proc.wall_s,
                           error=f"timed out after {timeout:.0f} s")
        seconds = proc.wall_s
        path = report / "report.json"
        doc = json.loads(path.read_text()) if path.exists() else None
        no_op = rewrite_log.problem(log, platform) if rewrites else None
    if no_op:
        statuses = Counter(r["status"] for r in (doc or {}).get("results", []))
        return Outcome(platform, kind, areas, [], dict(statuses), proc.returncode, seconds,
                       error=no_op)
    if doc is None or not doc.get("results"):
        tail = (proc.stdout + proc.stderr)[-1500:]
        return Outcome(platform, kind, areas, [], {}, proc.returncode, seconds,
                       error=f"no results (exit code {proc.returncode}): {tail}")
    statuses = Counter(r["status"] for r in doc["results"])
    failing = [r["nodeid"] for r in doc["results"] if r["status"] not in HARMLESS]
    return against(Outcome(platform, kind, areas, [], dict(statuses), proc.returncode, seconds,
                           failing), set())


def against(outcome: Outcome, baseline: set[str]) -> Outcome:
    """``outcome`` with ``killed_areas`` recomputed: the targeted areas of its failing
    tests that are not in ``baseline`` (the tests failing on the healthy control); none
    for an outcome with an error."""
    if outcome.error:
        return dataclasses.replace(outcome, killed_areas=[])
    killed = {_area(n) for n in outcome.failing if n not in baseline} & set(outcome.areas)
    return dataclasses.replace(outcome, killed_areas=sorted(killed))


def _area(nodeid: str) -> str:
    module = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    return module.removeprefix("test_")


def run_mutant(mutant: Mutant, *, fast: bool = False, timeout: float = 900) -> Outcome:
    """Run one mutant against its targets."""
    return run(mutant.name, mutant.kind, mutant.targets, mutant.devices, fast=fast,
               timeout=timeout, env=mutant.env, rewrites=rewrites(mutant), first_failure=True)


def rewrites(mutant: Mutant) -> bool:
    """True for a mutant whose client rewrites programs (made by ``base.rewriting``)."""
    return getattr(mutant.client, "mutation", None) is not None


def run_controls(mutants: Iterable[Mutant], *, timeout: float = 1800) -> list[Outcome]:
    """The healthy control: ``cpu`` with the union of the mutants' targets, once per
    device count they use."""
    by_devices: dict[int, list[Target]] = {}
    for m in mutants:
        by_devices.setdefault(m.devices, []).extend(m.targets)
    return [run(CONTROL, "control", targets, devices, timeout=timeout)
            for devices, targets in sorted(by_devices.items())]


def select(names: Iterable[str] | None = None) -> list[Mutant]:
    """Mutants by name (default: the whole catalog). Raises KeyError naming unknown ones."""
    if not names:
        return list(CATALOG.values())
    unknown = [n for n in names if n not in CATALOG]
    if unknown:
        raise KeyError(f"argument 'names': no mutant named {unknown} (see --list)")
    return [CATALOG[n] for n in names]


def run_all(mutants: list[Mutant], *, jobs: int = 1, fast: bool = False,
            control: bool = True, progress=None) -> tuple[list[Outcome], list[Outcome]]:
    """Run ``mutants`` (``jobs`` children at a time) and, if ``control``, the healthy
    control (kills then count only tests that do not fail on it). Returns (mutant
    outcomes in catalog order, control outcomes).
    ``progress``: called with each Outcome as it finishes. Raises ValueError if jobs < 1."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"argument 'jobs' must be an int >= 1, got {jobs!r}")
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        controls = pool.submit(run_controls, mutants) if control else None
        futures = {pool.submit(run_mutant, m, fast=fast): m.name for m in mutants}
        done = {}
        for future in concurrent.futures.as_completed(futures):
            done[futures[future]] = outcome = future.result()
            if progress:
                progress(outcome)
        checks = controls.result() if controls else []
    baseline = {n for c in checks for n in c.failing}
    return [against(done[m.name], baseline) for m in mutants], checks
