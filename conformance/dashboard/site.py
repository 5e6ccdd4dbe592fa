"""Writing the dashboard's pages (jinja2 templates ``conformance/templates/dashboard/``).

Pages: ``index.html`` (every benchmark's history), ``ratios.html`` (benchmarks of
unit "ratio", with a line at 1.0 and the reference named), ``versions.html`` (the
newest value of every environment / plugin era side by side), ``conformance.html``
(pass rate per area of every bundle, per backend) and ``limits.html`` (only when
device-limits files exist). Each page is checked by :func:`external_references`
before it is written: a page that would load anything from the network is an error.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from pathlib import Path
from typing import Any

import jinja2

from conformance.dashboard import bundles as bundles_mod
from conformance.dashboard import charts, history
from conformance.dashboard.asv_results import ResultsDir
from conformance.dashboard.limits import Limits

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("conformance", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined)
_EXTERNAL = re.compile(r"""(?:\b(?:src|href|srcset|action|poster|data)\s*=\s*["']?\s*"""
                       r"""|url\(\s*["']?\s*|@import\s+["']?\s*)((?:https?:)?//[^\s"')>]*)""",
                       re.IGNORECASE)
_MAX_AREA_SERIES = len(charts.PALETTE) - 1


class OfflineViolation(RuntimeError):
    """A rendered page references a network resource (it would not render offline)."""


def external_references(html: str) -> list[str]:
    """Every ``http://``, ``https://`` or protocol-relative ``//`` address that ``html``
    would load or link: in src/href/srcset/action/poster/data attributes, CSS
    ``url(...)`` and ``@import``. (An SVG ``xmlns`` is a name, not a load.)"""
    return _EXTERNAL.findall(html)


@dataclasses.dataclass
class Inputs:
    """What a site is rendered from; ``bundles`` / ``limits`` None = not given."""

    results: list[ResultsDir]
    bundles: tuple[dict[str, list[bundles_mod.Bundle]], list[bundles_mod.Broken]] | None
    limits: list[Limits] | None
    generated: datetime.datetime = dataclasses.field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc))


def _conformance_chart(backend_bundles: list[bundles_mod.Bundle]
                       ) -> tuple[str, list[tuple[str, str]]]:
    """Pass rate (%) over bundle dates: all areas, then the areas below 100% somewhere."""
    series = [("all areas", [(b.started, b.rate()) for b in backend_bundles])]
    areas = sorted({a for b in backend_bundles for a in b.areas})
    def worst(area: str) -> float:  # 0.0 is a rate (every test failed), None is "absent"
        rates = [r for r in (b.rate(area) for b in backend_bundles) if r is not None]
        return min(rates, default=100.0)
    low = sorted((a for a in areas if worst(a) < 100.0), key=worst)
    for area in low[:_MAX_AREA_SERIES]:
        series.append((area, [(b.started, b.rate(area)) for b in backend_bundles
                              if b.rate(area) is not None]))
    return charts.line_chart(series, unit="%", width=900, height=260), [
        (name, charts.PALETTE[i % len(charts.PALETTE)]) for i, (name, _) in enumerate(series)]


def pages(inputs: Inputs) -> dict[str, str]:
    """{file name: HTML} of the whole site."""
    chart_list = history.build(inputs.results)
    ratios = [c for c in chart_list if c.is_ratio]
    nav = [("index.html", "Benchmarks"), ("ratios.html", "Ratios"),
           ("versions.html", "Versions"), ("conformance.html", "Conformance")]
    if inputs.limits:
        nav.append(("limits.html", "Limits"))
    machines = {name: info for d in inputs.results for name, info in d.machines.items()}
    common: dict[str, Any] = dict(
        nav=nav, machines=machines, generated=inputs.generated.strftime("%Y-%m-%d %H:%M UTC"),
        sources=[str(d.root) for d in inputs.results],
        problems=[p for d in inputs.results for p in d.problems],
        fmt=charts.fmt, reference_of=history.reference_of)
    backends: list[dict[str, Any]] = []
    by_backend, broken = inputs.bundles or ({}, [])
    for backend, items in by_backend.items():
        svg, legend = _conformance_chart(items)
        backends.append(dict(name=backend, bundles=items, svg=svg, legend=legend,
                             areas=sorted({a for b in items for a in b.areas})))
    out = {
        "index.html": ("benchmarks.html.j2", dict(charts=chart_list)),
        "ratios.html": ("ratios.html.j2", dict(charts=ratios)),
        "versions.html": ("versions.html.j2", dict(groups=history.versions(chart_list))),
        "conformance.html": ("conformance.html.j2", dict(
            backends=backends, broken=broken, given=inputs.bundles is not None)),
    }
    if inputs.limits:
        out["limits.html"] = ("limits.html.j2", dict(files=inputs.limits))
    return {name: _ENV.get_template(f"dashboard/{tpl}").render(page=name, **common, **ctx)
            for name, (tpl, ctx) in out.items()}


def write(inputs: Inputs, out_dir: Path) -> list[Path]:
    """Render every page into ``out_dir`` (created) and return the paths written.
    Raises OfflineViolation, before writing anything, when a page references the
    network."""
    rendered = pages(inputs)
    for name, html in rendered.items():
        refs = external_references(html)
        if refs:
            raise OfflineViolation(f"{name} references {refs[0]} (the site must open "
                                   "offline)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, html in rendered.items():
        (out_dir / name).write_text(html, encoding="utf-8")
        written.append(out_dir / name)
    return written
