"""Recording of results (a pytest plugin module, loaded by the suite's plugin).

Each process that runs tests records every phase's outcome as data in the
report's ``user_properties`` (:mod:`conformance.session.outcomes`); pytest-xdist
carries them to the controller. The process that merges the results (the
controller, or the only process without workers) collects them, matches the
known failures once and hands the records, with the facts of the run, to the one
pipeline that finishes a run (:func:`conformance.certification.finish.pipeline.finish`:
attribution, the report, its sections, the bundle).
"""

from __future__ import annotations

import errno
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.certification.finish import pipeline
from conformance.certification.results import coverage_records
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.certification.results import records
from conformance.certification.verdict import report
from conformance.processes import lifetime
from conformance.programs import coverage
from conformance.certification.verdict import plugin_verdict
from conformance.session import disk_full
from conformance.session import crash_location
from conformance.session import evidence
from conformance.session import outcomes
from conformance.session import invocation
from conformance.session import results_log
from conformance.session import sharding
from conformance.session import pjrt_plugin_info
from conformance.session import session_state
from conformance.session.run_options import run_options

_WORKER_PLATFORM, _WORKER_PROGRAMS = "pjrt_platform_info", "pjrt_programs"


def repro_command(config: pytest.Config, item_path: str, nodeid: str) -> str:
    """One pytest command line that reruns ``nodeid`` on the same backend."""
    name = nodeid.split("::", 1)[1] if "::" in nodeid else ""
    path = Path(item_path).resolve()
    if path.parent == Path(conformance.__file__).resolve().parent:
        # Portable: the installed suite, wherever it lives on the reader's machine.
        module = f"conformance.{path.stem}"
        target = f"--pyargs {shlex.quote(f'{module}::{name}' if name else module)}"
    else:
        target = shlex.quote(f"{item_path}::{name}" if name else item_path)
    s = session_state.of(config).spec
    plugin = ""
    if s.plugin_library:
        plugin = f" --plugin-library={shlex.quote(s.plugin_library)}"
        if s.plugin_options:
            plugin += f" --plugin-options={shlex.quote(json.dumps(s.plugin_options))}"
    if s.expect_platform:
        plugin += f" --expect-platform={s.expect_platform}"
    opts = run_options(config)
    declared = opts.float_controls
    if declared and declared != "auto":  # a declaration the check depends on
        plugin += f" --float-controls={shlex.quote(declared)}"
    return (f"pytest {target} --platform={s.platform} "
            f"--cpu-devices={s.cpu_devices} "
            f"--num-processes={opts.num_processes}{plugin} -p no:cacheprovider")


def _float_controls(config: pytest.Config) -> dict[str, Any] | None:
    """The run's declared denormal handling for report.json: the session's one resolution
    (:meth:`conformance.session.session_state.SessionState.float_controls`, what the checks got);
    None when no client was described."""
    from conformance.helpers import float_control_modes

    controls = session_state.of(config).float_controls()
    return float_control_modes.record(controls) if controls is not None else None


class Recorder:
    """The plugin object that records and merges results (one per pytest process)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.worker = hasattr(config, "workerinput")  # a pytest-xdist worker
        self.coverage: dict[str, Any] = {}  # op -> dtype -> counts (coverage.add)
        self.declined: dict[str, str] = {}  # op -> not_supported message
        self.locations = crash_location.Locations(config)  # for pytest-xdist crash reports

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]):
        """Attach the phase's outcome record (status by exception type, failure facts)."""
        rep = yield
        outcome = outcomes.of_phase(call, rep)
        rep.user_properties.append((records.OUTCOME_PROPERTY, outcome))
        if call.when == "setup":
            coverage.reset()
        elif call.when == "call":  # the ops this test compiled, executed, compared
            rep.user_properties.append((coverage.PROPERTY, coverage.take(outcome["status"])))
        return rep

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        """pytest-xdist: the worker running ``crashitem`` died (a segfault, SIGKILL, the
        OOM killer); its report is a crash, located in the test's file so that the crash
        (and a re-run, ``flaky`` at best) keeps the test's own id
        (:mod:`conformance.session.crash_location`)."""
        report.location = self.locations.of(report.nodeid)
        report.user_properties.append((records.OUTCOME_PROPERTY, {"status": "crash"}))

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]
                                ) -> None:
        """Where each test's file is (pytest-xdist forwards this from its workers)."""
        if not self.worker:
            self.locations.note(nodeid, location)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect every phase report where the results are merged (not in workers)."""
        if self.worker:
            return
        path = report.location[0] if report.location else report.nodeid.split("::")[0]
        full = str(Path(self.config.rootpath, path))
        session_state.of(self.config).collector.add(
            report, repro_command=repro_command(self.config, full, report.nodeid))
        coverage_records.collect(self.coverage, self.declined, report.nodeid,
                                 report.user_properties)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist: add a finished worker's platform facts and program counts."""
        output = getattr(node, "workeroutput", {})
        state = session_state.of(self.config)
        if output.get(_WORKER_PLATFORM):
            state.platform_info = output[_WORKER_PLATFORM]
        state.add_programs(output.get(_WORKER_PROGRAMS, {}))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Workers hand their facts to the controller; the merging process matches
        the known failures and hands the records and the run's header to the one
        pipeline that finishes a run
        (:func:`conformance.certification.finish.pipeline.finish`), which writes the
        bundle (``--report-dir``); nothing here edits the report after it."""
        config = self.config
        state = session_state.of(config)
        if self.worker:
            config.workeroutput[_WORKER_PLATFORM] = state.platform_info
            config.workeroutput[_WORKER_PROGRAMS] = state.program_counts()
            return
        state.add_programs(state.program_counts())  # in-process run: its own cache
        state.collector.match_known(state.known, state.platform, state.plugin_library)
        opts = run_options(config)
        out = opts.report_dir
        if out is None:
            return
        if sharding.usage_error(config) is not None:   # a usage error: no report
            return
        interrupted = None
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            interrupted = f"cancelled by {lifetime.cancelled_by(config)}"
            config.pluginmanager.get_plugin("terminalreporter").write_line(
                f"pjrt-conformance: {interrupted}; writing the finished results to {out} "
                "(verdict incomplete)")
        log = getattr(config, "_report_log_plugin", None)  # pytest-reportlog: its last line
        if log is not None:
            config.pluginmanager.unregister(log)
            try:
                log.close()
            except OSError as err:   # a full disk: the bundle below notes it too
                disk_full.write_failed(config, out, err)
        results = state.collector.finished_results() if interrupted else \
            list(state.collector.results.values())
        info = state.platform_info
        header = report.header(
            platform=state.platform, known=state.known, argv=sys.argv,
            platform_info=pjrt_plugin_info.with_framework_version(info) if info else {},
            cpu_devices=state.cpu_devices, num_processes=opts.num_processes,
            programs=state.programs, started=state.started,
            duration_s=0.0,   # measured by the pipeline, up to the report
            hypothesis_seed=_seed(opts.hypothesis_seed),
            plugin_library=state.plugin_library,
            float_controls=_float_controls(config))
        records = pipeline.Records(fresh=results, sources=evidence.sources(config, results))
        run = pipeline.RunHeader(
            header=header, collected=session.testscollected, profile=state.profile,
            declared=tuple(state.declared), waivers=tuple(state.waivers),
            device_count=info.get("local_device_count", 1), interrupted=interrupted,
            sections={**coverage.section(self.coverage, self.declined),
                      **sharding.section(config)},
            since_previous=True, started_monotonic=state.t0)
        try:
            state.written = pipeline.finish(records, run, out,
                                            results_log.RunDirectory())
        except (OSError, MemoryError) as err:   # a full disk, no memory: one line; exit 5,
            if not isinstance(err, OSError):     # finalize builds it later
                err = OSError(errno.ENOMEM, "not enough memory to write the bundle")
            config.pluginmanager.get_plugin("terminalreporter").write_line(
                f"pjrt-conformance: {disk_full.write_failed(config, out, err)}")

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        """The verdict line, and known-failure entries that matched no test."""
        if self.worker:
            return
        state = session_state.of(self.config)
        # `pjrt-conformance run` (its own ini file) prints the verdict once, after pytest
        if state.written and self.config.inipath != invocation.INI:
            doc, path = state.written
            terminalreporter.write_line(
                f"pjrt-conformance verdict: {plugin_verdict.headline(doc)} "
                f"({'; '.join(doc['verdict_reasons']) or 'all checks passed'}) -- report: {path}")
        if self.config.get_verbosity() > 0:  # bisect measured it: news to a maintainer only
            for line in fixed_lines(state.known, state.platform):
                terminalreporter.write_line(line)
        for e in known_failures.unmatched(state.known, state.platform, state.plugin_library):
            terminalreporter.write_line(f"known-failures entry matched no test: {e.pattern} "
                                        f"({e.source})")


def fixed_lines(known: list[known_failures.Entry], platform: str | None) -> list[str]:
    """One line per catalog defect of ``known`` measured fixed at or before the installed
    release (``catalog bisect``): no longer a known failure, so never silently unmatched."""
    defects = list({e.defect.id: e.defect for e in known if e.defect is not None}.values())
    return [f"catalog defect {d.id} is fixed in {d.measured.package} {d.measured.first_fixed} "
            f"(measured {d.measured.date}): its tests are expected to pass: {', '.join(d.tests)}"
            for d in defect_catalog.fixed_on_installed(defects, platform)]


def _seed(value: Any) -> int | None:
    """``--hypothesis-seed`` as recorded in the report (Hypothesis takes any string; an
    integer stays an integer)."""
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return value
