"""No generated page links nowhere, and no rate rounds to a claim its counts do not make.

- every ``href`` of report.html (rendered from each committed bundle's report.json with
  the current templates) and of every dashboard page is ``http(s)://``, an existing file
  beside the page, or ``#id`` of an element of that page;
- ``percent`` never says 100% unless all pass, nor 0% unless none does;
- an area where every test failed (0%) is drawn on the dashboard's Conformance page.
"""

from __future__ import annotations

import copy
import html.parser
import json
from pathlib import Path

import pytest

from conformance.certification.rendering import report_html
from conformance.certification.compare import scoreboard
from conformance.dashboard import bundle_history
from conformance.dashboard import site

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = sorted(p.parent for p in (ROOT / "reports").glob("*/*/report.json"))


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        if "href" in a:
            self.hrefs.append(a["href"] or "")


def dead_links(page: str, here: Path | None = None) -> list[str]:
    """The hrefs of ``page`` that go nowhere (``here``: the page's folder, for files)."""
    p = _Links()
    p.feed(page)
    dead = []
    for href in p.hrefs:
        if href.startswith(("http://", "https://")):
            continue
        if href.startswith("#"):
            if href[1:] not in p.ids:
                dead.append(href)
            continue
        target = href.split("#", 1)[0]
        if not target or here is None or not (here / target).exists():
            dead.append(href)
    return dead


def test_dead_link_finder_finds_dead_links():
    page = '<a href="#">x</a><a href="#there">y</a><p id="here"></p><a href="#here">z</a>' \
           '<a href="missing.html">m</a><a href="https://github.com/jax-ml/jax">j</a>'
    assert dead_links(page, Path("/nonexistent")) == ["#", "#there", "missing.html"]


@pytest.mark.parametrize("path", BUNDLES, ids=[f"{p.parent.name}/{p.name}" for p in BUNDLES])
def test_report_html_has_no_dead_links(path):
    doc = json.loads((path / "report.json").read_text())
    page = report_html.render(doc)
    assert dead_links(page, path) == []


def test_report_html_not_reported_yet_is_plain_text():
    path = next((p for p in BUNDLES if json.loads((p / "report.json").read_text())["failures"]),
                None)
    if path is None:
        pytest.skip("no committed bundle with failures")
    doc = copy.deepcopy(json.loads((path / "report.json").read_text()))
    doc["failures"][0]["defect"] = {"id": "d", "upstream": "not reported yet",
                                    "summary": "a summary here"}
    page = report_html.render(doc)
    assert "(not reported yet)" in page
    assert dead_links(page, path) == []


@pytest.mark.parametrize("passed, total, text", [
    (206, 207, "99.5%"), (0, 18, "0%"), (18, 18, "100%"), (1, 1000, "0.1%"),
    (999999, 1000000, "99.9999%"), (1, 3, "33%"),
])
def test_percent_never_claims_all_or_none(passed, total, text):
    assert scoreboard.percent(passed, total) == text


@pytest.mark.parametrize("passed, total", [(1, 0), (-1, 3), (4, 3)])
def test_percent_rejects_bad_counts(passed, total):
    with pytest.raises(ValueError, match="passed="):
        scoreboard.percent(passed, total)


def test_a_zero_percent_area_is_drawn():
    import datetime
    day = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    b = [bundle_history.Bundle("cpu / built-in", Path("x"), day, "jaxlib 0.12.0.1",
                               {"dead": (0, 5), "fine": (5, 5), "half": (1, 2)})]
    _, legend = site._conformance_chart(b)
    names = [n for n, _ in legend]
    assert "dead" in names and "half" in names and "fine" not in names
    assert names.index("dead") < names.index("half")  # the worst area first
    assert b[0].share("dead") == "0%" and b[0].share() == "50%"
