"""``pjrt-conformance diff OLD NEW``: what changed between two report bundles.

Tests are matched by their package-relative id
(:func:`conformance.certification.provenance.package_nodeid`), so bundles made
by installs in different places compare. A result *fails* when its status is in
:data:`FAILING`; ``skipped``, ``not_supported`` and ``waived`` are not failures.
Sections: new failures (failing in NEW, not failing or absent in OLD), fixes
(failing in OLD, present and not failing in NEW), other status changes, added
and removed tests, and changed environment, platform, profile and verdict.
:func:`regressed` decides the exit status of the command (1 on regressions).
:func:`integrity` runs ``verify``'s checks on each input (a tampered bundle is refused)
and :func:`platform_warning` says when the two reports are of different platforms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.certification.bundle import reportfile
from conformance.certification.provenance import package_nodeid

FAILING = ("fail_wrong_result", "fail_error", "crash", "timeout", "flaky")


def load(path: Path) -> dict[str, Any]:
    """The validated report.json of a bundle directory (or the file itself).

    Raises FileNotFoundError when ``path`` does not exist, reportfile.MalformedReport
    (a ValueError) when it is not a report of the schema."""
    return reportfile.load(path)


def bundle_dir(path: Path) -> Path | None:
    """The bundle directory of a diff input (a directory, or a report.json next to its
    MANIFEST.sha256), or None for a lone report.json that is no bundle's."""
    from conformance.certification.bundle import signing

    path = Path(path)
    if path.is_dir():
        return path
    return path.parent if (path.parent / signing.MANIFEST).is_file() else None


def integrity(path: Path) -> list[str]:
    """``verify``'s problems of the bundle that diff input ``path`` belongs to (empty:
    intact, or a lone report.json, which has no manifest to check)."""
    from conformance.certification.bundle import bundle_files

    where = bundle_dir(path)
    return [] if where is None else bundle_files.verify(where).problems


def platform_warning(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """A one-line warning when the reports are of different platforms (requested platform,
    the client's platform name, or device kinds); None when they agree."""
    def facts(doc: dict[str, Any]) -> tuple[Any, ...]:
        p = doc["platform"]
        return (doc.get("requested_platform"), p.get("name"), tuple(p.get("device_kinds") or ()))
    a, b = facts(old), facts(new)
    if a == b:
        return None
    return (f"warning: the bundles are of different platforms (OLD {a[0] or a[1]}: "
            f"{a[1]}, {', '.join(a[2]) or 'no device kinds'}; NEW {b[0] or b[1]}: {b[1]}, "
            f"{', '.join(b[2]) or 'no device kinds'}): the changes below compare two backends, "
            "not two runs of one")


def _flat(prefix: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(f"{prefix}.{k}" if prefix else k, v))
        return out
    return {prefix: value}


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {package_nodeid(r["nodeid"]): r["status"] for r in doc["results"]}


def compare(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list]:
    """Differences between two validated report.json documents (see module docstring).

    Keys: ``new_failures``, ``fixes``, ``changed`` (lists of (id, old status or
    None, new status)), ``added``, ``removed`` (lists of ids), ``environment``
    (list of (dotted key, old value, new value))."""
    a, b = _statuses(old), _statuses(new)
    common = sorted(set(a) & set(b))
    facts_old = _flat("", {"environment": old["environment"], "platform": old["platform"],
                           "profile": old.get("profile"), "verdict": old["verdict"]})
    facts_new = _flat("", {"environment": new["environment"], "platform": new["platform"],
                           "profile": new.get("profile"), "verdict": new["verdict"]})
    return {
        "new_failures": [(n, a.get(n), b[n]) for n in sorted(b) if b[n] in FAILING
                         and a.get(n) not in FAILING],
        "fixes": [(n, a[n], b[n]) for n in common if a[n] in FAILING and b[n] not in FAILING],
        "changed": [(n, a[n], b[n]) for n in common if a[n] != b[n]
                    and (a[n] in FAILING) == (b[n] in FAILING)],
        "added": sorted(set(b) - set(a)),
        "removed": sorted(set(a) - set(b)),
        "environment": [(k, facts_old.get(k), facts_new.get(k))
                        for k in sorted(set(facts_old) | set(facts_new))
                        if facts_old.get(k) != facts_new.get(k) and k != "duration_s"],
    }


def regressed(changes: dict[str, list]) -> bool:
    """True when NEW is worse than OLD: a new failure, or a certified verdict lost."""
    verdict = [(o, n) for k, o, n in changes["environment"] if k == "verdict"]
    return bool(changes["new_failures"]) or any(o == "certified" for o, _ in verdict)


def render(changes: dict[str, list]) -> str:
    """Plain-text report of :func:`compare`'s result."""
    titles = {"new_failures": "New failures", "fixes": "Fixes", "changed": "Changed statuses",
              "added": "Added tests", "removed": "Removed tests",
              "environment": "Changed environment, platform, profile and verdict"}
    lines = []
    for key, title in titles.items():
        items = changes[key]
        lines.append(f"{title} ({len(items)}):")
        for item in items:
            if isinstance(item, tuple) and key == "environment":
                lines.append(f"  {item[0]}: {item[1]!r} -> {item[2]!r}")
            elif isinstance(item, tuple):
                lines.append(f"  {item[0]}: {item[1] or 'absent'} -> {item[2]}")
            else:
                lines.append(f"  {item}")
    return "\n".join(lines) + "\n"
