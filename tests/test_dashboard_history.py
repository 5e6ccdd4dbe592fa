"""The dashboard's history views (issue 28 item 3): the jax-release and commit axes,
the regression list against asv's ``regressions_thresholds``, distinct series styles,
tables of contents whose anchors resolve, no dead links, the benchmarks without
results, and machine labels taken from the data. The committed results
(benchmarks/results/, reports/) are rendered once for the checks on real data."""

from __future__ import annotations

import dataclasses
import datetime
import html.parser
import json
import re
import shutil
from pathlib import Path

import pytest

from conformance.certification.compare.scoreboard import release_key
from conformance.dashboard import asv_results, bundle_history, charts, history, limits, regressions
from conformance.dashboard import site
from conformance.dashboard.errors import MalformedInput
from tests.test_links_and_rates import dead_links

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "dashboard_fixture" / "results"
COMMITTED = ROOT / "benchmarks" / "results"


class _Page(html.parser.HTMLParser):
    """ids, hrefs and the text of every <th> and chart x label of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.th: list[str] = []
        self.x_labels: list[list[str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"] or "")
        if tag == "th":
            self._in, self.th = "th", self.th + [""]
        if tag == "svg" and a.get("class") == "chart":
            self.x_labels.append([])
        if tag == "text" and a.get("text-anchor") == "middle" and self.x_labels:
            self._in = "x"
            self.x_labels[-1].append("")

    def handle_endtag(self, tag):
        if tag in ("th", "text"):
            self._in = None

    def handle_data(self, data):
        if self._in == "th":
            self.th[-1] += data
        elif self._in == "x":
            self.x_labels[-1][-1] += data


def _parse(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


@pytest.fixture(scope="module")
def real_site(tmp_path_factory):
    """The dashboard of the committed data (asv results, bundles, GPU limits)."""
    out = tmp_path_factory.mktemp("real") / "site"
    inputs = site.Inputs(results=[asv_results.load(COMMITTED)],
                         bundles=bundle_history.collect(ROOT / "reports"),
                         limits=limits.load_dir(ROOT / "benchmarks" / "gpu"),
                         thresholds=regressions.thresholds(ROOT / "asv.conf.json"))
    site.write(inputs, out)
    return out, inputs


def _with_intervals(loaded: asv_results.ResultsDir) -> asv_results.ResultsDir:
    """``loaded`` with a 99% interval of +-1% around every value (the fixture's single
    samples have none, and a value without an interval is never judged)."""
    loaded.runs = [dataclasses.replace(r, ci={n: {c: (v * 0.99, v * 1.01) for c, v in
                                                  combos.items()}
                                              for n, combos in r.values.items()})
                   for r in loaded.runs]
    return loaded


def _fixture_first_run(tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the fixture's results with its runs removed, and the first run's
    document (to write runs of one's own from)."""
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    runs = sorted(dst.glob("fixture-host/*-existing-*.json"))
    doc = json.loads(runs[0].read_text())
    for path in runs:
        path.unlink()
    return dst, doc


def _released(tmp_path: Path, factors: dict[str, float]) -> asv_results.ResultsDir:
    """The fixture's first run as three releases (0.9.0, 0.10.0, 0.12.0.1: string order
    would differ), with +-1% intervals; the two newer releases' value of each benchmark
    in ``factors`` is multiplied by its factor (a step the next release confirms)."""
    dst, doc = _fixture_first_run(tmp_path)
    for i, release in enumerate(["0.12.0.1", "0.9.0", "0.10.0"]):
        d = json.loads(json.dumps(doc))
        d["requirements"] = {"jax": release, "jaxlib": release}
        d["commit_hash"] = f"{i}" * 40
        if release != "0.9.0":
            for name, factor in factors.items():
                d["results"][name][0] = [v * factor for v in d["results"][name][0]]
        (dst / "fixture-host" / f"{i:08d}-virtualenv-{release}.json").write_text(json.dumps(d))
    return _with_intervals(asv_results.load(dst))


def test_regression_list_finds_a_planted_4x_change_and_not_a_1_percent_one(tmp_path):
    names = sorted(json.loads((FIXTURE / "benchmarks.json").read_text()))
    names.remove("version")
    big, small = names[0], names[1]
    loaded = _released(tmp_path, {big: 4.0, small: 1.01})
    chart_list = history.by_release([loaded])
    changes = regressions.find(chart_list, {".*": regressions.DEFAULT_THRESHOLD})
    found = {(c.benchmark, c.before_at, c.after_at, c.up) for c in changes}
    assert (big, "0.9.0", "0.10.0", True) in found  # up 4x, kept by 0.12.0.1
    assert not any(c.before_at == "0.10.0" for c in changes)
    assert not any(c.benchmark == small for c in changes)
    up = next(c for c in changes if c.benchmark == big and c.up)
    assert up.factor == pytest.approx(4.0) and up.after == pytest.approx(4 * up.before)
    # on the first page, with its size, before/after and the releases
    out = tmp_path / "site"
    site.write(site.Inputs(results=[loaded], bundles=None, limits=None), out)
    index = (out / "index.html").read_text()
    row = next(r for r in index.split("<tr>") if f"<code>{big}</code>" in r and "up" in r)
    assert "0.9.0" in row and "0.10.0" in row and charts.fmt(up.after, up.unit) in row
    assert up.params in row and "4.00\u00d7" in row and "confirmed" in row
    assert f"<code>{small}</code>" not in index.split('id="regressions"')[1].split(
        'id="no-results"')[0]


def test_thresholds_come_from_the_asv_config(tmp_path):
    assert regressions.thresholds(ROOT / "asv.conf.json") == json.loads(
        (ROOT / "asv.conf.json").read_text())["regressions_thresholds"]
    config = tmp_path / "asv.conf.json"
    config.write_text('// asv allows comments\n{"version": 1}')
    assert regressions.thresholds(config) == {".*": regressions.DEFAULT_THRESHOLD} == \
        regressions.thresholds(None)
    table = {"Compile": 0.5, "time_": 0.2}
    assert regressions.threshold_for("bench.Compile.time_x", table) == 0.5  # largest match
    assert regressions.threshold_for("bench.Other.track_y", table) == 0.05  # asv's default
    config.write_text(json.dumps({"regressions_thresholds": {".*": "ten"}}))
    with pytest.raises(MalformedInput, match="regressions_thresholds"):
        regressions.thresholds(config)
    # a planted 4x change is not listed under a threshold of 400%
    loaded = _released(tmp_path, {"bench_tiny.Copy.time_copy": 4.0})
    assert not regressions.find(history.by_release([loaded]), {".*": 4.0})


def test_releases_sort_as_versions_and_commits_as_dates(tmp_path):
    loaded = _released(tmp_path, {})
    chart = history.by_release([loaded])[0]
    assert chart.categories == sorted(["0.12.0.1", "0.9.0", "0.10.0"], key=release_key)
    assert chart.categories != sorted(chart.categories)  # not string order
    commits = history.build([asv_results.load(FIXTURE)])[0]
    runs = sorted(asv_results.load(FIXTURE).runs, key=lambda r: r.date)
    assert commits.categories == [r.commit[:8] for r in runs]


def test_real_dashboard_shows_three_releases_on_an_x_axis(real_site):
    out, _ = real_site
    page = _parse((out / "releases.html").read_text())
    widest = max(page.x_labels, key=len)
    assert len(widest) >= 3, page.x_labels
    assert widest == sorted(widest, key=release_key)
    # benchmarks per release, and conformance areas per release of the cpu backend
    bench_axes = [x for x in page.x_labels if len(x) >= 3]
    assert len(bench_axes) >= 2


def test_real_dashboard_first_page_lists_regressions(real_site):
    out, inputs = real_site
    changes = regressions.find(history.by_release(inputs.results)
                               + history.build(inputs.results), inputs.thresholds)
    index = (out / "index.html").read_text()
    ups = [c for c in changes if c.up]
    assert ups and f"Regressions ({len(ups)}) and improvements ({len(changes) - len(ups)})" \
        in index
    # the last run's headline comes before everything else on the page
    assert index.index('id="last-run"') < index.index('id="site-contents"')
    # every listed change has intervals on both sides (none is judged without one)
    assert all(c.rule.threshold >= 0 and c.status in ("confirmed", "new") for c in changes)


def test_twenty_series_have_distinct_styles_and_swatches():
    styles = [charts.style(i) for i in range(1000)]
    assert len(set(styles)) == len(styles)
    day = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    series = [(f"s{i}", [(day, float(i + 1))]) for i in range(20)]
    svg = charts.line_chart(series, unit="seconds")
    assert "<rect x=" in svg and "<circle" in svg  # series 10-19 use a second marker
    swatches = [charts.swatch(charts.style(i)) for i in range(20)]
    assert len(set(swatches)) == 20
    # the check can fail: colour alone repeats after len(PALETTE) series
    assert len({s.colour for s in styles[:20]}) < 20
    with pytest.raises(ValueError, match="index"):
        charts.style(-1)


def test_release_chart_draws_a_zero_percent_area():
    day = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    per_release = [
        bundle_history.Bundle("cpu", Path(f"b{r}"), day, "x", {"dead": (0, 5), "fine": (5, 5)},
                              release=r) for r in ("0.10.2", "0.11.2", "0.12.0.1")
    ]
    svg, legend = site._release_chart(per_release)
    assert [n for n, _ in legend] == ["all areas", "dead"]
    assert svg.count("dead: 0 % at") == 3  # a point (with tooltip) at 0% per release


def _pages(out: Path) -> dict[str, _Page]:
    return {p.name: _parse(p.read_text()) for p in out.glob("*.html")}


def test_no_dead_links_and_toc_anchors_resolve(real_site):
    out, _ = real_site
    pages = _pages(out)
    assert {"index.html", "releases.html", "commits.html", "limits.html"} <= set(pages)
    for name, page in pages.items():
        assert dead_links((out / name).read_text(), out) == [], name
        for href in page.hrefs:  # file#anchor: the anchor exists in that file
            target, _, anchor = href.partition("#")
            if anchor and target:
                assert anchor in pages[target].ids, (name, href)
    index = pages["index.html"]
    toc = [h for h in index.hrefs if "#" in h]
    assert any(h.startswith("releases.html#") for h in toc)
    assert {"regressions", "no-results", "asv-site"} <= index.ids


def test_dead_anchor_is_caught(tmp_path):
    """The cross-page anchor check fails on a ToC entry whose section is gone."""
    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(FIXTURE)], bundles=None, limits=None),
               out)
    commits = (out / "commits.html").read_text()
    first = re.search(r'<h2 id="([^"]+)"', commits).group(1)
    (out / "commits.html").write_text(commits.replace(f'id="{first}"', 'id="gone"'))
    pages = _pages(out)
    broken = [h for n, p in pages.items() for h in p.hrefs
              if "#" in h and h.split("#")[0] and h.split("#")[1] not in
              pages[h.split("#")[0]].ids]
    assert f"commits.html#{first}" in broken
    assert dead_links((out / "commits.html").read_text(), out) == [f"#{first}"]


def test_benchmarks_without_results_are_listed(real_site):
    out, inputs = real_site
    d = inputs.results[0]
    measured = {n for r in d.runs for n, v in r.values.items() if v}
    missing = sorted(set(d.benchmarks) - measured)
    section = (out / "index.html").read_text().split('id="no-results"')[1]
    assert f"({len(missing)})" in (out / "index.html").read_text()
    assert all(f"<code>{n}</code>" in section for n in missing)
    assert not any(f"<code>{n}</code>" in section.split("</ul>")[0] for n in measured)
    # every benchmark has results since the nightly rounds of 2026-11-28
    assert missing == [] and f"({len(missing)})" == "(0)"


def test_machine_labels_come_from_the_data(real_site):
    out, inputs = real_site
    limits_page = (out / "limits.html").read_text()
    asv_machine = next(iter(inputs.results[0].machines))
    devices = {f.header["device"] for f in inputs.limits}
    assert asv_machine not in limits_page
    assert all(f"Machine <b>{d}</b>" in limits_page for d in devices)
    assert f"Machine <b>{asv_machine}</b>" in (out / "commits.html").read_text()
    assert asv_machine not in (out / "conformance.html").read_text()


def test_versions_headers_are_short(real_site):
    out, _ = real_site
    page = _parse((out / "versions.html").read_text())
    # values without names, sizes in MiB; the longest: "256 MiB, " and a 36-character
    # transfer path name (bench_transfer.TransferRatio)
    assert page.th and max(len(t) for t in page.th) <= 45, max(page.th, key=len)
    assert "white-space: nowrap" in (out / "versions.html").read_text()


def test_asv_site_is_linked_when_published(tmp_path):
    published = tmp_path / "asv-html"
    published.mkdir()
    (published / "index.html").write_text("<html></html>")
    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(FIXTURE)], bundles=None, limits=None,
                           asv_html=[published, tmp_path / "none"]), out)
    index = (out / "index.html").read_text()
    assert 'href="../asv-html/index.html"' in index
    assert dead_links(index, out) == [] and "asv preview" in index


def test_conformance_changes_between_releases_are_listed():
    day = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    older = bundle_history.Bundle("cpu", Path("a"), day, "x", {"same": (3, 4), "moved": (4, 4)},
                                  release="0.10.2")
    newer = bundle_history.Bundle("cpu", Path("b"), day, "x", {"same": (3, 4), "moved": (2, 4),
                                                               "new": (0, 1)}, release="0.11.2")
    changes = site.area_changes("cpu", site.newest_per_release([newer, older]))
    assert [(a, b.release, c.release) for _, a, b, c in changes] == [
        ("all areas", "0.10.2", "0.11.2"), ("moved", "0.10.2", "0.11.2")]
    assert site.area_changes("cpu", [older]) == []


def test_a_bundle_in_reports_and_in_matrix_is_shown_once(tmp_path):
    src = next(p.parent for p in sorted((ROOT / "reports" / "cpu").glob("*/report.json")))
    reports, matrix = tmp_path / "reports", tmp_path / "matrix"
    shutil.copytree(src, reports / "cpu" / src.name)
    shutil.copytree(src, matrix / "0.10.2-py3.11")
    merged, broken = bundle_history.merge(
        [bundle_history.collect(reports), bundle_history.collect(matrix)])
    assert sum(len(v) for v in merged.values()) == 1 and broken == []
    alone = [sum(len(v) for v in bundle_history.collect(d)[0].values()) for d in (reports, matrix)]
    assert alone == [1, 1]  # each folder alone has it: merge removed the copy


def test_regression_list_on_the_commit_axis(tmp_path):
    """The fixture's two commits; the newer one's value of one benchmark planted 4x."""
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    runs = sorted(asv_results.load(dst).runs, key=lambda r: r.date)
    newer = json.loads(runs[-1].source.read_text())
    name = sorted(newer["results"])[0]
    older_doc = json.loads(runs[0].source.read_text())
    newer["results"][name][0] = [4 * v for v in older_doc["results"][name][0]]
    runs[-1].source.write_text(json.dumps(newer))
    changes = regressions.find(history.build([_with_intervals(asv_results.load(dst))]),
                               {".*": regressions.DEFAULT_THRESHOLD})
    planted = [c for c in changes if c.benchmark == name]
    assert planted and all(c.up and c.axis == "commit" for c in planted)
    assert {(c.before_at, c.after_at) for c in planted} == {
        (runs[0].commit[:8], runs[-1].commit[:8])}
    assert all(c.factor == pytest.approx(4.0) for c in planted)


def test_an_area_with_no_counted_test_is_n_a_not_a_crash(tmp_path):
    """An area whose every test was skipped or not supported has no pass rate (None,
    pass_rate.DEFINITION): the site renders, the area shows n/a, never a rise or fall."""
    day = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    older = bundle_history.Bundle("cpu", Path("a"), day, "x", {"skipped": (0, 0), "ok": (3, 4)},
                                  release="0.10.2")
    newer = bundle_history.Bundle("cpu", Path("b"), day + datetime.timedelta(days=1), "x",
                                  {"skipped": (3, 4), "ok": (3, 4)}, release="0.11.2")
    bare = bundle_history.Bundle("cpu", Path("c"), day + datetime.timedelta(days=2), "x",
                                 {"skipped": (0, 0)}, release="0.12.0")
    changes = site.area_changes("cpu", [older, newer, bare])
    assert [(a, b.release) for _, a, b, _ in changes] == [  # all areas 75% -> 75%
        ("skipped", "0.10.2"), ("all areas", "0.11.2"), ("skipped", "0.11.2")]
    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(FIXTURE)],
                           bundles=({"cpu": [older, newer, bare]}, []), limits=None), out)
    index = (out / "index.html").read_text()
    section = index.split('id="conformance-changes"')[1].split('id="no-results"')[0]
    assert section.count("n/a: none counted") == 3  # skipped 0.10.2, all areas + skipped 0.12.0
    assert section.count('class="empty"') >= 4  # n/a pairs: neither up nor down
    for page in ("conformance.html", "releases.html"):
        assert "0/0 (n/a: none counted)" in (out / page).read_text(), page


def test_conformance_page_states_the_one_pass_rate_definition(tmp_path):
    from conformance.certification.verdict import pass_rate
    import html as html_mod

    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(FIXTURE)], bundles=None, limits=None),
               out)
    page = html_mod.unescape((out / "conformance.html").read_text())
    assert pass_rate.DEFINITION in page
    assert "all results of the area" not in page


def test_the_run_of_a_release_is_the_newest_in_git_order_not_by_date(tmp_path):
    """Two runs of one release: the git descendant stands for it even when asv's commit
    date says otherwise (a rebased or cherry-picked commit); the date only as the stated
    fallback."""
    from conformance.dashboard import order

    dst, doc = _fixture_first_run(tmp_path)
    name = next(n for n, v in doc["results"].items() if v[0] and v[0][0] is not None)
    parent, child = "a" * 40, "b" * 40
    for commit, date, factor in ((parent, doc["date"] + 10_000, 1.0),
                                 (child, doc["date"], 7.0)):  # the child dated earlier
        d = json.loads(json.dumps(doc))
        d.update(commit_hash=commit, date=date, requirements={"jax": "0.10.0",
                                                              "jaxlib": "0.10.0"})
        d["results"][name][0] = [None if v is None else v * factor
                                 for v in d["results"][name][0]]
        (dst / "fixture-host" / f"{commit[:8]}-virtualenv-0.10.0.json").write_text(
            json.dumps(d))
    loaded = asv_results.load(dst)
    git = order.Ordering([parent, child], {parent: frozenset(), child: frozenset({parent})})

    def shown(ordering):
        chart = next(c for c in history.by_release([loaded], ordering)
                     if c.benchmark.name == name)
        return {note.split(",")[0] for pts in chart.series.values() for _, _, note, _ in pts}

    assert shown(git) == {f"commit {child[:12]}"}
    by_date = history.ordering_of([loaded], None)
    assert by_date.fallback and shown(by_date) == shown(None) == {f"commit {parent[:12]}"}
    out = tmp_path / "site"
    site.write(site.Inputs(results=[loaded], bundles=None, limits=None), out)
    import html as html_mod
    page = html_mod.unescape((out / "releases.html").read_text())
    assert f"Commit order: {by_date.fallback}" in page
