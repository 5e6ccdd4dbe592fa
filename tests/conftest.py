"""Self-tests of the project (not of a backend)."""

import json
import sys

import pytest


@pytest.fixture(scope="session")
def suite_runs(tmp_path_factory):
    """The session's shared child conformance runs (:class:`tests.suite_runs.SuiteRuns`):
    ``suite_runs.run(platform, *select, ...)`` runs each distinct selection once per
    session, across xdist workers, and returns its :class:`tests.suite_runs.ChildRun`."""
    from tests.suite_runs import SuiteRuns, shared_directory

    return SuiteRuns(shared_directory(tmp_path_factory))


#: Seconds a ``run_suite`` child may run before it is killed and its test fails.
RUN_SUITE_TIMEOUT_S = 1800


@pytest.fixture
def run_suite(pytester):
    """Run the installed conformance suite in a child pytest against a registered backend:
    a mutant of ``tests/mutants`` (or ``healthy-control``), registered by the child's
    conftest (written at setup into ``pytester.path``, the child's directory; a test may
    replace it before the run). The child starts through
    :func:`tests.mutants.runner.run_child` (:mod:`conformance.processes.runner`).

    ``devices``: ``--cpu-devices`` of the child. Returns (``pytest.RunResult``, report
    dict, None when the child wrote none). A child past :data:`RUN_SUITE_TIMEOUT_S`
    fails the test.
    """
    from tests.mutants.runner import CONFTEST, run_child

    pytester.makeconftest(CONFTEST)

    def run(platform: str, *select: str, expect_platform: str | None = "cpu", devices: int = 2):
        out = pytester.path / "report"
        expect = [f"--expect-platform={expect_platform}"] if expect_platform else []
        args = ["--pyargs", "conformance", f"--platform={platform}", f"--cpu-devices={devices}",
                *expect, "--profile=none", f"--report-dir={out}", "--force-report-dir",
                "-p", "no:cacheprovider", *select]
        print("running: pytest", *args, "\n     in:", pytester.path)
        child = run_child(args, home=pytester.path, timeout=RUN_SUITE_TIMEOUT_S,
                          conftest=False)
        print(child.stdout, end="")
        print(child.stderr, end="", file=sys.stderr)
        if child.timed_out:
            pytest.fail(f"the child run ran past its {RUN_SUITE_TIMEOUT_S} s timeout")
        result = pytest.RunResult(child.returncode, child.stdout.splitlines(),
                                  child.stderr.splitlines(), child.wall_s)
        doc = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() \
            else None
        return result, doc
    return run


@pytest.fixture
def registry():
    """``runtime.xla_bridge`` with its registrations, backends and platform list put
    back after the test, starting from no initialized backends and no list.

    Reaches into the registry's private state (``runtime._registry.STATE``): the
    public API has no way to unregister everything a test registered."""
    from runtime import _registry, xla_bridge

    saved = _registry.STATE.snapshot()
    xla_bridge.clear_backends()
    xla_bridge.set_platforms(None)
    try:
        yield xla_bridge
    finally:
        _registry.STATE.restore(saved)
