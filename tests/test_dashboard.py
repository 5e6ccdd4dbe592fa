"""``pjrt-conformance dashboard``: the site from real asv results (tests/dashboard_fixture,
made by its make.sh with a real asv run) and a committed bundle; offline; bad input."""

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from conformance.certification.verdict import pass_rate
from conformance.dashboard import asv_results, charts, history, site
from tests.bundle_helpers import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "dashboard_fixture" / "results"
# The newest committed bundle of a plugin (the bundles are regenerated on each new profile).
BUNDLE = max((ROOT / "reports" / "xla-cpu-pjrt").glob("*/report.json"), default=ROOT / "x").parent
LIMITS = {"schema": "pjrt-conformance/device-limits/1", "device": "NVIDIA H100",
          "platform": "cuda", "jax": "0.11.2", "jaxlib": "0.11.2",
          "measured_at": "2026-11-23T10:00:00+00:00",
          "rows": [{"name": "h2d", "unit": "GB/s", "value": 21.5, "reference": "link peak",
                    "reference_value": 25.0, "ratio": 0.86}]}


def _results(tmp_path):
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    return dst


def _reports(tmp_path, broken=True):
    reports = tmp_path / "reports"
    shutil.copytree(BUNDLE, reports / "xla-cpu-pjrt" / BUNDLE.name)
    if broken:
        (reports / "cut" / "20261123T000000Z").mkdir(parents=True)
        (reports / "cut" / "20261123T000000Z" / "report.json").write_text('{"schema_ver')
    return reports


def _site(capsys, tmp_path, *extra):
    out = tmp_path / "site"
    res = main(capsys, "dashboard", "--asv-results", _results(tmp_path), "--out", out, *extra)
    return res, out


def test_site_shows_every_benchmark_ratio_and_version(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no default benchmarks/gpu: no limits page
    res, out = _site(capsys, tmp_path, "--bundles", _reports(tmp_path, broken=False))
    assert res.returncode == 0, res.stderr
    index_json = json.loads((FIXTURE / "benchmarks.json").read_text())
    names = [n for n in index_json if n != "version"]
    index = (out / "commits.html").read_text()
    for name in names:
        assert f"<code>{name}</code>" in index
    runs = sorted(FIXTURE.glob("fixture-host/*-existing-*.json"))
    assert index.count("<title>") - 1 == sum(  # one tooltip per point, and the page title
        len(v[0]) for p in runs for v in json.loads(p.read_text())["results"].values())
    assert all(f"commit {json.loads(p.read_text())['commit_hash'][:12]}" in index
               for p in runs)  # the commit in the tooltips
    ratios = (out / "ratios.html").read_text()
    ratio_names = [n for n in names if index_json[n]["unit"] == "ratio"]
    assert ratio_names and all(n in ratios for n in ratio_names)
    assert 'class="reference"' in ratios and "np.copyto" in ratios  # reference named
    assert not any(n in ratios for n in names if n not in ratio_names)
    versions = (out / "versions.html").read_text()
    assert "backend built-in" in versions and "backend plugin-a" in versions
    freeze = (FIXTURE / "fixture-host" / (runs[0].name[:8] + "-pip-freeze.txt")).read_text()
    jaxlib = re.search(r"^jaxlib==(\S+)", freeze, re.M).group(1)
    assert f"jaxlib {jaxlib}" in versions  # the environment named by its versions
    machine = json.loads((FIXTURE / "fixture-host" / "machine.json").read_text())
    for page in out.glob("*.html"):
        text = page.read_text()
        assert "Generated " in text
        assert (machine["cpu"] in text) == (page.name != "conformance.html"), page.name
        assert all(f'href="{p}"' in text for p in ("index.html", "ratios.html", "releases.html",
                                                   "commits.html", "versions.html",
                                                   "conformance.html"))
        assert site.external_references(text) == [], page.name
    assert not (out / "limits.html").exists()  # no limits files: no page


def test_conformance_history_from_bundles(capsys, tmp_path):
    res, out = _site(capsys, tmp_path, "--bundles", _reports(tmp_path))
    assert res.returncode == 3  # the site is written, the broken bundle is reported
    assert "cut" in res.stderr and "Traceback" not in res.stderr
    page = html.unescape((out / "conformance.html").read_text())
    assert "not loaded" in page and "20261123T000000Z" in page
    doc = json.loads((BUNDLE / "report.json").read_text())
    for area, counts in doc["areas"].items():   # the one pass-rate definition
        passed, total = pass_rate.pass_rate(counts)
        if total:
            assert f"{passed}/{total} ({pass_rate.percent(passed, total)})" in page, area
    assert f"C API {'.'.join(map(str, doc['platform']['pjrt_c_api_version']))}" in page


def test_limits_page_and_bad_limits_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the repository's reports/: only the limits matter here
    limits = tmp_path / "gpu"
    limits.mkdir()
    (limits / "h100.json").write_text(json.dumps(LIMITS))
    res, out = _site(capsys, tmp_path, "--limits", limits)
    assert res.returncode == 0, res.stderr
    page = (out / "limits.html").read_text()
    assert "NVIDIA H100" in page and "link peak" in page and "0.860" in page
    # the machine named over the limits is the device of the file, not the asv machine
    asv_machine = json.loads((FIXTURE / "fixture-host" / "machine.json").read_text())
    assert "Machine <b>NVIDIA H100</b>" in page and asv_machine["machine"] not in page
    assert f"Machine <b>{asv_machine['machine']}</b>" in (out / "index.html").read_text()
    assert 'href="limits.html"' in (out / "index.html").read_text()
    bad = dict(LIMITS, rows=[dict(LIMITS["rows"][0], value="fast")])
    (limits / "h100.json").write_text(json.dumps(bad))
    res = main(capsys, "dashboard", "--asv-results", FIXTURE, "--limits", limits,
               "--out", tmp_path / "o2")
    assert res.returncode == 3 and "h100.json" in res.stderr and "'value'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("case", ["missing", "empty", "no-runs"])
def test_no_results_is_a_usage_error(capsys, tmp_path, case):
    target = tmp_path / "r"
    if case != "missing":
        target.mkdir()
    if case == "no-runs":
        shutil.copy(FIXTURE / "benchmarks.json", target)
    res = main(capsys, "dashboard", "--asv-results", target, "--out", tmp_path / "o")
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and str(target) in res.stderr
    assert not (tmp_path / "o").exists()


def _first_run(results):
    return sorted(results.glob("fixture-host/*-existing-*.json"))[0]


@pytest.mark.parametrize("damage, expect", [
    (lambda p: p.write_text(p.read_text()[:200]), "not readable JSON"),
    (lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "results": []})),
     "'results'"),
    (lambda p: p.write_text(p.read_text().replace("bench_tiny.Copy.time_copy",
                                                  "bench_gone.Old.time_x")),
     "'bench_gone.Old.time_x' is not in benchmarks.json"),
])
def test_a_bad_results_file_is_named_and_skipped(capsys, tmp_path, monkeypatch, damage, expect):
    monkeypatch.chdir(tmp_path)  # not the repository's reports/ (6 bundles verified each time)
    results = _results(tmp_path)
    bad = _first_run(results)
    damage(bad)
    res = main(capsys, "dashboard", "--asv-results", results, "--out", tmp_path / "o")
    assert res.returncode == 3, res.stderr
    assert expect in res.stderr and bad.name in res.stderr and "Traceback" not in res.stderr
    index = (tmp_path / "o" / "index.html").read_text()
    assert "skipped:" in index and bad.name in index  # the page says what is missing


def test_malformed_benchmarks_json_is_exit_3_and_nothing_written(capsys, tmp_path):
    results = _results(tmp_path)
    doc = json.loads((results / "benchmarks.json").read_text())
    del doc["bench_tiny.Copy.time_copy"]["unit"]
    (results / "benchmarks.json").write_text(json.dumps(doc))
    res = main(capsys, "dashboard", "--asv-results", results, "--out", tmp_path / "o")
    assert res.returncode == 3 and "missing key 'unit'" in res.stderr
    assert "benchmarks.json" in res.stderr and not (tmp_path / "o").exists()


def test_offline_check_catches_network_references():
    for page in ['<script src="https://cdn.jsdelivr.net/npm/jquery.min.js"></script>',
                 "<link rel=stylesheet href='http://x.org/flot.css'>",
                 '<img src="//cdn.example.com/a.png">',
                 '<div style="background: url(https://x.org/b.png)"></div>',
                 "<style>@import 'https://fonts.example.com/f.css';</style>"]:
        assert site.external_references(page), page
    ok = ('<svg xmlns="http://www.w3.org/2000/svg"></svg><a href="ratios.html">r</a>'
          '<p>see https://github.com/jax-ml/jax</p>')
    assert site.external_references(ok) == []


def test_a_page_with_a_cdn_asset_is_not_written(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the repository's reports/: only the page matters here
    real = site.pages

    def with_cdn(inputs, out_dir=None):
        out = real(inputs, out_dir)
        out["index.html"] = out["index.html"].replace(
            "</head>", '<script src="https://cdn.example.com/flot.js"></script></head>')
        return out

    monkeypatch.setattr(site, "pages", with_cdn)
    res, out = _site(capsys, tmp_path)
    assert res.returncode == 3 and "https://cdn.example.com/flot.js" in res.stderr
    assert not out.exists()


def test_history_series_per_environment_and_era(tmp_path):
    """A second environment (the fixture's run relabelled as another jaxlib) and a
    second machine become their own series; the versions view has a column each."""
    results = _results(tmp_path)
    src = _first_run(results)
    doc = json.loads(src.read_text())
    doc["requirements"] = {"jaxlib": "0.10.0"}
    (src.parent / "other-env.json").write_text(json.dumps(doc))
    loaded = asv_results.load(results)
    chart_list = history.build([loaded])
    bench = next(c for c in chart_list if not c.is_ratio)
    eras = {label.rsplit("backend ", 1)[1] for label in bench.series}
    assert eras == {"built-in", "plugin-a"}
    assert any(label.startswith("jaxlib 0.10.0 |") for label in bench.series)
    assert len(bench.series) == 2 * len(eras)
    _, labels, rows = history.versions(chart_list)[0]
    assert len(labels) == 4 and all(len(r.newest()) == 4 for r in rows)


def test_chart_units_reference_and_empty_chart():
    import datetime
    day = datetime.datetime(2026, 11, 20, tzinfo=datetime.timezone.utc)
    svg = charts.line_chart([("a", [(day, 2e-5, "commit abc")])], unit="seconds")
    assert ">us<" in svg and charts.PALETTE[0] in svg and "(commit abc)</title>" in svg
    assert charts.fmt(1.5e-3, "seconds") == "1.5 ms" and charts.fmt(3 << 20, "bytes") == \
        "3 MiB"
    ratio = charts.line_chart([("a", [(day, 0.5)])], unit="ratio", reference=1.0)
    assert 'class="reference"' in ratio
    empty = charts.line_chart([("a", [])], unit="seconds")
    assert "no data" in empty and not any(c in empty for c in charts.PALETTE)
    with pytest.raises(ValueError, match="finite"):
        charts.line_chart([("a", [(day, float("nan"))])], unit="seconds")
