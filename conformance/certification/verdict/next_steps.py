"""What to do next about each root cause of a run's failures (report.json ``next_steps``).

A *root cause* is a defect-catalog entry that failing tests matched (``failure["defect"]``),
or, for a failure no entry matches, that test alone (uncataloged: to be triaged). Each
step names:

- ``cause``: the catalog id, or the test id of an uncataloged failure;
- ``attribution``: whose it is (``plugin``, ``framework``, ``suite``, ``unattributed``);
- ``tests``: the failing test ids, and ``statuses`` their statuses;
- ``summary``: the catalog's one line, or the failure's first message line;
- ``reproduction``: the entry's standalone script (a repository path such as
  ``docs/upstream/x.py``), else the failure's one-line pytest command;
- ``report``: the ready-to-file upstream text beside the script (``docs/upstream/x.md``)
  when the entry has one, else None;
- ``upstream``: the entry's upstream issue URL, or "not reported yet"; None uncataloged;
- ``waivable``: whether ``--waivers`` can turn these failures into ``waived``: never for
  a wrong result, crash or timeout (any test of the cause), never needed for a
  framework or suite finding (it does not count against the plugin), else yes;
  ``action``: one sentence saying what to do (:func:`todo`: the same in a few words).

Causes are ordered by what blocks certification first: the plugin's and unattributed
ones, those that cannot be waived first, then by the number of tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NEVER_WAIVABLE = ("fail_wrong_result", "crash", "timeout")
_BLOCKING = ("plugin", "unattributed")
_ROOT = Path(__file__).resolve().parents[3]   # the repository (docs/upstream/ lives there)


def _report_of(repro: str) -> str | None:
    """``docs/upstream/x.md`` beside a ``docs/upstream/x.py`` reproduction, if it exists."""
    if not repro.endswith(".py"):
        return None
    md = repro[:-3] + ".md"
    return md if (_ROOT / md).is_file() else None


def _action(attribution: str, waivable: bool, cataloged: bool, upstream: str | None,
            report: str | None) -> str:
    if attribution not in _BLOCKING:
        return (f"a {attribution} finding, not the plugin's: nothing to waive; "
                + ("track the upstream issue" if upstream and upstream.startswith("http")
                   else "file the upstream report" if report else "report it upstream"))
    if not cataloged:
        return ("triage it: run the reproduction; a plugin defect is fixed in the plugin, "
                "a suite or framework one is reported here with its evidence")
    fix = "fix it in the plugin" if attribution == "plugin" else "triage it"
    filed = (" (the upstream issue tracks it)" if upstream and upstream.startswith("http")
             else f" and file {report}" if report else "")
    return fix + filed + ("; or waive it with --waivers until fixed" if waivable else
                          "; it cannot be waived (a wrong result, crash or timeout)")


def todo(step: dict[str, Any]) -> str:
    """What to do about a step (a :func:`build` entry, or one read back from a
    report.json), in a few words for a table row: the short form of its ``action``."""
    up = str(step.get("upstream") or "")
    if step.get("attribution") not in _BLOCKING:
        return "not the plugin's: " + ("track the upstream issue" if up.startswith("http")
                                       else "report it upstream")
    if not step.get("cataloged"):
        return "triage: run the reproduction"
    return ("fix it in the plugin" if step.get("attribution") == "plugin" else "triage it") \
        + ("; waivable until fixed" if step.get("waivable") else "; cannot be waived")


def build(failures: list[dict[str, Any]], catalog: list[Any]) -> list[dict[str, Any]]:
    """The next steps of ``failures`` (report.json ``failures``) with the defect
    catalog ``catalog`` (:class:`~conformance.certification.catalog.defect_catalog.Defect`
    entries); see the module doc."""
    by_id = {d.id: d for d in catalog}
    causes: dict[str, dict[str, Any]] = {}
    for f in failures:
        defect = f.get("defect") if isinstance(f.get("defect"), dict) else None
        key = str(defect["id"]) if defect and defect.get("id") else str(f["nodeid"])
        entry = by_id.get(key) if defect else None
        step = causes.setdefault(key, {
            "cause": key, "cataloged": defect is not None,
            "attribution": f.get("attribution") or "unattributed", "tests": [],
            "statuses": [],
            "summary": (defect or {}).get("summary") or
            ((f.get("message") or f.get("status") or "").strip().splitlines() or [""])[0][:240],
            "reproduction": (entry.repro if entry is not None and entry.repro
                             else f.get("command") or ""),
            "report": _report_of(entry.repro) if entry is not None and entry.repro else None,
            "upstream": (defect or {}).get("upstream") if defect else None,
        })
        step["tests"].append(f["nodeid"])
        if f.get("status") not in step["statuses"]:
            step["statuses"].append(f.get("status"))
    out = []
    for step in causes.values():
        blocking = step["attribution"] in _BLOCKING
        step["waivable"] = blocking and not any(s in NEVER_WAIVABLE for s in step["statuses"])
        step["action"] = _action(step["attribution"], step["waivable"], step["cataloged"],
                                 step["upstream"], step["report"])
        out.append(step)
    return sorted(out, key=lambda s: (s["attribution"] not in _BLOCKING, s["waivable"],
                                      -len(s["tests"]), s["cause"]))
