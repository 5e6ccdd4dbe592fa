"""``report.html``: one self-contained page (inline CSS and SVG, no scripts, no external
files), readable at a glance.

The first screen (1280x800) holds the verdict with every reason, the failures by root
cause under "Why not certified" (:mod:`conformance.certification.rendering.root_causes`:
catalog entry or uncataloged test, attribution, upstream status, what to do, tests per
cause) with the first next step, then a pass-rate bar per area (the pass rate of
:mod:`conformance.certification.verdict.pass_rate`, its definition printed under the
bars), and the first failure with a table of
contents of the failures grouped by area and likely root cause
(:mod:`conformance.certification.rendering.failure_view`). Further down: per-tier bars, the
full status tables (non-zero failure cells coloured), each failure once (input without
local paths, observed vs expected, ULP-error histogram, reproduction command), run
facts, platform and environment. Fields other engineers add (``attribution``,
``defect``, ``evidence`` (its items as prose), ``plugin_verdict``, ``stack_findings``) are
shown when present.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2

from conformance.certification.rendering import failure_view
from conformance.certification.rendering import root_causes
from conformance.certification.rendering import svg
from conformance.certification.verdict import pass_rate
from conformance.certification.verdict import plugin_verdict
from conformance.certification.results.records import STATUSES

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("conformance", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.Undefined)
#: Top-level keys shown under the verdict when a report carries them.
EXTRA_KEYS = ("plugin_verdict",)


def _rows(table: dict[str, dict[str, int]]) -> list[tuple[str, dict[str, int], str, int]]:
    """(name, counts, bar SVG, failures) per row of an area or tier table."""
    return [(name, counts, svg.pass_rate_bar(counts, failure_view.FAILING),
             sum(counts.get(s, 0) for s in failure_view.FAILING)) for name, counts in table.items()]


def _extra(value: Any) -> str:
    """A field of another engineer's schema as one line of text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "; ".join(_extra(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_extra(v)}" for k, v in value.items())
    return json.dumps(value)


def _histogram(ulp_errors: dict[str, Any]) -> str:
    try:
        return svg.histogram(ulp_errors["labels"], ulp_errors["counts"],
                             limit_index=ulp_errors.get("limit_index"))
    except (KeyError, TypeError, ValueError):
        return ""


def _defects(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The catalog defects ``failures`` name, once each, with the catalog file
    (``source``) where the shipped catalog has the id."""
    from conformance.certification.catalog import defect_catalog

    try:
        sources = {d.id: d.source for d in defect_catalog.load()}
    except ValueError:
        sources = {}
    found: dict[str, dict[str, Any]] = {}
    for f in failures:
        d = f.get("defect")
        if isinstance(d, dict) and d.get("id") and d["id"] not in found:
            found[d["id"]] = {**d, "upstream": str(d.get("upstream") or ""),
                              "source": sources.get(d["id"], "")}
    return [found[k] for k in sorted(found)]


def render(doc: dict[str, Any]) -> str:
    """The HTML page of a report.json document (schema 2 or 3, with or without the
    optional ``attribution``/``defect``/``evidence`` failure fields and ``flaky``
    status; evidence items written as prose by
    :func:`conformance.certification.rendering.failure_view.evidence_lines`). Raises
    KeyError when a required key of the schema is missing."""
    failures = doc["failures"]
    agroups = failure_view.by_attribution(failures)
    area_anchor: dict[str, str] = {}
    for ag in agroups:
        for g in ag.areas:
            area_anchor.setdefault(g.area, g.anchor)
    statuses = list(STATUSES) + [s for s in doc["summary"]["by_status"] if s not in STATUSES]
    return _ENV.get_template("report.html.j2").render(
        doc=doc, statuses=statuses, failing=failure_view.FAILING, view=failure_view,
        platform=failure_view.display_platform(doc), command=failure_view.display_command(doc),
        reasons=failure_view.full_reasons(doc), agroups=agroups, area_anchor=area_anchor,
        title=failure_view.title(doc), ident=failure_view.identity(doc), defects=_defects(failures),
        fstatuses=[s for s in statuses if any(f["status"] == s for f in failures)],
        fid={f["nodeid"]: f"f-{failure_view.anchor(f['nodeid'])}" for f in failures},
        area_rows=_rows(doc["areas"]), tier_rows=_rows(doc["tiers"]),
        extra_keys=[k for k in EXTRA_KEYS if doc.get(k)], extra=_extra, hist=_histogram,
        stack=doc.get("stack_findings"), causes=root_causes.rows(doc),
        label=root_causes.label, rate=pass_rate.text(doc["summary"]["by_status"]),
        definition=pass_rate.DEFINITION,
        headline=plugin_verdict.headline(doc, upper=True) if doc.get("stack_findings") else "")
