"""The dashboard opened from disk in headless Chromium with the network off: the charts
really render (their series colours are on the screenshot's pixels)."""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conformance.dashboard import asv_results, bundles, charts, history, site

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
                       bundles=bundles.collect(reports) if reports else None, limits=None)


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

    def emptied(dirs):
        out = real(dirs)
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


def _box_pixels(tmp_path, inputs, name):
    """Pixels of the regressed (red) and clean (green) headline borders on the first
    screen (1280x800, no scrolling) of the overview."""
    out = tmp_path / name
    site.write(inputs, out)
    png = tmp_path / f"{name}.png"
    proc = subprocess.run([CHROMIUM, *OFFLINE, f"--user-data-dir={tmp_path / 'profile'}",
                           "--window-size=1280,800", f"--screenshot={png}",
                           (out / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    img = Image.open(png).convert("RGB")
    assert img.size == (1280, 800)
    return _count(img, "#c5221f", tol=10), _count(img, "#188038", tol=10)


def test_the_first_screen_answers_did_the_last_run_regress(tmp_path):
    """At 1280x800, without scrolling: the committed history's last run (jax 0.10.2 at
    commit 5b3b0338 against the same environment at 0c617246 on cpu-2core-xeon: ratios
    beyond the threshold and outside both 99% intervals, on a shared 2-core machine)
    regressed, so the red box is on the first screen; runs that did not change show the
    green one instead."""
    committed = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
    red, green = _box_pixels(tmp_path, site.Inputs(results=[asv_results.load(committed)],
                                                    bundles=None, limits=None), "regressed")
    assert red > 2000 and green < 50, (red, green)
    # the same runs, every one with the oldest run's values: nothing changed, green
    results = asv_results.load(committed)
    first = min(results.runs, key=lambda r: r.ran_at)
    results.runs = [dataclasses.replace(r, values=first.values, ci=first.ci)
                    for r in results.runs]
    red, green = _box_pixels(tmp_path, site.Inputs(results=[results], bundles=None,
                                                   limits=None), "clean")
    assert green > 2000 and red < 50, (red, green)
