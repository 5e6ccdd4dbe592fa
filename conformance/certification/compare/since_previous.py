"""What changed since the previous bundle of the same backend (report.json
``since_previous``), for the report's "Changes since the previous bundle" section.

The previous bundle is the newest other bundle beside the new one (the folders of
``out_dir``'s parent, e.g. ``reports/cpu/``) of the same backend
(:func:`conformance.certification.compare.scoreboard.backend_key`) that started before
it and passes ``verify``'s checks (a tampered or broken bundle is never compared with).
The summary holds the previous bundle's folder name (never a local path), its start time
and verdict, and :func:`conformance.certification.compare.diff.compare`'s lists: new
failures and fixes (test id, old status, new status; at most :data:`SHOWN` each, with
their full counts), the number of other status changes, added and removed tests, and the
changed environment and verdict facts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.certification.bundle import files as bundle
from conformance.certification.bundle import reportfile
from conformance.certification.compare import diff
from conformance.certification.compare.scoreboard import backend_key

SHOWN = 20


def previous(out_dir: Path, doc: dict[str, Any]) -> tuple[Path, dict[str, Any]] | None:
    """(folder, report) of the previous intact bundle of ``doc``'s backend beside
    ``out_dir``, or None."""
    out_dir = Path(out_dir)
    parent = out_dir.parent
    if not parent.is_dir():
        return None
    key, started = backend_key(doc), str(doc.get("started_utc") or "")
    found: list[tuple[str, Path, dict[str, Any]]] = []
    for report in parent.glob("*/report.json"):
        folder = report.parent
        if folder.resolve() == out_dir.resolve() or folder.is_symlink():
            continue
        try:
            old = reportfile.load(report)
        except (OSError, ValueError):
            continue
        when = str(old.get("started_utc") or "")
        if backend_key(old) == key and when < started:
            found.append((when, folder, old))
    for when, folder, old in sorted(found, key=lambda f: f[0], reverse=True):
        if not bundle.verify(folder).problems:
            return folder, old
    return None


def summary(out_dir: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The ``since_previous`` section of ``doc`` written to ``out_dir`` (see the module
    doc), or None when there is no previous bundle of the backend."""
    found = previous(out_dir, doc)
    if found is None:
        return None
    folder, old = found
    changes = diff.compare(old, doc)
    return {
        "bundle": folder.name,
        "started_utc": old.get("started_utc"),
        "verdict": old.get("verdict"),
        "new_failures": [list(c) for c in changes["new_failures"][:SHOWN]],
        "new_failure_count": len(changes["new_failures"]),
        "fixes": [list(c) for c in changes["fixes"][:SHOWN]],
        "fix_count": len(changes["fixes"]),
        "changed": len(changes["changed"]),
        "added": len(changes["added"]),
        "removed": len(changes["removed"]),
        "environment": [[k, o, n] for k, o, n in changes["environment"]
                        if k.startswith(("environment.", "verdict"))][:SHOWN],
    }
