"""pytest plugin of the conformance suite (loaded through the ``pytest11`` entry point).

Options (:mod:`conformance.session.options`): ``--platform`` (default cpu; any
registered or discoverable platform), ``--cpu-devices N`` (default 8),
``--num-processes N``, ``--plugin-library PATH`` and ``--plugin-options JSON-or-FILE``
(certify a PJRT plugin given as a shared library, registered under ``--platform``),
``--expect-platform``, ``--profile``, ``--declare``/``--declare-file``,
``--waivers``, ``--known-failures FILE``; and here ``--report-dir DIR`` and
``--write-profile FILE``, ``--force-report-dir``.

It always registers its options and does nothing else unless the run asks for the
suite (:mod:`conformance.session.activation`) or ``pjrt-conformance run`` handed it the
run's options. Then it takes the run's options, once, as one typed object
(:class:`conformance.session.run_options.RunOptions`, read through
:func:`~conformance.session.run_options.run_options`; built and checked by
:mod:`conformance.session.option_intake`; a bad one is a ``pytest.UsageError``; a
pytest-xdist worker gets the controller's through ``workerinput``),
registers and loads the Hypothesis profiles
(:mod:`conformance.session.hypothesis_profiles`), sets up cancellation and process
lifetimes (:mod:`conformance.processes.lifetime`), has pytest-reportlog write
``results.jsonl`` into ``--report-dir`` (:mod:`conformance.session.results_log`),
provides the fixtures of :mod:`conformance.session.fixtures` and the hooks of
:mod:`conformance.session.suite_hooks`. Results are recorded and the report
written by :mod:`conformance.session.recording`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.session import activation
from conformance.session import option_intake
from conformance.session import options
from conformance.session import run_options
from conformance.session import validate
from conformance.session import progress

#: True in the stash of a run that asked for the suite (:mod:`.activation`).
ACTIVE = pytest.StashKey[bool]()
_WORKER_FLAG = "pjrt_conformance_active"


def active(config: pytest.Config) -> bool:
    """True when this run is a conformance run (the plugin configured the suite)."""
    return config.stash.get(ACTIVE, False)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pjrt-conformance", "PJRT conformance suite")
    options.add_to(group.addoption)
    group.addoption("--report-dir", default=None,
                    help="write the report bundle (report.json, report.md, report.html, "
                         "junit.xml, MANIFEST.sha256) into this directory")
    group.addoption("--write-profile", default=None,
                    help="write the collected test ids and tiers as a profile to this path")
    group.addoption("--force-report-dir", action="store_true", default=False,
                    help="replace an earlier bundle in --report-dir (default: refuse a "
                         "non-empty directory)")
    progress.add_options(group)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> Any:
    """A project conftest.py that defines one of the suite's options (``--platform``) is
    one usage error naming the clash and the workaround (:mod:`.option_clash`)."""
    from conformance.session import option_clash

    try:
        return (yield)
    except (ValueError, TypeError) as err:   # pytest's and argparse's errors
        message = option_clash.explain(err)
        if message is None:
            raise
        raise pytest.UsageError(message) from None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Configure the suite, only in a run that asks for it (:mod:`.activation`)."""
    worker = getattr(config, "workerinput", None)
    handed = run_options.handed(config)
    if not (worker.get(_WORKER_FLAG) if worker is not None
            else handed is not None or activation.requested(config)):
        return
    try:   # the run's options, once (:mod:`.option_intake`)
        config.stash[run_options.KEY] = option_intake.received(config)
        _configure_suite(config, claim=worker is None and handed is None)
    except validate.OptionError as err:
        raise pytest.UsageError(str(err)) from None
    config.stash[ACTIVE] = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: a worker of a conformance run is one too, and gets the run's
    options as a value (it does not parse its command line's suite options again)."""
    node.workerinput[_WORKER_FLAG] = active(node.config)
    if active(node.config):
        node.workerinput[option_intake.WORKER_INPUT] = \
            run_options.run_options(node.config).to_wire()


def _configure_suite(config: pytest.Config, *, claim: bool) -> None:
    """Configure the suite from the run's options (in the stash); ``claim``: check and
    claim ``report_dir`` (a ``pytest`` run's controller; ``pjrt-conformance run`` claimed
    its ``--output`` already). Raises OptionError or pytest.UsageError."""
    from conformance.processes import lifetime
    from conformance.session import backend
    from conformance.session import cancel
    from conformance.session import device_memory
    from conformance.session import hypothesis_profiles
    from conformance.session import recording
    from conformance.session import results_log
    from conformance.session import session_state
    from runtime import xla_client

    opts = run_options.run_options(config)
    try:
        hypothesis_profiles.register(explicit=opts.hypothesis_profile)
        hypothesis_profiles.draw_without_local_constants()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from None
    config.pluginmanager.import_plugin("conformance.session.fixtures")
    config.addinivalue_line("markers", "capability(*names): test needs these capability "
                                       "modules (every one)")
    config.addinivalue_line("markers", "informational: the result never blocks certification "
                                       "(except crash, timeout, wrong result)")
    merging = not hasattr(config, "workerinput")
    if merging and opts.report_dir is not None:
        out = opts.report_dir
        if claim:
            out = validate.output_dir(out, option="--report-dir", force=opts.force_report_dir)
        if getattr(config.option, "report_log", None) is None:  # pytest-reportlog
            config.option.report_log = str(out / results_log.LOG_FILE)
    lifetime.on_configure(config, merging=merging)
    if merging:
        cancel.note_session(config)   # a cancel whose KeyboardInterrupt gets lost
        cancel.check()   # one that `pjrt-conformance run` noted while pytest started
    device_memory.share_device_memory(opts.platform)
    try:
        spec = backend.BackendSpec(
            platform=opts.platform, cpu_devices=opts.cpu_devices,
            plugin_library=str(opts.plugin_library) if opts.plugin_library else None,
            plugin_options=opts.create_options, expect_platform=opts.expect_platform,
            setup_files=tuple(sorted(
                str(Path(p.__file__)) for p in config.pluginmanager.get_plugins()
                if getattr(p, "__name__", "").endswith("conftest")
                and getattr(p, "__file__", None))))
        spec.configure()
    except (RuntimeError, ValueError, TypeError, xla_client.GpuLibNotLinkedError) as err:
        raise pytest.UsageError(f"--platform={opts.platform}: {err}") from err
    state = session_state.SessionState(opts, spec)
    try:
        state.configure_certification()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from err
    from conformance.session import sharding

    sharding.configure(config, state.profile.header() if state.profile else None)
    if not _is_xdist_controller(config):
        state.client()  # fail fast: a backend that cannot start is a usage error
    else:
        from conformance.processes import preflight

        problem, state.platform_info = preflight.describe(spec)
        if problem is not None:
            raise pytest.UsageError(problem if problem.startswith("--") else
                                    f"--platform={spec.platform}: {problem}")
    if merging:   # every check passed: from here on the run is one to finalize
        from conformance.session import disk_full

        try:
            results_log.start(config)
            results_log.note_platform(config, state.platform_info)
        except OSError as err:   # a full disk before the first test: exit 5, not a traceback
            raise pytest.UsageError(disk_full.start_failed(
                config, opts.report_dir, err)) from None
    config.stash[session_state.KEY] = state
    config.pluginmanager.register(recording.Recorder(config), "pjrt-conformance-recorder")
    if merging:
        from conformance.session import disk_full

        config.pluginmanager.register(disk_full.Guard(config), "pjrt-conformance-disk-full")
    from conformance.session import suite_hooks

    config.pluginmanager.register(suite_hooks, "pjrt-conformance-suite")
    mode = progress.mode_of(config, isatty=sys.stdout.isatty())
    if mode != "off" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(progress.Progress(config, mode), "pjrt-conformance-progress")


def _is_xdist_controller(config: pytest.Config) -> bool:
    """True in the pytest-xdist controller, which runs no tests and opens no client."""
    workers = getattr(config.option, "numprocesses", None)
    return not hasattr(config, "workerinput") and workers not in (None, 0)
