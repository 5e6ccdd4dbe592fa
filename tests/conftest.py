"""Self-tests of the project (not of a backend)."""

import json

import pytest


@pytest.fixture(scope="session")
def suite_runs(tmp_path_factory):
    """The session's shared child conformance runs (:class:`tests.suite_runs.SuiteRuns`):
    ``suite_runs.run(platform, *select, ...)`` runs each distinct selection once per
    session, across xdist workers, and returns its :class:`tests.suite_runs.ChildRun`."""
    from tests.suite_runs import SuiteRuns, shared_directory

    return SuiteRuns(shared_directory(tmp_path_factory))


@pytest.fixture
def run_suite(pytester):
    """Run the installed conformance suite in a child pytest against a registered backend:
    a mutant of ``tests/mutants`` (or ``healthy-control``), registered by the child's
    conftest (written at setup into ``pytester.path``, the child's directory; a test may
    replace it before the run). The child collects only the modules that ``select``'s
    ``-k`` can select (:mod:`tests.k_modules`). The child starts through
    :func:`tests.mutants.runner.pytester_run` (:mod:`conformance.processes.runner`).

    ``devices``: ``--cpu-devices`` of the child. Returns (``pytest.RunResult``, report
    dict, None when the child wrote none).
    """
    from tests import k_modules
    from tests.mutants.runner import CONFTEST, pytester_run

    pytester.makeconftest(CONFTEST)

    def run(platform: str, *select: str, expect_platform: str | None = "cpu", devices: int = 2):
        out = pytester.path / "report"
        expect = [f"--expect-platform={expect_platform}"] if expect_platform else []
        result = pytester_run(
            pytester, "--pyargs", *k_modules.pyargs_of(select), f"--platform={platform}",
            f"--cpu-devices={devices}", *expect, "--profile=none",
            f"--report-dir={out}", "--force-report-dir", "-p", "no:cacheprovider", *select)
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
