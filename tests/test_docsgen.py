"""Docs that cannot drift: the generated README sections match the committed bundles."""

import json
import shutil
from pathlib import Path

import pytest

import conformance
from conformance import docsgen
from conformance.certification.catalog import profiles
from tests import report_docs

ROOT = Path(conformance.__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT / "reports").is_dir(), reason="not a source checkout")
@pytest.mark.skipif(docsgen.committed_folders(ROOT) is None,
                    reason="not a git checkout: which bundles are committed is unknown, and a "
                    "run's new bundle under reports/ would count")
def test_committed_docs_match_the_committed_bundles():
    """Only the bundles git tracks count: README command 1's new bundle in the same clone
    leaves this green (tests/test_readme_order.py)."""
    assert docsgen.stale(ROOT) == [], "run: python -m conformance.docsgen"


def _project(tmp_path, body="old numbers\n"):
    doc = report_docs.doc()
    doc["requested_platform"] = doc["platform"]["name"] = "cpu"
    doc["profile"] = dict(doc.get("profile") or {"tests": 1}, name=profiles.DEFAULT_PROFILE)
    bundle = tmp_path / "reports" / "cpu" / "20990101T000000Z"
    bundle.mkdir(parents=True)
    (bundle / "report.json").write_text(json.dumps(doc))
    for name, section in (("README.md", "cpu-bundle"), ("reports/README.md", "bundles")):
        (tmp_path / name).write_text(f"intro\n<!-- BEGIN generated: {section} -->\n{body}"
                                     f"<!-- END generated: {section} -->\noutro\n")
    return doc


def test_stale_sections_are_found_and_regenerated(tmp_path, capsys):
    doc = _project(tmp_path)
    assert docsgen.main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "README.md: cpu-bundle" in err and "reports/README.md: bundles" in err
    assert docsgen.main(["--root", str(tmp_path)]) == 0
    assert docsgen.main(["--check", "--root", str(tmp_path)]) == 0
    readme = (tmp_path / "README.md").read_text()
    by = doc["summary"]["by_status"]
    assert f"{by['crash']} crashes" in readme and f"{by['fail_wrong_result']} wrong results" \
        in readme and readme.startswith("intro\n") and readme.endswith("outro\n")
    rows = [ln for ln in readme.splitlines() if ln.startswith("| copy_semantics |")]
    assert rows == [f"| copy_semantics | {sum(doc['areas']['copy_semantics'].values())} | "
                    f"{doc['areas']['copy_semantics']['pass']} | 0 | 0 | "
                    f"{doc['areas']['copy_semantics']['crash']} | 0 | 0 | 0 |"]
    table = (tmp_path / "reports" / "README.md").read_text()
    assert "`cpu/20990101T000000Z/`" in table and "/work/wt" not in table


def test_a_bundle_on_an_older_profile_is_never_named(tmp_path):
    """The README's numbers come only from a bundle on the default profile."""
    doc = _project(tmp_path)
    doc["profile"]["name"] = "v1"
    (tmp_path / "reports" / "cpu" / "20990101T000000Z" / "report.json").write_text(
        json.dumps(doc))
    assert docsgen.main(["--root", str(tmp_path)]) == 0
    readme = (tmp_path / "README.md").read_text()
    assert "No CPU bundle on the default profile" in readme and "20990101T000000Z" not in readme


def _git(root, *args):
    import subprocess

    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True, timeout=60)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_checkout_only_tracked_bundles_count(tmp_path):
    _project(tmp_path)
    assert docsgen.main(["--root", str(tmp_path)]) == 0  # not a checkout yet: all count
    _git(tmp_path, "init", "-q")
    assert docsgen.committed_folders(tmp_path) == set()
    assert docsgen.main(["--check", "--root", str(tmp_path)]) == 1  # the bundle: untracked
    _git(tmp_path, "add", "reports")  # in the index: committed enough to count
    assert docsgen.committed_folders(tmp_path) == {"cpu/20990101T000000Z"}
    assert docsgen.main(["--check", "--root", str(tmp_path)]) == 0
    sub = tmp_path / "reports"  # a folder inside a checkout is not the top of one
    assert docsgen.committed_folders(sub) is None


def test_missing_markers_and_bad_bundles_are_usage_errors(tmp_path, capsys):
    _project(tmp_path)
    (tmp_path / "README.md").write_text("no markers\n")
    assert docsgen.main(["--check", "--root", str(tmp_path)]) == 2
    assert "no '<!-- BEGIN generated: NAME -->'" in capsys.readouterr().err
    _project(tmp_path / "b")
    (tmp_path / "b" / "reports" / "cpu" / "20990101T000000Z" / "report.json").write_text("[]")
    assert docsgen.main(["--check", "--root", str(tmp_path / "b")]) == 2
    assert "not a report document" in capsys.readouterr().err


def test_help_lists_exit_codes_and_every_option():
    import subprocess
    import sys

    from conformance.session import options, progress

    names = [n for n, _ in options.SUITE_OPTIONS]
    progress.add_options(type("G", (), {"addoption": lambda self, n, **k: names.append(n)})())
    out = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--help"],
                         capture_output=True, text=True, timeout=120).stdout
    missing = [n for n in names + ["--hypothesis-profile", "--hypothesis-seed", "--output",
                                   "--workers", "--timeout"] if n not in out]
    assert missing == []
    assert "exit status:" in out and "4 incomplete" in out and "3 malformed" in out
