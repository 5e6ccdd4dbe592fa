"""Results that survive the run: the incremental log, and a bundle built from it.

With ``--report-dir DIR`` the plugin has pytest-reportlog write every phase report
to ``DIR/results.jsonl`` the moment the test's phase ends (one JSON line each,
flushed, as pytest serializes reports for pytest-xdist; ``user_properties`` carry
the suite's outcome records). ``DIR/run.json`` holds the facts needed to build a
report without the process that ran the tests: the run's options, command line,
start time, collected count and Hypothesis settings.

If the controller dies before it writes the report (SIGKILL, OOM kill, a crash),
:func:`finalize` (``pjrt-conformance finalize DIR``) builds the bundle from those two
files: verdict ``incomplete``, every test that finished kept, a test in flight not
counted. The manifest lists both files, so ``verify`` checks them too. When the bundle
is written (here and at the end of a run) the log is packed: slimmed and xz-compressed
to ``results.jsonl.xz`` (:mod:`conformance.certification.runlog`, the one module that
reads and writes the log file).
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.certification import runlog

LOG_FILE, RUN_FILE = runlog.LOG, "run.json"
#: Files of the bundle beyond :data:`conformance.certification.bundle.FILES` (the log is
#: packed once the bundle is written; a log that could not be packed stays plain).
EXTRA = (LOG_FILE, runlog.PACKED, RUN_FILE)
#: The pytest options (``dest`` names) that :func:`finalize` needs again.
_OPTIONS = ("platform", "cpu_devices", "num_processes", "profile", "declare", "declare_file",
            "waivers", "known_failures", "plugin_library", "plugin_options", "expect_platform",
            "defects", "reference_timeout")


def _out(config: pytest.Config) -> Path | None:
    out = config.getoption("report_dir", None)
    return Path(out) if out and not hasattr(config, "workerinput") else None


def start(config: pytest.Config) -> None:
    """Write ``run.json`` into ``--report-dir`` (nothing without it, or in a worker)."""
    out = _out(config)
    if out is None:
        return
    facts = {"argv": list(sys.argv), "collected": None, "hypothesis": None,
             "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
             "options": {k: config.getoption(k) for k in _OPTIONS}}
    (out / RUN_FILE).write_text(json.dumps(facts, indent=1) + "\n")


def note_collected(config: pytest.Config, collected: int) -> None:
    """Record the collected count and the Hypothesis settings in ``run.json`` (once)."""
    out = _out(config)
    if out is None or not (out / RUN_FILE).is_file():
        return
    facts = json.loads((out / RUN_FILE).read_text())
    if facts["collected"] is None:
        import hypothesis

        prof = hypothesis.settings.default
        facts["collected"] = collected
        facts["hypothesis"] = {"profile": hypothesis.settings._current_profile,
                               "max_examples": prof.max_examples,
                               "derandomize": prof.derandomize,
                               "seed": config.getoption("hypothesis_seed", None)}
        (out / RUN_FILE).write_text(json.dumps(facts, indent=1) + "\n")


def read_reports(path: Path) -> list[pytest.TestReport]:
    """The test reports of a results log (plain ``results.jsonl`` or packed); a last line
    cut off by a kill is skipped. Raises ValueError naming the line for any other line
    that is not JSON, OSError for an unreadable file."""
    return [pytest.TestReport._from_json(data) for data in runlog.records(path)
            if isinstance(data, dict) and data.get("$report_type") == "TestReport"]


def pack(out: Path) -> Path | None:
    """Pack the results log of the run directory ``out`` before its bundle is written
    (:func:`conformance.certification.runlog.pack`); return the packed path, or None
    when there is no plain log or it could not be packed (it then stays, plain, in the
    bundle: a bundle is never lost to packing)."""
    try:
        return runlog.pack(out)
    except (OSError, ValueError) as err:
        print(f"pjrt-conformance: {out / LOG_FILE} kept unpacked: {err}", file=sys.stderr)
        return None


class _Saved:
    """The saved options, answering ``getoption`` like a pytest config."""

    def __init__(self, values: dict[str, Any]):
        self.values = values

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def finalize(out: Path, why: str = "the run ended before it wrote its report"
             ) -> tuple[dict[str, Any], Path]:
    """Build the ``incomplete`` bundle of ``out`` from its results log and ``run.json``
    (see the module docstring), the log packed; return (report document, path of
    report.json).

    Raises ValueError naming the file for a missing or malformed ``run.json`` or
    ``results.jsonl``, and for a directory that already holds a report.json.
    """
    from conformance.certification import bundle, report
    from conformance.session import backend
    from conformance.session.state import SessionState

    out = Path(out)
    if (out / "report.json").exists():
        raise ValueError(f"{out}: already holds report.json; check it with "
                         f"'pjrt-conformance verify {out}'")
    try:
        facts = json.loads((out / RUN_FILE).read_text())
        opts = facts["options"]
        log = runlog.resolve(out / LOG_FILE)
        reports = read_reports(log)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{out}: not the output directory of a run ({err})") from None
    spec = backend.BackendSpec(platform=opts["platform"], cpu_devices=opts["cpu_devices"])
    state = SessionState(_Saved(opts), spec)  # type: ignore[arg-type]
    state.configure_certification()
    for rep in reports:
        state.collector.add(rep)
    state.collector.match_known(state.known, state.platform, state.plugin_library)
    started = datetime.datetime.fromisoformat(facts["started_utc"])
    ended = datetime.datetime.fromtimestamp(log.stat().st_mtime, datetime.timezone.utc)
    head = report.header(platform=state.platform, platform_info={}, known=state.known,
                         argv=facts["argv"], cpu_devices=state.cpu_devices,
                         num_processes=opts["num_processes"],
                         programs={"compiles": 0, "cache_hits": 0}, started=started,
                         duration_s=max(0.0, (ended - started).total_seconds()))
    if facts.get("hypothesis"):
        head["hypothesis"] = facts["hypothesis"]
    results = state.collector.finished_results()
    doc = report.build(results, collected=max(facts["collected"] or 0, len(results)),
                       header=head, profile=state.profile, declared=tuple(state.declared),
                       waivers=tuple(state.waivers), interrupted=why,
                       device_count=state.cpu_devices if state.platform == "cpu" else 1)
    pack(out)
    return doc, bundle.write(doc, out, extra=EXTRA)
