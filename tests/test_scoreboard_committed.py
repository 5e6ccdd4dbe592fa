"""The committed scoreboard (reports/scoreboard.html and the table in reports/README.md)
equals a fresh `pjrt-conformance scoreboard` run on the committed bundles, as the README
says it is made; a stale copy fails here. Only the bundles git tracks count: a bundle the
main job just wrote into reports/ is not part of the committed scoreboard."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["scoreboard", "reports/", "--markdown", "reports/README.md",
           "--html", "reports/scoreboard.html"]


def _tracked_reports() -> list[str]:
    proc = subprocess.run(["git", "ls-files", "reports"], cwd=ROOT, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout: which bundles are committed is unknown")
    return proc.stdout.split()


def _fresh(tmp_path: Path) -> Path:
    for rel in _tracked_reports():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *COMMAND], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return tmp_path / "reports"


def test_the_committed_scoreboard_is_a_fresh_run_on_the_committed_bundles(tmp_path):
    fresh = _fresh(tmp_path)
    for name in ("scoreboard.html", "README.md"):
        committed = (ROOT / "reports" / name).read_text(encoding="utf-8")
        assert (fresh / name).read_text(encoding="utf-8") == committed, (
            f"reports/{name} is stale: run `pjrt-conformance {' '.join(COMMAND)}` and "
            "commit the result")


def test_the_check_fails_on_a_stale_copy(tmp_path):
    fresh = _fresh(tmp_path)
    html = (fresh / "scoreboard.html").read_text(encoding="utf-8")
    stale = html.replace(">not certified<", ">certified<", 1)
    assert stale != html   # a changed verdict is a different page
