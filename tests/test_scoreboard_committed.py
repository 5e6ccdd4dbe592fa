"""The committed scoreboard (reports/scoreboard.html and the table in reports/README.md)
equals a fresh `pjrt-conformance scoreboard` run on the committed bundles, as the README
says it is made; a stale copy fails here. Every bundle it shows is on the default profile
and verifies signed against reports/allowed_signers (bundles moved to reports/archive/
are not shown). Only the bundles git tracks count: a bundle the
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


def _shown_bundles(tmp_path: Path) -> list[Path]:
    """The bundles the committed scoreboard shows (``pjrt-conformance scoreboard
    reports/`` on the tracked tree: the newest per backend and jaxlib release, archive/
    ignored), as paths in this checkout. README command 1's new bundle in a clone is not
    committed: it is neither shown nor judged here."""
    from conformance.certification.compare import scoreboard

    for rel in _tracked_reports():   # skips outside a git checkout
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    return [ROOT / Path(r.source).relative_to(tmp_path)
            for r in scoreboard.collect(tmp_path / "reports")
            if (Path(r.source) / "report.json").is_file()]


def test_every_bundle_on_the_scoreboard_is_on_the_default_profile(tmp_path):
    import json

    from conformance.certification.catalog import profiles

    off = []
    for path in _shown_bundles(tmp_path):
        prof = json.loads((path / "report.json").read_text()).get("profile") or {}
        if prof.get("name") != profiles.DEFAULT_PROFILE:
            off.append(f"{path.relative_to(ROOT)}: profile {prof.get('name') or 'none'}")
    assert not off, (f"bundles on the scoreboard not on the default profile "
                     f"{profiles.DEFAULT_PROFILE} (re-run them, or move them to "
                     f"reports/archive/): {off}")


def test_every_bundle_on_the_scoreboard_verifies_against_the_allowed_signers(tmp_path):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed: signatures cannot be checked")
    bad = []
    for path in _shown_bundles(tmp_path):
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", "verify", str(path),
                               "--allowed-signers", str(ROOT / "reports" / "allowed_signers")],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode not in (0, 1) or "signature: verified" not in proc.stdout:
            bad.append(f"{path.relative_to(ROOT)}: exit {proc.returncode}: "
                       f"{(proc.stdout + proc.stderr).strip().splitlines()[-1:]}")
    assert not bad, f"bundles on the scoreboard that do not verify signed: {bad}"
