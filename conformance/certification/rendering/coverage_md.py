"""The report.md section of the op coverage keys (``coverage``, ``coverage_gaps``,
``coverage_summary``; built by :mod:`conformance.programs.coverage`): render only."""

from __future__ import annotations

from typing import Any


def markdown(doc: dict[str, Any]) -> list[str]:
    """The report.md section of ``doc``'s coverage keys (no lines when it has none): the
    summary line, one row per op (dtypes compared; compiled or executed only) and the
    gap list."""
    summary = doc.get("coverage_summary")
    if not summary:
        return []
    source = summary["spec"]
    lines = ["", "## Op coverage (StableHLO/CHLO ops x element types)", "",
             f"Spec ops compared: **{summary['spec_ops_compared']}/{summary['spec_ops']}** "
             f"(StableHLO spec {source['path']} @ {source['commit'][:12]}, "
             f"{source['stablehlo_versions']}); op x dtype cells compared: "
             f"{summary['cells_compared']}.", "",
             "| op | compared in | compiled/executed only |", "|---|---|---|"]
    for op, cells in doc["coverage"].items():
        compared = [d for d, c in cells.items() if c["compared"]]
        only = [d for d, c in cells.items() if not c["compared"]]
        lines.append(f"| {op} | {' '.join(compared) or '-'} | {' '.join(only) or '-'} |")
    if doc.get("coverage_gaps"):
        lines += ["", "Spec ops never compared:", ""]
        lines += [f"- `{g['op']}`: {g['reason']}" for g in doc["coverage_gaps"]]
    return lines
