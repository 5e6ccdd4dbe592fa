"""``verify``'s check that the bundle's human-readable files belong to its report.json.

The manifest proves only that the files are the ones listed, not that they were
rendered from this report: a ``report.md`` copied from another run, with the
manifest rewritten, was called intact (issue 27 item 8). :func:`problems` checks:

- every entry of the bundle is a regular file or directory, never a symbolic link
  (a link's target can change after the manifest was written, and may lie outside
  the bundle);
- ``report.md`` holds this report's verdict line and its ``Started (UTC)`` line (the
  run's start time to the second and its duration), as
  :func:`conformance.certification.rendering.report_md.render` writes them;
- ``report.html`` names this report's start time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def symlinks(path: Path) -> list[str]:
    """One problem per symbolic link in the bundle directory ``path`` (recursively)."""
    return [f"{p.relative_to(path).as_posix()} is a symbolic link; a bundle holds regular "
            "files only" for p in sorted(Path(path).rglob("*")) if p.is_symlink()]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def problems(path: Path, doc: dict[str, Any]) -> list[str]:
    """What shows that ``report.md``/``report.html`` of bundle ``path`` were not rendered
    from its report ``doc`` (a validated report.json); symbolic links in the bundle."""
    found = symlinks(path)
    from conformance.certification.rendering import report_md

    verdict_line, started_line = report_md.verdict_line(doc), report_md.started_line(doc)
    md = _read(path / "report.md")
    if md is not None:
        lines = set(md.splitlines())
        missing = [what for what, line in (("verdict", verdict_line),
                                           ("start time and duration", started_line))
                   if line not in lines]
        if missing:
            found.append(f"report.md is not rendered from this report.json: its "
                         f"{' and '.join(missing)} differ")
    html = _read(path / "report.html")
    if html is not None and str(doc["started_utc"]) not in html:
        found.append("report.html is not rendered from this report.json: it does not name "
                     f"its start time {doc['started_utc']}")
    return found
