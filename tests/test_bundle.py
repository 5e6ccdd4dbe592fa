"""Report bundles: written files, ``verify`` (tampering, truncation, counts), ``diff``,
crash and hang isolation under xdist, and the HTML page in headless Chromium."""

import json
import shutil
import subprocess

import pytest

from conformance.certification.bundle import bundle_files
from conformance.certification.compare import diff
from conformance.certification.catalog import profiles
from tests.bundle_helpers import cli, crafted, rewrite
from tests.mutants.runner import pytester_run


def test_crafted_certified_bundle_verifies(tmp_path):
    path = crafted(tmp_path)
    assert sorted(p.name for p in path.iterdir()) == sorted(
        bundle_files.FILES + (bundle_files.MANIFEST,))
    result = bundle_files.verify(path)
    assert result.valid and result.verdict == "certified" and \
        result.profile == profiles.DEFAULT_PROFILE, result.problems
    proc = cli("verify", str(path))
    assert proc.returncode == 0 and "intact; verdict CERTIFIED (profile " in proc.stdout


def test_tampered_file_is_detected(tmp_path):
    path = crafted(tmp_path)
    html = (path / "report.html").read_text().replace("CERTIFIED", "CERTIFIED!")
    (path / "report.html").write_text(html)
    proc = cli("verify", str(path))
    assert proc.returncode == 3 and "report.html was modified" in proc.stdout


def test_extra_and_missing_files_are_detected(tmp_path):
    path = crafted(tmp_path)
    (path / "notes.txt").write_text("x")
    (path / "junit.xml").unlink()
    problems = bundle_files.verify(path).problems
    assert "notes.txt is not listed in MANIFEST.sha256" in problems
    assert "junit.xml is listed in MANIFEST.sha256 but missing" in problems


def test_truncated_run_is_detected(tmp_path):
    path = crafted(tmp_path)
    rewrite(path, lambda d: d["results"].pop())          # a result silently dropped
    problems = " ".join(bundle_files.verify(path).problems)
    assert "counts disagree" in problems and "differs from the verdict recomputed" in problems
    assert "missing" in problems


def test_count_mismatch_is_detected(tmp_path):
    path = crafted(tmp_path)

    def inflate(d):
        d["summary"]["by_status"]["pass"] += 5
    rewrite(path, inflate)
    assert any("by_status['pass']" in p for p in bundle_files.verify(path).problems)


def test_forged_verdict_is_detected(tmp_path):
    pid = "test_lifecycle.py::test_use_after_delete_raises[is_ready]"
    path = crafted(tmp_path, **{pid: "crash"})

    def forge(d):
        d["verdict"], d["verdict_reasons"] = "certified", []
    rewrite(path, forge)
    result = bundle_files.verify(path)
    assert not result.valid and any("recomputed" in p for p in result.problems)


def test_schema_violation_is_detected(tmp_path):
    path = crafted(tmp_path)
    rewrite(path, lambda d: d["results"][0].update(status="passed-ish"))
    problems = bundle_files.verify(path).problems
    assert any("does not match schema 3 at results/0/status" in p for p in problems), problems


def test_profile_mismatch_is_detected(tmp_path):
    path = crafted(tmp_path)
    rewrite(path, lambda d: d["profile"].update(sha256="f" * 64))
    assert any("differs from the shipped one" in p for p in bundle_files.verify(path).problems)


def test_not_a_bundle(tmp_path):
    assert cli("verify", str(tmp_path / "none")).returncode == 3


def test_diff_of_two_crafted_bundles(tmp_path):
    crash = "test_lifecycle.py::test_use_after_delete_raises[is_ready]"
    wrong = "test_transfer.py::test_round_trip_bit_exact[{device}-int32]"
    old = crafted(tmp_path, "old", **{crash: "crash"})
    new = crafted(tmp_path, "new", **{wrong: "fail_wrong_result"})
    changes = diff.compare(diff.load(old), diff.load(new))
    assert [c[0] for c in changes["new_failures"]] == [
        "conformance/" + wrong.replace("{device}", "cpu:0")]
    assert changes["fixes"] == [("conformance/" + crash, "crash", "pass")]
    assert ("verdict", "not certified", "not certified") not in changes["environment"]
    proc = cli("diff", str(old), str(new))
    assert proc.returncode == 1 and "New failures (1):" in proc.stdout and "Fixes (1):" in \
        proc.stdout    # exit 1: a regression


def test_diff_reports_changed_environment(tmp_path):
    old, new = crafted(tmp_path, "old"), crafted(tmp_path, "new")
    rewrite(new, lambda d: d["environment"].update(jaxlib="0.11.0"))
    changes = diff.compare(diff.load(old), diff.load(new))
    assert ("environment.jaxlib", "0.10.2", "0.11.0") in changes["environment"]


def test_crash_and_hang_cost_one_test_each(pytester):
    pytester.makepyfile(test_iso="""
        import os, signal, time

        def test_ok_1():
            pass

        def test_kills_its_worker():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_hangs():
            time.sleep(60)

        def test_ok_2():
            pass
    """)
    out = pytester.path / "rep"
    pytester_run(pytester, "-n", "2", "--timeout=3", f"--report-dir={out}",
                 "--profile=none", "-p", "no:cacheprovider")
    doc = json.loads((out / "report.json").read_text())
    status = {r["nodeid"].split("::")[1]: r["status"] for r in doc["results"]}
    assert status == {"test_ok_1": "pass", "test_kills_its_worker": "crash",
                      "test_hangs": "timeout", "test_ok_2": "pass"}, status


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run "
                                             "installs it when apt-get is available)")
def test_html_report_renders_in_headless_chromium(tmp_path):
    pid = "test_transfer.py::test_round_trip_bit_exact[{device}-int32]"
    path = crafted(tmp_path, **{pid: "fail_wrong_result"})
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--disable-component-update",
                           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                           "--dump-dom", (path / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'id="verdict"' in dom and "NOT CERTIFIED" in dom
    assert "test_round_trip_bit_exact[cpu:0-int32]" in dom and "fail_wrong_result" in dom
