"""Plain pytest's outcome of a run, read back from its bundle's results log.

The main job (``pjrt-conformance run``) exits on the certification verdict, which a
cataloged defect of the plugin denies (exit 1). Plain ``pytest`` over the same suite exits
on its own rule instead: a test of the defect catalog is a strict xfail, so its failure
is expected, while a strict XPASS (a cataloged defect that is gone), any other failure, a
setup or teardown error, a crashed xdist worker or a collection error fails the session.

CI runs the suite once, as the main job, and checks both: the verdict from the main job,
and pytest's rule from the bundle's results log with :func:`unexpected` (``.ci/run``,
docs/ci.md). A pytest-reportlog record counts as pytest counts it: ``outcome`` is
``failed`` (an xfailed test's report has ``outcome`` ``skipped`` and ``wasxfail``; a
strict XPASS has ``outcome`` ``failed``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from conformance.certification.results import runlog

_REPORTS = ("TestReport", "CollectReport")


def unexpected(records: Iterable[Any]) -> list[str]:
    """The node ids (sorted, each once) that plain pytest counts as failed among
    ``records``, the parsed lines of a results log (pytest-reportlog records: dicts with
    ``$report_type``, ``nodeid``, ``outcome``); other records are ignored. A collection
    error of the whole session has node id ``""``. Raises TypeError when ``records`` holds
    a report whose ``outcome`` or ``nodeid`` is not a string."""
    failed = set()
    for record in records:
        if not isinstance(record, dict) or record.get("$report_type") not in _REPORTS:
            continue
        outcome, nodeid = record.get("outcome"), record.get("nodeid")
        if not isinstance(outcome, str) or not isinstance(nodeid, str):
            raise TypeError(f"argument 'records': a {record['$report_type']} needs a string "
                            f"'outcome' and 'nodeid', got {outcome!r} and {nodeid!r}")
        if outcome == "failed":
            failed.add(nodeid)
    return sorted(failed)


def unexpected_in_bundle(bundle: Path | str) -> list[str]:
    """:func:`unexpected` of the results log (plain or packed) of the bundle or run
    directory ``bundle``. Raises FileNotFoundError when it has no results log, ValueError
    for a log that is not JSON lines (see :func:`conformance.certification.results.runlog.records`)."""
    return unexpected(runlog.records(runlog.resolve(bundle)))
