"""``report.html``: one self-contained page (inline CSS, no scripts, no external files)."""

from __future__ import annotations

from typing import Any

import jinja2

from conformance.certification.records import STATUSES

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("conformance", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined)


def render(doc: dict[str, Any]) -> str:
    """The HTML page of a report.json document: verdict, summary, per-area and
    per-tier tables, failures with their reproduction, environment."""
    return _ENV.get_template("report.html.j2").render(doc=doc, statuses=STATUSES)
