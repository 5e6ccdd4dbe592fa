"""The one pipeline that finishes a run: records -> attribution -> report -> sections ->
bundle.

Every way a run ends hands it the merged records and the facts of the run, and edits
nothing afterwards: the session at the end of a run (``conformance.session.recording``),
``pjrt-conformance finalize`` of a killed run (``conformance.session.results_log``) and
process 0 of a multi-host run (``conformance.cli_multihost``). :func:`finish`

1. attributes every non-pass result
   (:func:`conformance.certification.attribution.attribution_sources.attribute`) with the
   evidence sources it is given;
2. builds the one report document (:func:`conformance.certification.verdict.report.build`);
3. adds the run's sections (coverage, shard, cluster) and, when asked, the comparison
   with the previous bundle of its kind
   (:func:`conformance.certification.compare.since_previous.summary`);
4. writes the bundle (:func:`conformance.certification.bundle.bundle_files.write`), the
   run directory's own files (results log, ``run.json``) prepared by the caller's
   :class:`RunFiles` first.

The signature is a step of its own (:func:`conformance.certification.bundle.signing.sign`):
the key is the command line's (``--sign-key``), never the session's, so ``run`` signs
the bundle this pipeline wrote once the session ended, and ``sign`` signs any bundle.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Protocol

from conformance.certification import local_paths
from conformance.certification.attribution import attribution_sources
from conformance.certification.bundle import bundle_files
from conformance.certification.catalog.profiles import Profile
from conformance.certification.catalog.waivers import Waiver
from conformance.certification.compare import since_previous
from conformance.certification.results.records import Result
from conformance.certification.verdict import report


@dataclasses.dataclass
class Records:
    """The merged records of a run.

    ``fresh``: the results to attribute, with the evidence ``sources`` bound to the run
    (:class:`~conformance.certification.attribution.attribution_sources.Source`);
    ``carried``: results that arrive attributed (the per-process reports of a
    multi-host run), kept as they are and placed before ``fresh`` in the report."""

    fresh: list[Result]
    sources: list[attribution_sources.Source]
    carried: list[Result] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RunHeader:
    """The facts of a run that the report states besides its records.

    ``header``: :func:`conformance.certification.verdict.report.header` (platform,
    environment, command line, options, programs, start time and duration in seconds);
    ``collected``: the tests collected; ``profile``, ``declared`` (capabilities),
    ``waivers``, ``device_count`` (local devices, for the profile's expected counts) and
    ``interrupted`` (why the run stopped early; None if it did not): the inputs of the
    verdict; ``report_errors``: problems found in the run's inputs, stated in the report
    and counted by the verdict (a results log's dropped lines); ``record_facts``: keys
    added to the record of a test id (a multi-host run's ``scope`` and ``ranks``);
    ``sections``: top-level sections after the built ones (``coverage``, ``shard``,
    ``cluster``); ``since_previous``: compare with the previous bundle of its kind next
    to the output directory; ``started_monotonic``: :func:`time.monotonic` (seconds) at
    the run's start, when the header's ``duration_s`` is to be measured up to the
    report, after the attribution's re-runs (None: the header's stands)."""

    header: dict[str, Any]
    collected: int
    profile: Profile | None = None
    declared: tuple[str, ...] = ()
    waivers: tuple[Waiver, ...] = ()
    device_count: int = 1
    interrupted: str | None = None
    report_errors: tuple[str, ...] = ()
    record_facts: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    sections: dict[str, Any] = dataclasses.field(default_factory=dict)
    since_previous: bool = False
    started_monotonic: float | None = None


class RunFiles(Protocol):
    """The files of a run directory that its bundle lists besides the report files (the
    results log and ``run.json``, ``conformance.session.results_log``)."""

    def prepare(self, out: Path) -> tuple[str, ...]:
        """Make them ready to be listed (packed, sealed); return their names. OSError
        or MemoryError when they cannot be."""

    def written(self, out: Path) -> None:
        """The bundle's manifest is written: remove what only the run needed."""


def document(records: Records, run: RunHeader) -> dict[str, Any]:
    """The report document of ``records`` and ``run`` (steps 1-3 of the module doc):
    the results attributed in place, the report built, the sections added. Raises
    ValueError when a section or a record fact would replace what the report builds."""
    attribution_sources.attribute(records.fresh, records.sources)
    header = run.header
    if run.started_monotonic is not None:
        header = {**header, "duration_s": round(time.monotonic() - run.started_monotonic, 2)}
    doc = report.build(records.carried + records.fresh, collected=run.collected,
                       header=header, profile=run.profile, declared=run.declared,
                       waivers=run.waivers, device_count=run.device_count,
                       interrupted=run.interrupted, report_errors=run.report_errors,
                       record_facts=run.record_facts)
    clash = sorted(set(run.sections) & (set(doc) | {"since_previous"}))
    if clash:
        raise ValueError(f"run sections {clash} would replace what the report builds")
    doc.update(run.sections)
    return doc


def finish(records: Records, run: RunHeader, out: Path,
           run_files: RunFiles | None = None) -> tuple[dict[str, Any], Path]:
    """Finish a run: its report document (:func:`document`), compared with the previous
    bundle when ``run.since_previous``, written as the bundle in the directory ``out``
    (``run_files``: the run directory's own files, listed too). Returns (the document,
    the path of report.json). Raises OSError or MemoryError when the bundle cannot be
    written, ValueError as :func:`document` does."""
    out = Path(out)
    doc = document(records, run)
    if run.since_previous:   # compared as its bundle will hold it (paths redacted): the
        # form of the bundles on disk it is compared with
        doc["since_previous"] = since_previous.summary(out, local_paths.for_bundle(doc))
    extra = run_files.prepare(out) if run_files is not None else ()
    path = bundle_files.write(doc, out, extra=extra)
    if run_files is not None:
        run_files.written(out)
    return doc, path
