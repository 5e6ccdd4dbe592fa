"""The dashboard opened from disk in headless Chromium with the network off: the charts
really render (their series colours are on the screenshot's pixels)."""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conformance.dashboard import asv_results, bundle_history, charts, history, site

Image = pytest.importorskip("PIL.Image")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(.ci/run installs it when apt-get is available)")
FIXTURE = Path(__file__).parent / "dashboard_fixture" / "results"
BUNDLE = Path(__file__).resolve().parent.parent / "reports" / "xla-cpu-pjrt"
WIDTH, HEIGHT = 1280, 1000
OFFLINE = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", "--proxy-server=127.0.0.1:9",
           "--host-resolver-rules=MAP * ~NOTFOUND"]


def _rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def _shot(tmp_path, page):
    png = tmp_path / f"{page.stem}.png"
    proc = subprocess.run([CHROMIUM, *OFFLINE, f"--user-data-dir={tmp_path / 'profile'}",
                           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}",
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    return Image.open(png).convert("RGB")


def _count(img, colour, tol=6):
    pixels = np.asarray(img, dtype=np.int16)
    return int((np.abs(pixels - np.array(_rgb(colour))) <= tol).all(axis=-1).sum())


def _inputs(reports=None):
    return site.Inputs(results=[asv_results.load(FIXTURE)],
                       bundles=bundle_history.collect(reports) if reports else None, limits=None)


def test_charts_render_offline(tmp_path):
    reports = tmp_path / "reports"
    shutil.copytree(BUNDLE, reports / BUNDLE.name)
    out = tmp_path / "site"
    site.write(_inputs(reports), out)
    for page in ("commits.html", "releases.html", "ratios.html", "conformance.html"):
        img = _shot(tmp_path, out / page)
        assert img.size == (WIDTH, HEIGHT)
        # every page's first chart draws two series (two plugin eras; all areas + one)
        assert _count(img, charts.PALETTE[0]) > 40, page
        assert _count(img, charts.PALETTE[1]) > 40, page


def test_a_chart_without_points_fails_the_pixel_check(tmp_path, monkeypatch):
    """The pixel check can fail: the same site with every series emptied shows "no data"
    and none of the series colours (the legend swatches are removed too)."""
    real = history.build

    def emptied(dirs, ordering=None):
        out = real(dirs, ordering)
        for chart in out:
            chart.series = {label: [] for label in chart.series}
        return out

    monkeypatch.setattr(history, "build", emptied)
    monkeypatch.setattr(history.Chart, "legend", lambda self: [])
    out = tmp_path / "site"
    site.write(_inputs(), out)
    assert "no data" in (out / "commits.html").read_text()
    img = _shot(tmp_path, out / "commits.html")
    assert _count(img, charts.PALETTE[0]) == 0 and _count(img, charts.PALETTE[1]) == 0


#: The headline's border colour per state: a called regression (confirmed by a second
#: point), a change to confirm (the last run's own step), nothing changed.
BORDER = {"regressed": "#c5221f", "watch": "#b06000", "clean": "#188038"}


def _box_pixels(tmp_path, inputs, name):
    """(headline state, {state: pixels of its border colour}) on the first screen
    (1280x800, no scrolling) of the overview."""
    out = tmp_path / name
    site.write(inputs, out)
    page = (out / "index.html").read_text()
    state = page.split('<section id="last-run" class="headline ', 1)[1].split('"', 1)[0]
    png = tmp_path / f"{name}.png"
    proc = subprocess.run([CHROMIUM, *OFFLINE, f"--user-data-dir={tmp_path / 'profile'}",
                           "--window-size=1280,800", f"--screenshot={png}",
                           (out / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    img = Image.open(png).convert("RGB")
    assert img.size == (1280, 800)
    return state, {s: _count(img, c, tol=10) for s, c in BORDER.items()}


def test_the_first_screen_answers_did_the_last_run_regress(tmp_path):
    """At 1280x800, without scrolling: the committed history's last run is answered in
    the colour of its state (red: a regression a second point confirmed; amber: a change
    of the last run alone, to confirm; green: none), and only in that colour; runs that
    did not change show the green box."""
    committed = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
    state, px = _box_pixels(tmp_path, site.Inputs(results=[asv_results.load(committed)],
                                                  bundles=None, limits=None), "committed")
    assert px[state] > 2000 and all(n < 50 for s, n in px.items() if s != state), (state, px)
    # the same runs, every one with the oldest run's values: nothing changed, green
    results = asv_results.load(committed)
    first = min(results.runs, key=lambda r: r.ran_at)
    results.runs = [dataclasses.replace(r, values=first.values, ci=first.ci)
                    for r in results.runs]
    state, px = _box_pixels(tmp_path, site.Inputs(results=[results], bundles=None,
                                                  limits=None), "clean")
    assert state == "clean" and px["clean"] > 2000 and px["regressed"] < 50 and \
        px["watch"] < 50, px


_MEASURE = """<script>
window.addEventListener('load', () => {
  const out = {page: document.documentElement.scrollWidth, view: window.innerWidth,
               cut: [], legends: [], lines: []};
  for (const t of document.querySelectorAll('table')) {
    const box = t.parentElement, style = getComputedStyle(box);
    const scrolls = ['auto', 'scroll'].includes(style.overflowX)
                    && box.getBoundingClientRect().right <= window.innerWidth + 1;
    if (t.getBoundingClientRect().right > window.innerWidth + 1 && !scrolls)
      out.cut.push(t.rows[0].textContent.slice(0, 60));
  }
  for (const c of document.querySelectorAll('.card')) {
    out.legends.push(c.querySelectorAll('.legend li').length);
    const svg = c.querySelector('svg.chart');
    if (svg) out.lines.push(new Set([...svg.querySelectorAll('polyline, circle, rect[fill],'
      + ' polygon')].map(e => e.getAttribute('fill') + e.getAttribute('stroke'))).size);
  }
  const pre = document.createElement('pre'); pre.id = 'measured';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>"""


def _measure(tmp_path, page):
    """Layout facts of ``page`` at 1280x800 from headless Chromium's DOM (a measuring
    script added to a copy of the page: the site itself has none)."""
    import json
    probe = page.with_name(f"probe-{page.name}")
    probe.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))
    proc = subprocess.run([CHROMIUM, *OFFLINE, f"--user-data-dir={tmp_path / 'profile'}",
                           "--window-size=1280,800", "--virtual-time-budget=5000",
                           "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout.split('<pre id="measured">', 1)[1].split("</pre>", 1)[0]
    return json.loads(text.replace("&quot;", '"').replace("&amp;", "&"))


def test_committed_pages_are_readable_at_1280(tmp_path):
    """On the committed history at 1280x800: no page is wider than the window, no table
    is cut off (each fits or scrolls inside its own container), no chart has more than
    8 legend entries."""
    committed = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(committed)], bundles=None,
                           limits=None, repo=committed.parent.parent), out)
    for page in ("index.html", "commits.html", "releases.html", "ratios.html"):
        got = _measure(tmp_path, out / page)
        assert got["page"] <= got["view"] and got["cut"] == [], (page, got)
        assert max(got["legends"], default=0) <= 8, (page, got["legends"])
        assert page == "index.html" or got["legends"], page   # chart pages have charts


def test_the_layout_check_can_fail(tmp_path):
    """A table taken out of its scrolling container and a chart of 20 series are caught."""
    out = tmp_path / "site"
    site.write(site.Inputs(results=[asv_results.load(FIXTURE)], bundles=None, limits=None),
               out)
    page = out / "commits.html"
    wide = "<table><tr><th>" + "x" * 400 + "</th></tr></table>"
    legend = '<div class="card"><ul class="legend">' + "<li>s</li>" * 20 + "</ul></div>"
    page.write_text(page.read_text().replace("</h1>", "</h1>" + wide + legend, 1))
    got = _measure(tmp_path, page)
    assert got["cut"] and max(got["legends"]) == 20
