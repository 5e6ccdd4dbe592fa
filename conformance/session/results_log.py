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
counted. The manifest lists both files, so ``verify`` checks them too.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pytest

LOG_FILE, RUN_FILE = "results.jsonl", "run.json"
#: Files of the bundle beyond :data:`conformance.certification.bundle.FILES`.
EXTRA = (LOG_FILE, RUN_FILE)
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
    """The test reports of a ``results.jsonl``; a last line cut off by a kill is skipped.
    Raises ValueError naming the line for any other line that is not JSON."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    reports = []
    for n, line in enumerate(lines, 1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            if n == len(lines):
                break
            raise ValueError(f"{path} line {n}: not JSON ({err})") from None
        if isinstance(data, dict) and data.get("$report_type") == "TestReport":
            reports.append(pytest.TestReport._from_json(data))
    return reports


class _Saved:
    """The saved options, answering ``getoption`` like a pytest config."""

    def __init__(self, values: dict[str, Any]):
        self.values = values

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def finalize(out: Path, why: str = "the run ended before it wrote its report"
             ) -> tuple[dict[str, Any], Path]:
    """Build the ``incomplete`` bundle of ``out`` from its ``results.jsonl`` and ``run.json``
    (see the module docstring); return (report document, path of report.json).

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
        reports = read_reports(out / LOG_FILE)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{out}: not the output directory of a run ({err})") from None
    spec = backend.BackendSpec(platform=opts["platform"], cpu_devices=opts["cpu_devices"])
    state = SessionState(_Saved(opts), spec)  # type: ignore[arg-type]
    state.configure_certification()
    for rep in reports:
        state.collector.add(rep)
    state.collector.match_known(state.known, state.platform, state.plugin_library)
    started = datetime.datetime.fromisoformat(facts["started_utc"])
    ended = datetime.datetime.fromtimestamp((out / LOG_FILE).stat().st_mtime,
                                            datetime.timezone.utc)
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
    return doc, bundle.write(doc, out, extra=EXTRA)
