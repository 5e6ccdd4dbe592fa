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
counted. The manifest lists both files, so ``verify`` checks them too. ``run.json``
names the run's option files (``--waivers``, ``--known-failures``, ...) by their paths
while the run goes on; when the bundle is written it is sealed: no absolute path of this
machine (:func:`seal_run`; what it was stays in ``run.local.json`` until the manifest is
written, so a bundle that could not be written is still finalized with those files). When the bundle
is written (here and at the end of a run) the log is packed: slimmed and xz-compressed
to ``results.jsonl.xz`` (:mod:`conformance.certification.results.runlog`, the one module that
reads and writes the log file).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import file_limits
from conformance.certification import jsontext
from conformance.certification.results import runlog

LOG_FILE, RUN_FILE = runlog.LOG, "run.json"
#: ``run.json`` as the run wrote it (real paths), kept while its bundle is written
#: (:func:`seal_run`): never part of a bundle.
RUN_LOCAL = "run.local.json"
#: What :func:`seal_run` replaced in this process, by run directory (a cancel while the
#: bundle is signed rebuilds it: :func:`incomplete_bundle`).
_UNSEALED: dict[str, Any] = {}
#: Files of the bundle beyond :data:`conformance.certification.bundle.bundle_files.FILES`
#: (the log is packed once the bundle is written; a log that could not be packed stays plain).
EXTRA = (LOG_FILE, runlog.PACKED, RUN_FILE)


def _out(config: pytest.Config) -> Path | None:
    from conformance.session.run_options import run_options

    out = run_options(config).report_dir
    return out if out is not None and not hasattr(config, "workerinput") else None


def _write_run(out: Path, facts: dict[str, Any]) -> None:
    """``run.json`` as the run keeps it: its option files by their real paths, which
    :func:`finalize` reads again (:func:`seal_run` redacts it when the bundle is written)."""
    (out / RUN_FILE).write_text(json.dumps(facts, indent=1) + "\n")


def _replace(path: Path, text: str, mtime_ns: int) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, its mtime set."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text)
        os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def seal_run(out: Path) -> None:
    """``run.json`` of the run directory ``out`` as its bundle holds it, just before the
    bundle (its manifest) is written: no absolute path of this machine
    (:func:`~conformance.certification.local_paths.redact_tree`). What it was is
    kept for :func:`finalize` (a bundle that could not be written, a cancel while it was
    written or signed) in ``run.local.json`` (:data:`RUN_LOCAL`, removed once the bundle
    is written: :class:`RunDirectory`) and in this process. Nothing to do without a
    ``run.json`` or when it holds no local path. Raises OSError when it cannot be
    written (``run.json`` is then as it was), ValueError for a malformed one."""
    from conformance.certification import local_paths

    path = out / RUN_FILE
    if not path.is_file():
        return
    text = file_limits.read_text(path, limit=file_limits.BUNDLE_FILE_LIMIT)
    facts = jsontext.loads(text)
    sealed = local_paths.redact_tree(facts)
    if sealed == facts:
        return
    mtime = path.stat().st_mtime_ns
    _UNSEALED[_key(out)] = facts
    if not (out / RUN_LOCAL).is_file():
        _replace(out / RUN_LOCAL, text, mtime)
    _replace(path, json.dumps(sealed, indent=1) + "\n", mtime)


def _key(out: Path) -> str:
    return os.path.realpath(out)


def _run_facts(out: Path) -> Any:
    """The facts of ``run.json`` of ``out`` as the run wrote them: ``run.local.json``
    when a bundle write sealed ``run.json`` (:func:`seal_run`), else what this process
    sealed, else ``run.json``. Raises OSError, ValueError like reading it."""
    local = out / RUN_LOCAL
    if local.is_file():
        return jsontext.loads(file_limits.read_text(local,
                                                    limit=file_limits.BUNDLE_FILE_LIMIT))
    facts = jsontext.loads(file_limits.read_text(   # no FIFO or device, 256 MiB
        out / RUN_FILE, limit=file_limits.BUNDLE_FILE_LIMIT))
    unsealed = _UNSEALED.get(_key(out))
    if unsealed is not None:
        from conformance.certification import local_paths

        if local_paths.redact_tree(unsealed) == facts:   # the one this process sealed
            return unsealed
    return facts


class RunDirectory:
    """The files of the run directory that its bundle lists besides the report files
    (:class:`conformance.certification.finish.pipeline.RunFiles`): the results log,
    packed (:func:`pack`; ``skip``: numbers of its dropped lines), and ``run.json``,
    sealed (:func:`seal_run`); ``run.local.json`` removed once the manifest is written."""

    def __init__(self, skip: tuple[int, ...] = ()):
        self.skip = skip

    def prepare(self, out: Path) -> tuple[str, ...]:
        """Pack the log and seal ``run.json`` of ``out``; return the names the manifest
        lists when present (:data:`EXTRA`). Raises OSError as :func:`pack` does (a log
        that could not be rewritten without local paths) or when ``run.json`` cannot be
        sealed; a malformed ``run.json`` is kept as it is, with one line on stderr."""
        pack(out, self.skip)
        try:
            seal_run(out)
        except ValueError as err:   # malformed: a reader's problem, not a local path's
            print(f"pjrt-conformance: {out / RUN_FILE} kept as it is: {err}",
                  file=sys.stderr)
        return EXTRA

    def written(self, out: Path) -> None:
        """The manifest of ``out`` is written: ``run.local.json`` is no longer needed."""
        (out / RUN_LOCAL).unlink(missing_ok=True)


def start(config: pytest.Config) -> None:
    """Write ``run.json`` into ``--report-dir`` (nothing without it, or in a worker);
    its ``options``: :meth:`conformance.session.run_options.RunOptions.saved`."""
    from conformance.session.run_options import run_options

    out = _out(config)
    if out is None:
        return
    facts = {"argv": list(sys.argv), "collected": None, "hypothesis": None,
             "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
             "options": run_options(config).saved()}
    _write_run(out, facts)


def note_collected(config: pytest.Config, collected: int) -> None:
    """Record the collected count and the Hypothesis settings in ``run.json`` (once)."""
    out = _out(config)
    if out is None or not (out / RUN_FILE).is_file():
        return
    facts = json.loads((out / RUN_FILE).read_text())
    if facts["collected"] is None:
        import hypothesis

        from conformance.session.run_options import run_options

        prof = hypothesis.settings.default
        facts["collected"] = collected
        facts["hypothesis"] = {"profile": hypothesis.settings._current_profile,
                               "max_examples": prof.max_examples,
                               "derandomize": prof.derandomize,
                               "seed": run_options(config).hypothesis_seed}
        _write_run(out, facts)


def discard_unstarted(out: Path, *, remove_dir: bool = False) -> bool:
    """Remove what a run that ended before its first test report left in ``out`` (its
    ``run.json`` and an empty ``results.jsonl``; ``out`` itself when that empties it and
    ``remove_dir``: the run made it), so
    that the same command can run again; True if something was removed. A directory
    that holds a test report or a bundle is left as it is (``finalize`` builds on it)."""
    out = Path(out)
    log, run = out / LOG_FILE, out / RUN_FILE
    if not out.is_dir() or (out / "report.json").exists():
        return False
    try:
        if log.exists() and read_reports(log):
            return False
    except (OSError, ValueError):
        return False
    removed = False
    for path in (run, log, out / RUN_LOCAL):
        if path.is_file():
            path.unlink()
            removed = True
    if remove_dir and not any(out.iterdir()):
        out.rmdir()
        removed = True
    return removed


def note_platform(config: pytest.Config, info: dict[str, Any]) -> None:
    """Record the platform facts of the opened client (``info``: what
    :func:`conformance.session.backend.describe` gave, ``{}`` if nothing) in ``run.json``,
    so that :func:`finalize` states the device count the run's expected counts used."""
    out = _out(config)
    if out is None or not info or not (out / RUN_FILE).is_file():
        return
    facts = json.loads((out / RUN_FILE).read_text())
    facts["platform_info"] = info
    _write_run(out, facts)


def platform_of(facts: dict[str, Any]) -> dict[str, Any]:
    """The report's ``platform`` for a run of ``run.json`` ``facts``: the recorded facts
    of its client, else the name and the device count the options imply (``--cpu-devices``
    on the CPU, 1 elsewhere: what a report without the facts is checked against)."""
    opts = facts["options"]
    info = facts.get("platform_info")
    if isinstance(info, dict) and isinstance(info.get("local_device_count"), int) \
            and isinstance(info.get("name"), str):
        return info
    count = opts["cpu_devices"] if opts["platform"] == "cpu" else 1
    return {"name": opts["platform"], "local_device_count": int(count)}


def read_reports(path: Path, dropped: list[int] | None = None) -> list[pytest.TestReport]:
    """The test reports of a results log (plain ``results.jsonl`` or packed); a last line
    cut off by a kill is skipped. Raises ValueError naming the line for any other line
    that is not JSON or not a test report pytest reads back, OSError for an unreadable
    file; with a list ``dropped``, such a line's number is appended there instead and the
    line skipped."""
    reports = []
    for n, data in runlog.numbered(path, dropped):
        if not (isinstance(data, dict) and data.get("$report_type") == "TestReport"):
            continue
        try:
            reports.append(pytest.TestReport._from_json(data))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            if dropped is None:
                raise ValueError(f"{path} line {n}: not a test report ({_one_line(err)})"
                                 ) from None
            dropped.append(n)
    return reports


def pack(out: Path, skip: tuple[int, ...] = ()) -> Path | None:
    """Pack the results log of the run directory ``out`` before its bundle is written
    (:func:`conformance.certification.results.runlog.pack`, streamed; ``skip``: numbers of
    dropped lines); return the packed path, or None when there is no plain log or it
    could not be packed (no space, no memory, a corrupt line: it then stays, plain, in
    the bundle, rewritten with no local path (:func:`runlog.redact_plain`): a bundle is
    never lost to packing). Raises :class:`runlog.NotRedacted` (an OSError) when the
    log could not even be rewritten: no bundle may hold it as it is."""
    try:
        return runlog.pack(out, skip)
    except runlog.NotRedacted:
        raise
    except (OSError, ValueError) as err:
        print(f"pjrt-conformance: {out / LOG_FILE} kept unpacked: {err}", file=sys.stderr)
    except MemoryError:
        print(f"pjrt-conformance: {out / LOG_FILE} kept unpacked: not enough memory to "
              "compress it (even at the smallest xz preset)", file=sys.stderr)
    return None


def dropped_note(log: Path, lines: list[int], lost: list[str] = ()) -> str:
    """The report error of a results log whose ``lines`` were dropped (not JSON, or not a
    test report): their phases are missing, and the tests in ``lost`` (set up, torn down,
    no call report) have no result."""
    shown = ", ".join(map(str, lines[:20])) + (", ..." if len(lines) > 20 else "")
    text = (f"{log.name}: dropped {len(lines)} corrupt or cut-off line(s) (line {shown}): "
            "not a JSON test report; the phases they held are missing")
    if lost:
        text += (f"; {len(lost)} test(s) without their call report counted as not "
                 f"finished: {', '.join(lost[:5])}{', ...' if len(lost) > 5 else ''}")
    return text


def _without_call(reports: list[pytest.TestReport]) -> set[str]:
    """Package-relative ids of the tests whose setup passed but that have no call report
    (pytest writes one for every test set up): a dropped line held it, so whatever the
    other phases say, the test's result is unknown."""
    from conformance.certification.provenance import package_nodeid

    set_up, called = set(), set()
    for rep in reports:
        nodeid = package_nodeid(rep.nodeid, rep.location[0] if rep.location else None)
        if rep.when == "setup" and rep.outcome == "passed":
            set_up.add(nodeid)
        elif rep.when == "call":
            called.add(nodeid)
    return set_up - called


def finalize(out: Path, why: str = "the run ended before it wrote its report", *,
             replace: bool = False) -> tuple[dict[str, Any], Path, list[int]]:
    """Build the ``incomplete`` bundle of ``out`` from its results log and ``run.json``
    (see the module docstring) through the one pipeline
    (:func:`conformance.certification.finish.pipeline.finish`), the log packed; return
    (report document, path of report.json, the numbers of the log's dropped lines). A
    log line that is not a JSON test report (a corrupt line in the middle) is dropped,
    the others kept: the report's ``report_errors`` names the dropped lines
    (:func:`dropped_note`).

    Raises ValueError naming the file for a missing or malformed ``run.json`` or an
    unreadable ``results.jsonl``, and for a directory that already holds a finished
    bundle (its manifest) unless ``replace`` (a run cancelled while it wrote or signed
    its bundle: rebuilt as incomplete). OSError or MemoryError when the bundle cannot
    be written.
    """
    from conformance.certification.bundle import bundle_files
    from conformance.certification.bundle import signing
    from conformance.certification.finish import pipeline
    from conformance.certification.verdict import report
    from conformance.session import backend, evidence
    from conformance.session.run_options import RunOptions
    from conformance.session.session_state import SessionState

    out = Path(out)
    if replace:
        for name in (bundle_files.MANIFEST, signing.SIGNATURE):
            (out / name).unlink(missing_ok=True)
    if (out / bundle_files.MANIFEST).exists():   # written last: the bundle was finished
        raise ValueError(f"{out}: already holds a report bundle; check it with "
                         f"'pjrt-conformance verify {out}'")
    try:
        facts = _run_facts(out)
        opts = facts["options"]
        saved = RunOptions.from_values(opts)   # what the run was given
        platform_info = platform_of(facts)
        # No log: the run died before its first phase report (nothing finished).
        log = runlog.locate(out)
        dropped: list[int] = []
        reports = read_reports(log, dropped) if log is not None else []
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as err:
        raise ValueError(f"{out}: not the output directory of a run "
                         f"({_one_line(err)})") from None
    spec = backend.BackendSpec(platform=saved.platform, cpu_devices=saved.cpu_devices)
    state = SessionState(saved, spec)
    try:   # the option files of the run (run.json names them), read again
        state.configure_certification()
    except (OSError, ValueError) as err:   # a file gone since: not a full disk
        raise ValueError(f"{out}: cannot read the run's option files again "
                         f"({_one_line(err)})") from None
    for rep in reports:
        state.collector.add(rep)
    lost = _without_call(reports) if dropped else set()
    state.collector.finished -= lost   # its call report may be the dropped line: no result
    state.collector.match_known(state.known, state.platform, state.plugin_library)
    started = datetime.datetime.fromisoformat(facts["started_utc"])
    ended = datetime.datetime.fromtimestamp(
        max(p.stat().st_mtime for p in (log, out / RUN_FILE) if p is not None and p.exists()),
        datetime.timezone.utc)
    head = report.header(platform=state.platform, platform_info=platform_info,
                         known=state.known,
                         argv=facts["argv"], cpu_devices=state.cpu_devices,
                         num_processes=saved.num_processes,
                         programs={"compiles": 0, "cache_hits": 0}, started=started,
                         duration_s=max(0.0, (ended - started).total_seconds()),
                         hypothesis_settings=facts.get("hypothesis") or None)
    for name in bundle_files.FILES:   # a bundle the killed run began to write (no manifest)
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "repro", ignore_errors=True)
    results = state.collector.finished_results()
    # The run's attribution without its re-runs (no backend here): the catalog, the
    # framework's own account of a target it could not give a plugin client.
    records = pipeline.Records(fresh=results, sources=evidence.offline_sources(results))
    run = pipeline.RunHeader(
        header=head, collected=max(facts["collected"] or 0, len(results)),
        profile=state.profile, declared=tuple(state.declared), waivers=tuple(state.waivers),
        device_count=platform_info["local_device_count"], interrupted=why,
        # named in the report, counted by its verdict
        report_errors=(dropped_note(log, dropped, sorted(lost)),) if dropped and log is not None else ())
    doc, path = pipeline.finish(records, run, out, RunDirectory(tuple(dropped)))
    return doc, path, dropped


def incomplete_bundle(out: Path, why: str) -> dict[str, Any]:
    """The ``incomplete`` bundle of the run directory ``out`` that was cancelled
    (``why``): the one its session wrote, else one built from its results log
    (:func:`finalize`, replacing a bundle written, or begun, before the cancel); return
    its report document. Errors: those of :func:`finalize`."""
    from conformance.certification.bundle import bundle_files

    out = Path(out)
    if (out / bundle_files.MANIFEST).is_file() and (out / "report.json").is_file():
        try:
            doc = jsontext.loads(file_limits.read_text(
                out / "report.json", limit=file_limits.BUNDLE_FILE_LIMIT))
        except (OSError, ValueError, UnicodeDecodeError):
            doc = None
        if isinstance(doc, dict) and doc.get("verdict") == "incomplete":
            return doc
    return finalize(out, why=why, replace=True)[0]


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 240 else text[:237] + "..."
