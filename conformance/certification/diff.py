"""``pjrt-conformance diff OLD NEW``: what changed between two report bundles.

Tests are matched by ``nodeid``. Sections: new failures (not passing in NEW,
passing or absent in OLD), fixes (not passing in OLD, passing in NEW), other
status changes, added and removed tests, and changed environment, platform,
profile and verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOOD = ("pass", "waived")


def load(path: Path) -> dict[str, Any]:
    """report.json of a bundle directory (or the file itself). Raises ValueError."""
    path = Path(path)
    target = path / "report.json" if path.is_dir() else path
    try:
        return json.loads(target.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{target}: not a readable report.json ({err})") from err


def _flat(prefix: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(f"{prefix}.{k}" if prefix else k, v))
        return out
    return {prefix: value}


def compare(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list]:
    """Differences between two report.json documents (see module docstring)."""
    a = {r["nodeid"]: r["status"] for r in old["results"]}
    b = {r["nodeid"]: r["status"] for r in new["results"]}
    common = sorted(set(a) & set(b))
    facts_old = _flat("", {"environment": old["environment"], "platform": old["platform"],
                           "profile": old.get("profile"), "verdict": old["verdict"]})
    facts_new = _flat("", {"environment": new["environment"], "platform": new["platform"],
                           "profile": new.get("profile"), "verdict": new["verdict"]})
    return {
        "new_failures": [(n, a.get(n), b[n]) for n in sorted(b) if b[n] not in GOOD
                         and (a.get(n) in GOOD or n not in a)],
        "fixes": [(n, a[n], b[n]) for n in common if a[n] not in GOOD and b[n] in GOOD],
        "changed": [(n, a[n], b[n]) for n in common if a[n] != b[n]
                    and (a[n] in GOOD) == (b[n] in GOOD)],
        "added": sorted(set(b) - set(a)),
        "removed": sorted(set(a) - set(b)),
        "environment": [(k, facts_old.get(k), facts_new.get(k))
                        for k in sorted(set(facts_old) | set(facts_new))
                        if facts_old.get(k) != facts_new.get(k) and k != "duration_s"],
    }


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
