"""The "Why not certified" list of report.md and report.html: the run's failures by root
cause, one row per cause (report.json ``next_steps``; for a report written before it, built
here from ``failures`` by :func:`conformance.certification.verdict.next_steps.build`).

Each row: ``cause`` (the defect-catalog id, or the test id of an uncataloged failure),
``cataloged``, ``attribution`` (plugin, framework, suite, unattributed), ``upstream``
(the issue URL, or "not filed"), ``action`` (what to do, one sentence), ``todo`` (the same in a few words,
:func:`conformance.certification.verdict.next_steps.todo`) and ``tests``
(how many failing tests the cause covers). Render only; nothing here decides a status.
"""

from __future__ import annotations

from typing import Any

from conformance.certification.verdict import next_steps

NOT_FILED = "not filed"


def steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """report.json ``next_steps``, or those of its ``failures`` when it has none."""
    if doc.get("next_steps") is not None:
        return list(doc["next_steps"])
    return next_steps.build(list(doc.get("failures") or []), [])


def upstream(step: dict[str, Any]) -> str:
    """The step's upstream issue URL, or :data:`NOT_FILED`."""
    up = str(step.get("upstream") or "")
    return up if up.startswith(("http://", "https://")) else NOT_FILED


def label(url: str) -> str:
    """A short name of an issue URL: ``owner/repo#N`` for a GitHub issue or pull
    request, else the URL itself."""
    parts = url.rstrip("/").split("/")
    if "github.com" in url and len(parts) >= 7 and parts[-2] in ("issues", "pull"):
        return f"{parts[-4]}/{parts[-3]}#{parts[-1]}"
    return url


def rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per root cause of ``doc``'s failures (see the module doc), blocking
    causes first (the order of :func:`steps`)."""
    return [{"cause": s["cause"], "cataloged": bool(s.get("cataloged")),
             "attribution": s.get("attribution") or "unattributed",
             "upstream": upstream(s), "action": s.get("action") or "",
             "todo": next_steps.todo(s),
             "tests": len(s.get("tests") or [])} for s in steps(doc)]


def markdown(doc: dict[str, Any]) -> list[str]:
    """The Markdown section (no lines when the run has no failure)."""
    found = rows(doc)
    if not found:
        return []
    tests = sum(r["tests"] for r in found)
    title = {"certified": "Failures", "not a certification": "Why this run is not a "
             "certification"}.get(doc.get("verdict"), "Why not certified")
    lines = ["", f"## {title}: {tests} failing test(s), {len(found)} root cause(s)", "",
             "| root cause | attribution | upstream | tests | what to do |",
             "|---|---|---|---:|---|"]
    first = found[0]
    lines[2:2] = [f"First next step: `{first['cause']}` ({first['attribution']}, "
                  f"{first['tests']} test(s)): {first['action']}.", ""]
    for r in found:
        cause = f"`{r['cause']}`" + ("" if r["cataloged"] else " (uncataloged)")
        up = f"[{label(r['upstream'])}]({r['upstream']})" if r["upstream"] != NOT_FILED else NOT_FILED
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in (
            cause, r["attribution"], up, str(r["tests"]), r["todo"])) + " |")
    return lines
