"""report.html in headless Chromium: the first screen (1280x800) shows the verdict, the
per-area bars and the first failure, and for the committed lammps plugin and CPU
reports the plugin identity, the "Why not certified" heading, the failures by root cause
(a plugin row first) and the first next step -- checked on the screenshot's pixels."""

import html
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conformance.certification.rendering import failure_view
from conformance.certification.results import records
from conformance.certification.verdict import report
from conformance.certification.rendering import report_html
from conformance.certification.rendering import svg
from tests import report_docs

Image = pytest.importorskip("PIL.Image")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(.ci/run installs it when apt-get is available)")
WIDTH, HEIGHT = 1280, 800
LEFT = (0, 150, 580, HEIGHT)  # the per-area table under the verdict
RIGHT = (590, 150, WIDTH, HEIGHT)  # the first failure
NOT_CERTIFIED_BG = (0xfb, 0xd9, 0xd9)
FAIL_CELL_BG = (0xf8, 0xc9, 0xc9)


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def _screenshot(tmp_path, doc, transform=lambda page: page):
    page = tmp_path / "report.html"
    page.write_text(transform(report_html.render(doc)))
    png = tmp_path / "shot.png"
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update",
                           "--host-resolver-rules=MAP * ~NOTFOUND",  # network off
                           f"--user-data-dir={tmp_path / 'profile'}",
                           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}",
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    return Image.open(png).convert("RGB")


def _count(img, box, colour, tol=8):
    """Pixels of ``colour`` (within ``tol`` per channel) in ``box``."""
    region = np.asarray(img.crop(box), dtype=np.int16)
    return int((np.abs(region - np.array(colour)) <= tol).all(axis=-1).sum())


def test_first_screen_shows_verdict_bars_and_first_failure(tmp_path):
    img = _screenshot(tmp_path, report_docs.doc(attributed=True))
    assert img.size == (WIDTH, HEIGHT)
    assert _count(img, (0, 0, WIDTH, 80), NOT_CERTIFIED_BG) > 2000  # the verdict badge
    red, green = _rgb(svg.FAIL_COLOUR), _rgb(svg.PASS_COLOUR)
    assert _count(img, LEFT, green) > 5000  # a pass bar per area
    assert _count(img, LEFT, red) > 300  # the failing areas' red segments
    assert _count(img, LEFT, FAIL_CELL_BG) > 300  # coloured non-zero failure cells
    assert _count(img, RIGHT, red) > 500  # the first failure card's border


def test_a_clean_run_has_no_red_on_the_first_screen(tmp_path):
    """The pixel checks can fail: a certified run's screenshot has no failure colours."""
    rs = [records.Result(f"conformance/test_{a}.py::test_ok[{i}]", a, "pass")
          for a, n in report_docs.PASSING.items() for i in range(n)]
    doc = report.build(rs, collected=len(rs), header=dict(report_docs.HEADER))
    img = _screenshot(tmp_path, doc)
    assert _count(img, (0, 0, WIDTH, 80), NOT_CERTIFIED_BG) == 0
    assert _count(img, (0, 0, WIDTH, HEIGHT), _rgb(svg.FAIL_COLOUR), tol=2) == 0
    assert _count(img, LEFT, FAIL_CELL_BG, tol=2) == 0
    assert _count(img, LEFT, _rgb(svg.PASS_COLOUR)) > 5000


#: Marker colours painted over what the vendor's first screen must show; a screenshot
#: holding a marker's pixels proves that element is on the first 1280x800 screen.
MARKERS = {"#identity": (0x00, 0xfe, 0x01), "h2#why": (0x01, 0x00, 0xfe),
           "#first-step": (0xfe, 0x00, 0xfd),
           "#root-causes tr.a-plugin:first-of-type, #root-causes tr:nth-child(2).a-plugin":
           (0x02, 0xfd, 0xfe),
           # the end of the root-cause box: a long list scrolls inside it, on the first screen
           "#root-causes-end": (0xfd, 0xfe, 0x03)}
ROOT = Path(__file__).resolve().parent.parent
PLUGIN_BUNDLES = sorted((ROOT / "reports" / "lammps-jax-pjrt-cpu").glob("*/report.json"))[-1:] \
    + sorted((ROOT / "reports" / "cpu").glob("*/report.json"))[-1:]


def _marked(page: str) -> str:
    css = "".join(f"{sel} {{ background: #{''.join(f'{c:02x}' for c in rgb)} !important; }}\n"
                  for sel, rgb in MARKERS.items())
    return page.replace("</head>", f"<style>{css}</style></head>", 1)


@pytest.mark.parametrize("path", PLUGIN_BUNDLES, ids=[p.parent.parent.name for p in
                                                      PLUGIN_BUNDLES])
def test_first_screen_shows_identity_why_not_certified_and_the_root_causes(tmp_path, path):
    """The committed lammps plugin and CPU reports: the plugin identity line, the "Why not
    certified" heading, the first next step, the root-cause list's first row (a plugin
    cause) and the end of its box (a long list scrolls inside the box) are all on the
    first screen."""
    doc = json.loads(path.read_text())
    page = report_html.render(doc)
    title = page[page.index("<h1>"):page.index("</h1>")]
    assert failure_view.title(doc) in html.unescape(title)   # the plugin, named
    img = _screenshot(tmp_path, doc, transform=_marked)
    for sel, rgb in MARKERS.items():
        assert _count(img, (0, 0, WIDTH, HEIGHT), rgb, tol=1) > 500, sel


def test_the_marker_check_fails_when_the_heading_is_off_screen(tmp_path):
    """The pixel check can fail: with 1000px pushed above the heading it is not seen."""
    doc = report_docs.doc(attributed=True)
    img = _screenshot(tmp_path, doc, transform=lambda p: _marked(p).replace(
        '<h2 id="why">', '<div style="height:1000px"></div><h2 id="why">', 1))
    assert _count(img, (0, 0, WIDTH, HEIGHT), MARKERS["h2#why"], tol=1) == 0
