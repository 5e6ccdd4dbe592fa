"""``pjrt-conformance scoreboard``: bundles built by the real report code, the newest per
backend, attribution split, failed attempts, and bad input (no bundles, malformed or
tampered report.json, bad markers) as clear errors, never a traceback."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.certification.results import attempt
from conformance.certification.bundle import bundle_files
from conformance.certification.catalog import profiles
from conformance.certification.verdict import report
from conformance.certification.compare import scoreboard
from tests.bundle_helpers import HEADER

ROOT = Path(__file__).resolve().parent.parent

LIB = "/venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"


def _bundle(root, folder, stamp, *, library=None, started="2026-11-22T00:00:00+00:00",
            failing=()):
    """A bundle of the default profile on 1 device written by report.build/bundle.write;
    tests whose profile id is in ``failing`` are fail_error."""
    prof = profiles.load(profiles.DEFAULT_PROFILE)
    header = copy.deepcopy(HEADER)
    header["started_utc"] = started
    if library:
        header["platform"].update(loaded={"how": "PJRT C API plugin", "library_path": library},
                                  pjrt_c_api_version=[0, 115],
                                  framework_pjrt_c_api_version=[0, 112])
    results = [report.Result("conformance/" + pid.replace("{device}", "cpu:0"),
                             report.area_of("conformance/" + pid),
                             "fail_error" if pid in failing else "pass", tier=tier,
                             message="boom" if pid in failing else "")
               for pid, tier in sorted(prof.tests.items())]
    doc = report.build(results, collected=len(results), header=header, profile=prof,
                       device_count=1)
    return bundle_files.write(doc, root / folder / stamp).parent


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.cli", "scoreboard", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def reports(tmp_path):
    first = sorted(profiles.load(profiles.DEFAULT_PROFILE).tests)[0]
    _bundle(tmp_path, "cpu", "1")
    _bundle(tmp_path, "lammps", "old", library=LIB, failing=(first,))
    _bundle(tmp_path, "lammps", "new", library=LIB, started="2026-11-23T00:00:00+00:00")
    return tmp_path


def test_newest_bundle_per_backend_with_rates_and_versions(reports):
    rows = scoreboard.collect(reports)
    assert [r.backend for r in rows] == ["cpu / built-in", "cpu / lammps-jax-pjrt-cpu"]
    builtin, plugin = rows
    assert plugin.source.endswith("new") and plugin.c_api == "0.115 (framework 0.112)" \
        and builtin.c_api == "built-in"
    assert all(not r.problem and r.verdict == "plugin: certified | stack findings: none" for r in rows)
    assert all(p == t and t > 0 for p, t in plugin.areas.values())
    md = scoreboard.render_markdown(rows)
    ok = "plugin: certified \\| stack findings: none"  # a table cell escapes "|"
    assert f"| plugin verdict | {ok} | {ok} |" in md
    assert "n/a (no attribution in bundle)" in md and "| jaxlib | 0.10.2 | 0.10.2 |" in md
    jax = HEADER["environment"]["jax"]
    assert f"| jax | {jax} | {jax} |" in md and "| PJRT C API (plugin, framework) | built-in | " \
        "0.115 (framework 0.112) |" in md and "| profile | " in md


def test_older_failing_bundle_shows_when_it_is_the_newest(reports, tmp_path):
    tests = profiles.load(profiles.DEFAULT_PROFILE).tests
    first = next(pid for pid in sorted(tests) if tests[pid] == "core")
    _bundle(reports, "lammps", "newest", library=LIB, started="2026-11-24T00:00:00+00:00",
            failing=(first,))
    plugin = scoreboard.collect(reports)[1]
    assert plugin.verdict == "plugin: not certified | stack findings: none"
    assert any(p < t for p, t in plugin.areas.values())


def test_plugin_verdict_and_attribution_split_when_present():
    doc = {"verdict": "not certified", "plugin_verdict": {"verdict": "certified"}}
    assert scoreboard._verdict(doc) == "certified"
    results = [{"status": "pass"}, {"status": "crash", "attribution": "framework"},
               {"status": "fail_error", "attribution": "plugin"}, {"status": "skipped"},
               {"status": "not_supported"}, {"status": "timeout"}]
    # a skip or a gracefully unsupported feature is no failure: it is not "unattributed"
    assert scoreboard._split(results) == {"plugin": 1, "framework": 1, "suite": 0,
                                          "unattributed": 1}
    assert scoreboard._split([{"status": "crash"}]) is None
    assert scoreboard.split_text(scoreboard._split(results)) == \
        "plugin 1, framework 1, unattributed 1"


def test_tampered_and_malformed_bundles_are_marked_not_intact(reports):
    doc = json.loads((reports / "cpu" / "1" / "report.json").read_text())
    doc["verdict"] = "certified"
    doc["summary"]["collected"] += 1
    (reports / "cpu" / "1" / "report.json").write_text(json.dumps(doc))
    (reports / "broken" / "x").mkdir(parents=True)
    (reports / "broken" / "x" / "report.json").write_text("{not json")
    rows = {r.backend: r for r in scoreboard.collect(reports)}
    assert rows["cpu / built-in"].problem.startswith("not intact: ")
    assert rows["? (broken)"].problem.startswith("not intact: report.json is malformed")
    proc = _cli(str(reports))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert "not intact" in proc.stdout and "? (broken)" in proc.stderr


def test_failed_attempt_without_bundle_gets_a_row(reports):
    rec = attempt.record(backend="xla-cpu-pjrt", package="xla-cpu-pjrt", exit_code=2,
                         seconds=3, error_text="traceback...\nPluginLoadError: C API 0.81 "
                                               "is too old", bundle=str(reports / "none"))
    (reports / "xla-cpu-pjrt").mkdir()
    (reports / "xla-cpu-pjrt" / "attempt.json").write_text(json.dumps(rec))
    (reports / "bad").mkdir()
    (reports / "bad" / "attempt.json").write_text("[]")
    rows = {r.backend: r for r in scoreboard.collect(reports)}
    row = rows["cpu / xla-cpu-pjrt"]
    assert row.verdict == "no bundle" and "exit 2" in row.problem and "0.81" in row.problem
    assert rows["? (bad)"].problem.startswith("malformed attempt record")
    with pytest.raises(ValueError, match="'seconds'"):
        attempt.record(backend="x", exit_code=0, seconds=-1)


def test_markdown_between_markers_and_self_contained_html(reports, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Reports\n\nbefore\n{scoreboard.BEGIN}\nSTALE-TABLE\n{scoreboard.END}\nafter\n")
    html = tmp_path / "board.html"
    proc = _cli(str(reports), "--markdown", str(readme), "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    text = readme.read_text()
    assert "STALE-TABLE" not in text and "before" in text and "after" in text
    assert "cpu / lammps-jax-pjrt-cpu" in text.split(scoreboard.BEGIN)[1]
    page = html.read_text()
    assert "cpu / lammps-jax-pjrt-cpu" in page and '<td class="certified">certified' in page
    assert not any(s in page for s in ("<script", "<link", "src=", "http://", "https://"))
    readme.write_text(f"{scoreboard.END}\n{scoreboard.BEGIN}\n")
    assert _cli(str(reports), "--markdown", str(readme)).returncode == 2


@pytest.mark.parametrize("make", [lambda p: p, lambda p: p / "missing"])
def test_no_bundles_is_a_usage_error(tmp_path, make):
    proc = _cli(str(make(tmp_path)))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_cells_are_coloured_by_pass_rate_and_never_round_to_all():
    from conformance.certification.compare.scoreboard import Row
    r = Row(backend="cpu / built-in", source="x",
            areas={"dead": (0, 18), "almost": (206, 207), "half": (9, 18), "all": (5, 5)})
    assert [r.band(a) for a in ("dead", "almost", "half", "all", "absent")] == \
        ["low", "high", "mid", "full", "none"]
    assert r.rate("almost") == "206/207 (99.5%)" and r.rate("dead") == "0/18 (0%)"


def test_one_column_per_jaxlib_release_with_profile_and_report_links(tmp_path):
    import json as _json
    import shutil as _shutil
    from conformance.certification.compare import scoreboard
    src = sorted((ROOT / "reports" / "cpu").glob("*/report.json"))[-1].parent
    for release in ("0.10.2", "0.12.0.1"):
        dst = tmp_path / "reports" / "cpu" / f"r{release}"
        _shutil.copytree(src, dst)
        doc = _json.loads((dst / "report.json").read_text())
        doc["environment"]["jaxlib"] = release
        (dst / "report.json").write_text(_json.dumps(doc))
    rows = scoreboard.collect(tmp_path / "reports")
    assert [r.jaxlib for r in rows] == ["0.10.2", "0.12.0.1"]  # release order
    assert all(r.profile.startswith("v") or " v" in r.profile for r in rows)
    page = scoreboard.render_html(rows, tmp_path / "reports")
    assert 'href="cpu/r0.10.2/report.html"' in page and 'href="cpu/r0.12.0.1/report.html"' in page


def test_one_pass_rate_for_the_plugin_column_and_the_areas_and_it_is_stated():
    """Skips and not_supported are left out of the rate; framework failures count against
    it (the old "plugin pass rate" counted them as passes, the area cells did not)."""
    from conformance.certification.verdict import pass_rate
    counts = {"pass": 6, "crash": 1, "fail_error": 1, "skipped": 3, "not_supported": 2}
    assert pass_rate.pass_rate(counts) == (6, 8) and pass_rate.text(counts) == "6/8 (75%)"
    assert pass_rate.text({"skipped": 2}) == "n/a (none counted)"
    with pytest.raises(ValueError):
        pass_rate.pass_rate({"pass": -1})
    results = [{"status": s, "attribution": a} for s, a in (
        ("pass", None), ("crash", "framework"), ("fail_error", "plugin"),
        ("skipped", None), ("not_supported", None))]
    assert pass_rate.text(pass_rate.counts_of(results)) == "1/3 (33%)"


def test_rates_column_heads_and_definition_on_both_pages(reports):
    tests = profiles.load(profiles.DEFAULT_PROFILE).tests
    first = next(pid for pid in sorted(tests) if tests[pid] == "core")
    _bundle(reports, "cpu", "2", started="2026-11-24T00:00:00+00:00", failing=(first,))
    rows = scoreboard.collect(reports)
    builtin = rows[0]
    area = next(a for a, (p, t) in builtin.areas.items() if p < t)
    assert builtin.pass_rate.startswith(f"{builtin.tests - 1}/{builtin.tests} (")
    md = scoreboard.render_markdown(rows)
    assert f"**cpu / built-in** ({profiles.DEFAULT_PROFILE})" in md
    assert "| pass rate | " in md and "plugin pass rate" not in md
    assert "Pass rate = passed / (tests run - not supported - skipped)" in md
    page = scoreboard.render_html(rows)
    assert f"&middot; {profiles.DEFAULT_PROFILE}</th>" in page
    assert "Pass rate = passed / (tests run - not supported - skipped)" in page
    assert builtin.rate(area).startswith(f"{builtin.areas[area][0]}/")


def test_bundles_under_archive_are_ignored(reports):
    import shutil
    from conformance import docsgen
    before = [r.source for r in scoreboard.collect(reports)]
    (reports / "archive").mkdir()
    shutil.copytree(reports / "lammps" / "new", reports / "archive" / "lammps" / "newer")
    shutil.copytree(reports / "cpu" / "1", reports / "archive" / "1")
    doc = json.loads((reports / "archive" / "1" / "report.json").read_text())
    doc["started_utc"] = "2027-01-01T00:00:00+00:00"
    (reports / "archive" / "1" / "report.json").write_text(json.dumps(doc))
    assert [r.source for r in scoreboard.collect(reports)] == before
    assert not any(b.folder.startswith("archive/") for b in docsgen.bundles(reports))
    assert scoreboard.archived(reports / "archive" / "1" / "report.json", reports)
    assert not scoreboard.archived(reports / "cpu" / "1" / "report.json", reports)


def _loaded(library):
    return {"platform": {"name": "cpu", "loaded": {"library_path": library,
                                                   "library_sha256": "0" * 64}}}


@pytest.mark.parametrize("library,key", [
    ("/v/lib/python3.11/site-packages/xla_plugins/xla_cpu_pjrt/libpjrt_c_api.so",
     "cpu / xla-cpu-pjrt"),
    ("/v/lib/python3.11/site-packages/fastatomstruct_xla_cpu/libpjrt_cpu.so",
     "cpu / fastatomstruct-xla-cpu"),
    (LIB, "cpu / lammps-jax-pjrt-cpu"),
    ("/work/build/pluginA/libA.so", "cpu / libA"),
    ("/work/build/pluginB/libB.so", "cpu / libB"),
])
def test_a_report_in_memory_and_its_bundle_have_one_backend_key(library, key):
    from conformance.certification import local_paths
    doc = _loaded(library)
    on_disk = local_paths.for_bundle(doc)
    assert scoreboard.backend_key(doc) == scoreboard.backend_key(on_disk) == key
    # a bundle that states the package without its locator keys the same
    del on_disk["platform"]["loaded"]["library_locator"]
    assert scoreboard.backend_key(on_disk) == key


def test_two_local_plugins_outside_site_packages_are_two_backends(tmp_path):
    _bundle(tmp_path, "a", "1", library="/work/build/pluginA/libA.so")
    _bundle(tmp_path, "b", "1", library="/work/build/pluginB/libB.so")
    assert sorted(r.backend for r in scoreboard.collect(tmp_path)) == ["cpu / libA",
                                                                      "cpu / libB"]
