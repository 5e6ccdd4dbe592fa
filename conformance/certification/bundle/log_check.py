"""``verify`` reads the results log: every result of report.json must have its test
report there.

The manifest proves that the log is the file the run wrote, not that it holds the run:
``finalize`` over a run still going once packed a log of 1 line for a report of 24
results, and ``verify`` called the bundle intact. :func:`problems` reads the log (plain
or packed, within :mod:`conformance.file_limits`' caps: a log that unpacks past
:data:`~conformance.file_limits.DECOMPRESSED_LIMIT` is a problem, never 2 GB in memory),
and names the results of report.json that have no test report in it (a corrupt line
is passed over, as ``finalize`` passes it over: its test then has none). A bundle
without a log (``rerender`` without ``--keep-log``) has nothing to check here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.certification.provenance import package_nodeid
from conformance.certification.results import runlog

_SHOWN = 3


def logged_nodeids(log: Path) -> set[str]:
    """Package-relative ids of the tests with a test report in the log file ``log``; a
    corrupt line is passed over (a log that could not be packed for one stays plain in
    its bundle, by design). Raises OSError (unreadable), ValueError (corrupt xz, past a
    cap)."""
    found = set()
    for _, record in runlog.numbered(log, dropped=[]):
        if isinstance(record, dict) and record.get("$report_type") == "TestReport" \
                and isinstance(record.get("nodeid"), str):
            location = record.get("location")
            path = location[0] if isinstance(location, list) and location else None
            found.add(package_nodeid(record["nodeid"], path if isinstance(path, str)
                                     else None))
    return found


def problems(bundle: Path, doc: dict[str, Any]) -> list[str]:
    """What is wrong with the results log of ``bundle`` against its report ``doc``:
    unreadable, past its cap, a corrupt line, or results of report.json it holds no
    test report of (one line, the first few named)."""
    try:
        log = runlog.locate(bundle)
    except ValueError as err:
        return [str(err)]
    if log is None:
        return []
    try:
        logged = logged_nodeids(log)
    except (OSError, ValueError) as err:
        return [f"{log.name} cannot be read as a results log: {err}"]
    missing = [r["nodeid"] for r in doc.get("results", [])
               if isinstance(r, dict) and r.get("nodeid") not in logged]
    if not missing:
        return []
    shown = ", ".join(missing[:_SHOWN]) + (", ..." if len(missing) > _SHOWN else "")
    return [f"{log.name} holds no test report of {len(missing)} of the "
            f"{len(doc.get('results', []))} results of report.json ({shown}): the log lost "
            "results, or the report was not made from it"]
