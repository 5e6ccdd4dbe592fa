"""The README's two commands, run in their order in one clone, do not trip each other.

README command 1 (``pjrt-conformance run --platform cpu -n auto``) writes its bundle
into the clone, ``reports/cpu/<UTC stamp>/`` (the default ``--output``); README command
2 then runs the self-tests in the same clone, among them
``tests/test_docsgen.py::test_committed_docs_match_the_committed_bundles``. That check
used to read every ``reports/*/*/report.json`` on disk. Command 1's bundle has the
newest stamp, so it became "the committed CPU bundle" of the README's generated section
and a new row of ``reports/README.md``'s table: both sections differed from the
committed text, and command 2 failed on a clone where nothing was wrong. ``.ci/run``
hid it by moving the bundle out of the tree between the two commands; a user following
the README had no such step. Now the check counts only the bundles git tracks
(:func:`conformance.docsgen.committed_folders`), and ``.ci/run`` leaves the bundle
where command 1 wrote it.

The test below does this cheaply: a temporary clone of this repository's HEAD (only
``README.md`` and ``reports/`` checked out: all the check reads), a committed CPU bundle
copied to a new, untracked stamp (command 1's effect, without the minutes of the run),
then the check. It passes; the same clone counted the old way (every bundle on disk:
what :func:`conformance.docsgen.sections` does where it knows of no commit, forced here
by making :func:`~conformance.docsgen.committed_folders` answer None) is stale in both
sections, which is the failure command 2 had.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import docsgen

ROOT = Path(__file__).resolve().parent.parent
#: A stamp newer than any committed one: command 1 runs after the last commit.
NEW_STAMP = "29991231T235959Z"

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(docsgen.committed_folders(ROOT) is None,
                       reason="not a git checkout of the project"),
]


def _clone(tmp_path: Path) -> Path:
    """A clone of ROOT's HEAD with README.md and reports/ checked out (its index holds
    those paths, as a full checkout's would)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--local", "--no-checkout", str(ROOT),
                    str(clone)], check=True, capture_output=True, timeout=120)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", "HEAD", "--",
                    "README.md", "reports"], check=True, capture_output=True, timeout=120)
    return clone


def test_command_1s_new_bundle_does_not_make_the_committed_docs_stale(tmp_path, monkeypatch):
    clone = _clone(tmp_path)
    committed = docsgen.committed_folders(clone)
    assert docsgen.stale(clone) == [], "HEAD's generated docs are stale already"
    # The README's CPU bundle (the newest of the newest jaxlib release), so that a copy
    # with a newer stamp takes its place when it is counted.
    shown = re.search(r"`reports/(cpu/[\w.]+)/`", docsgen.cpu_section(
        docsgen.bundles(clone / "reports", committed)))
    assert shown, "HEAD commits no CPU bundle: nothing to copy"

    new = clone / "reports" / "cpu" / NEW_STAMP  # command 1's effect: an untracked bundle
    shutil.copytree(clone / "reports" / shown.group(1), new)
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain", "--",
                             "reports"], capture_output=True, text=True, check=True).stdout
    assert f"?? reports/cpu/{NEW_STAMP}/" in status
    assert docsgen.committed_folders(clone) == committed
    assert docsgen.stale(clone) == []
    assert docsgen.main(["--check", "--root", str(clone)]) == 0

    # The old behaviour: every bundle on disk counts. Command 2 failed here.
    monkeypatch.setattr(docsgen, "committed_folders", lambda root: None)
    assert docsgen.stale(clone) == ["README.md: cpu-bundle", "reports/README.md: bundles"]


def test_ci_leaves_command_1s_bundle_in_the_tree():
    """``.ci/run`` runs command 2 in the tree command 1 wrote to: no moving the bundle."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    between = ci[ci.index('bash -c "$cmd1"'):ci.index('bash -c "$cmd2"')]
    assert 'mv "$bundle"' not in between and "mktemp -d" not in between
