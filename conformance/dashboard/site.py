"""Writing the dashboard's pages (jinja2 templates ``conformance/templates/dashboard/``).

Pages: ``index.html`` (the overview: first the last run against the previous run of
its machine (:mod:`.last_run`), then the table of contents, the regression list of
:mod:`.regressions` (regressions, then improvements apart), the benchmarks without results, where asv's own site is),
``releases.html`` (every benchmark and every conformance area per jax release: the
release matrix), ``commits.html`` (every benchmark per commit: asv's nightly history),
``ratios.html`` (benchmarks of unit "ratio", with a line at 1.0 and the reference
named), ``versions.html`` (the newest value of every environment / plugin era side by
side), ``conformance.html`` (pass rate per area of every bundle, per backend, by date)
and ``limits.html`` (only when device-limits files exist; its machine is the device
the files name). Each page is checked by :func:`external_references` before it is
written: a page that would load anything from the network is an error.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
from pathlib import Path
from typing import Any

import jinja2

from conformance.dashboard import bundle_history
from conformance.certification.verdict import pass_rate
from conformance.certification.compare.scoreboard import release_key
from conformance.dashboard import charts, history, last_run, regressions
from conformance.dashboard.asv_results import ResultsDir
from conformance.dashboard.limits import Limits
from conformance.dashboard.noise import NoiseData

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("conformance", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined)
_EXTERNAL = re.compile(r"""(?:\b(?:src|href|srcset|action|poster|data)\s*=\s*["']?\s*"""
                       r"""|url\(\s*["']?\s*|@import\s+["']?\s*)((?:https?:)?//[^\s"')>]*)""",
                       re.IGNORECASE)


def short_params(fixed: str) -> str:
    """A column head of parameters, short: values without their names, byte counts of
    1 MiB or more in MiB (``nbytes=268435456, path=h2d_zero_copy_aligned`` ->
    ``256 MiB, h2d_zero_copy_aligned``); the full text goes in the head's title."""
    out = []
    for pair in fixed.split(", "):
        value = pair.partition("=")[2] or pair
        if value.isdigit() and int(value) >= 2**20 and int(value) % 2**20 == 0:
            value = f"{int(value) // 2**20} MiB"
        out.append(value)
    return ", ".join(out)


_ENV.filters["short_params"] = short_params


class OfflineViolation(RuntimeError):
    """A rendered page references a network resource (it would not render offline)."""


def external_references(html: str) -> list[str]:
    """Every ``http://``, ``https://`` or protocol-relative ``//`` address that ``html``
    would load or link: in src/href/srcset/action/poster/data attributes, CSS
    ``url(...)`` and ``@import``. (An SVG ``xmlns`` is a name, not a load.)"""
    return _EXTERNAL.findall(html)


@dataclasses.dataclass
class Inputs:
    """What a site is rendered from; ``bundles`` / ``limits`` None = not given;
    ``thresholds`` is asv's ``regressions_thresholds`` ({regex: fraction}); ``asv_html``
    the folders of asv's own published site (``asv publish``) to link to; ``noise``
    the run-to-run noise of repeated runs (:mod:`.noise`; None: none measured);
    ``repo`` the git repository the results' commits belong to (None: commits are
    ordered by asv's commit date, and the pages say so)."""

    results: list[ResultsDir]
    bundles: tuple[dict[str, list[bundle_history.Bundle]], list[bundle_history.Broken]] | None
    limits: list[Limits] | None
    generated: datetime.datetime = dataclasses.field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc))
    thresholds: dict[str, float] = dataclasses.field(
        default_factory=lambda: {".*": regressions.DEFAULT_THRESHOLD})
    asv_html: list[Path] = dataclasses.field(default_factory=list)
    noise: NoiseData | None = None
    repo: Path | None = None


def _low_areas(rates: dict[str, list[float]]) -> list[str]:
    """The areas below 100% somewhere, worst first (0.0 is a rate: every test failed)."""
    worst = {a: min(r) for a, r in rates.items() if r}
    return sorted((a for a in worst if worst[a] < 100.0), key=lambda a: (worst[a], a))


def _legend(series: list[tuple[str, Any]]) -> list[tuple[str, charts.Style]]:
    return [(name, charts.style(i)) for i, (name, _) in enumerate(series)]


def _rate_chart(bundles: list[bundle_history.Bundle], x_of: Any,
                categories: list[str] | None = None
                ) -> tuple[str, list[tuple[str, charts.Style]]]:
    """Pass rate (%) of ``bundles`` at ``x_of(bundle)``: all areas, then every area below
    100% in some bundle, worst first; ``categories``: a category x-axis in that order."""
    series = [("all areas", [(x_of(b), b.rate(), b.path.name) for b in bundles
                             if b.rate() is not None])]  # None: no counted test (n/a)
    areas = sorted({a for b in bundles for a in b.areas})
    rates = {a: [r for r in (b.rate(a) for b in bundles) if r is not None] for a in areas}
    for area in _low_areas(rates):
        series.append((area, [(x_of(b), b.rate(area), b.path.name) for b in bundles
                              if b.rate(area) is not None]))
    return (charts.line_chart(series, unit="%", width=900, height=260, categories=categories),
            _legend(series))


def _conformance_chart(backend_bundles: list[bundle_history.Bundle]
                       ) -> tuple[str, list[tuple[str, charts.Style]]]:
    """Pass rate (%) over bundle dates (:func:`_rate_chart`)."""
    return _rate_chart(backend_bundles, lambda b: b.started)


def newest_per_release(backend_bundles: list[bundle_history.Bundle]
                       ) -> list[bundle_history.Bundle]:
    """The newest bundle of each jaxlib release (bundles without one left out), oldest
    release first (:func:`~conformance.certification.compare.scoreboard.release_key`)."""
    newest: dict[str, bundle_history.Bundle] = {}
    for b in backend_bundles:
        if b.release and (b.release not in newest or newest[b.release].started < b.started):
            newest[b.release] = b
    return [newest[r] for r in sorted(newest, key=release_key)]


def _release_chart(per_release: list[bundle_history.Bundle]
                   ) -> tuple[str, list[tuple[str, charts.Style]]]:
    """Pass rate (%) per jax release (:func:`_rate_chart` on a category axis)."""
    return _rate_chart(per_release, lambda b: b.release, [b.release for b in per_release])


def area_changes(backend: str, per_release: list[bundle_history.Bundle]
                 ) -> list[tuple[str, str, bundle_history.Bundle, bundle_history.Bundle]]:
    """(backend, area, before, after) for every area whose pass rate differs between
    consecutive releases of ``per_release`` (an area absent from one side is left out);
    "all areas" first, then areas by name. An area with no counted test on one side
    (every test skipped or not supported: its rate is None, "n/a") is listed only
    when the other side has a rate -- the page shows it as n/a, never as a rise or a
    fall; with no counted test on either side it is not a change."""
    out = []
    for before, after in zip(per_release, per_release[1:]):
        for area in [None, *sorted(set(before.areas) & set(after.areas))]:
            if before.rate(area) != after.rate(area):
                out.append((backend, area or "all areas", before, after))
    return out


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def _asv_links(dirs: list[Path], out_dir: Path | None) -> list[tuple[str, str]]:
    """(href, folder) of each asv site folder holding index.html, relative to
    ``out_dir`` (absolute file URI when None)."""
    links = []
    for d in dirs:
        index = Path(d) / "index.html"
        if index.is_file():
            href = (os.path.relpath(index.resolve(), Path(out_dir).resolve()) if out_dir
                    else index.resolve().as_uri())
            links.append((href, str(d)))
    return links


def pages(inputs: Inputs, out_dir: Path | None = None) -> dict[str, str]:
    """{file name: HTML} of the whole site (``out_dir``: where it will be written, for
    the relative links to asv's own site)."""
    ordering = history.ordering_of(inputs.results, inputs.repo)
    chart_list = history.build(inputs.results, ordering)
    release_charts = history.by_release(inputs.results, ordering)
    ratios = [c for c in chart_list if c.is_ratio]
    release_ratios = [c for c in release_charts if c.is_ratio]
    changes = regressions.find(release_charts + chart_list, inputs.thresholds,
                               inputs.noise)
    missing = history.without_results(inputs.results)
    nav = [("index.html", "Overview"), ("releases.html", "By jax release"),
           ("commits.html", "By commit"), ("ratios.html", "Ratios"),
           ("versions.html", "Versions"), ("conformance.html", "Conformance")]
    if inputs.limits:
        nav.append(("limits.html", "Limits"))
    machines = {name: info for d in inputs.results for name, info in d.machines.items()}
    common: dict[str, Any] = dict(
        nav=nav, generated=inputs.generated.strftime("%Y-%m-%d %H:%M UTC"),
        sources=[str(d.root) for d in inputs.results],
        problems=[p for d in inputs.results for p in d.problems],
        fmt=charts.fmt, reference_of=history.reference_of, swatch=charts.swatch,
        anchor=_anchor, ordering=ordering)
    backends: list[dict[str, Any]] = []
    by_backend, broken = inputs.bundles or ({}, [])
    for backend, items in by_backend.items():
        svg, legend = _conformance_chart(items)
        per_release = newest_per_release(items)
        rsvg, rlegend = _release_chart(per_release) if len(per_release) > 1 else ("", [])
        backends.append(dict(name=backend, anchor="c-" + _anchor(backend), bundles=items,
                             svg=svg, legend=legend, per_release=per_release,
                             release_svg=rsvg, release_legend=rlegend,
                             areas=sorted({a for b in items for a in b.areas})))
    benches = sorted({c.benchmark.name for c in chart_list})
    rbenches = sorted({c.benchmark.name for c in release_charts})
    toc = {
        "index.html": [("last-run", "The last run against the previous run"),
                       ("regressions", f"Regressions ({sum(c.up for c in changes)}) "
                        f"and improvements ({sum(not c.up for c in changes)})"),
                       ("conformance-changes", "Conformance changes between releases"),
                       ("no-results", f"Benchmarks without results ({len(missing)})"),
                       ("asv-site", "asv's own site")],
        "releases.html": [(_anchor(n), n) for n in rbenches]
        + [(b["anchor"], f"conformance: {b['name']}") for b in backends if b["per_release"]],
        "commits.html": [(_anchor(n), n) for n in benches],
        "ratios.html": [("by-release", "by jax release"), ("by-commit", "by commit")],
        "versions.html": [(_anchor(n), n) for n in benches],
        "conformance.html": [(b["anchor"], b["name"]) for b in backends],
    }
    if inputs.limits:
        toc["limits.html"] = [(f"l-{i}", f.header["device"])
                              for i, f in enumerate(inputs.limits)]
    asv_machines = dict(machines=machines)
    commits = [c[:8] for c in ordering.sequence]
    conformance_changes = [c for b in backends for c in area_changes(b["name"],
                                                                      b["per_release"])]
    out = {
        "index.html": ("overview.html.j2", dict(
            head=last_run.headline(inputs.results, inputs.thresholds, inputs.noise,
                                   ordering), when=last_run.when, noise=inputs.noise,
            changes=changes, missing=missing, conformance_changes=conformance_changes,
            backends=backends, thresholds=inputs.thresholds,
            asv_links=_asv_links(inputs.asv_html, out_dir), site_toc=toc,
            releases=sorted({c for ch in release_charts for c in ch.categories},
                            key=release_key), **asv_machines)),
        "releases.html": ("releases.html.j2", dict(charts=release_charts, backends=backends,
                                                   **asv_machines)),
        "commits.html": ("benchmarks.html.j2", dict(charts=chart_list, commits=commits,
                                                    **asv_machines)),
        "ratios.html": ("ratios.html.j2", dict(charts=ratios, release_charts=release_ratios,
                                               **asv_machines)),
        "versions.html": ("versions.html.j2", dict(groups=history.versions(chart_list),
                                                   **asv_machines)),
        "conformance.html": ("conformance.html.j2", dict(
            backends=backends, broken=broken, given=inputs.bundles is not None,
            pass_rate_definition=pass_rate.DEFINITION, machines={}, sources=[])),
    }
    if inputs.limits:
        out["limits.html"] = ("limits.html.j2", dict(
            files=inputs.limits, sources=[],
            machines={f.header["device"]: {"platform": f.header["platform"]}
                      for f in inputs.limits}))
    return {name: _ENV.get_template(f"dashboard/{tpl}").render(
                page=name, toc=toc.get(name, []), **{**common, **ctx})
            for name, (tpl, ctx) in out.items()}


def write(inputs: Inputs, out_dir: Path) -> list[Path]:
    """Render every page into ``out_dir`` (created) and return the paths written.
    Raises OfflineViolation, before writing anything, when a page references the
    network."""
    rendered = pages(inputs, out_dir)
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
