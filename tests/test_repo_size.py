"""Size budgets of the tracked tree (issue 28 part 5): a GPU session carries the working
tree only up to 64 MiB, and every jax release adds a committed bundle. The budgets are
defined here, once; sizes are of the files git tracks (bytes, 1 MB = 10**6 B)."""

import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

import conformance

ROOT = Path(conformance.__file__).resolve().parents[1]
MB = 10**6
#: The whole tracked tree.
TREE_MAX_BYTES = 25 * MB
#: One committed bundle (a directory of reports/ holding a report.json): its results log
#: packed, junit.xml stored as junit.xml.xz and the reproductions' shared checks written
#: once (``pjrt-conformance rerender``). A bundle grows with its failures (each keeps its
#: message, traceback tail and arrays): jax 0.10-0.12 CPU bundles (2,943 results, 38
#: failures) are ~1.9 MB, the jax 0.8.0 CPU bundle (2,894 results, 73 failures) 2.48 MB,
#: the xla-cpu-pjrt plugin bundle of 2026-11-28 (2,894 results, 97 failures) 3.07 MB.
#: The tree budget above is the one that binds; this one catches a bundle that stores
#: what it should not (an unpacked log or junit.xml, whole arrays).
BUNDLE_MAX_BYTES = 3.5 * MB


def over_budget(sizes: dict[str, int]) -> list[str]:
    """What breaks a budget, one line each, given ``sizes``: tracked path (POSIX,
    relative to the repository) -> bytes. A bundle is a directory under ``reports/``
    with a ``report.json``; its size is that of every tracked file under it."""
    total = sum(sizes.values())
    found = [f"tracked tree: {total / MB:.1f} MB > {TREE_MAX_BYTES / MB:.1f} MB"] \
        if total > TREE_MAX_BYTES else []
    bundles = sorted(str(PurePosixPath(p).parent) for p in sizes
                     if p.startswith("reports/") and PurePosixPath(p).name == "report.json")
    for b in bundles:
        size = sum(n for p, n in sizes.items() if p.startswith(b + "/"))
        if size > BUNDLE_MAX_BYTES:
            found.append(f"{b}: {size / MB:.2f} MB > {BUNDLE_MAX_BYTES / MB:.2f} MB")
    return found


def _tracked_sizes() -> dict[str, int]:
    names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                           check=True, timeout=60).stdout.decode().split("\0")
    return {n: (ROOT / n).stat().st_size for n in names if n and (ROOT / n).is_file()}


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_the_tracked_tree_and_every_committed_bundle_are_within_budget():
    sizes = _tracked_sizes()
    assert any(p.startswith("reports/") and p.endswith("/report.json") for p in sizes)
    assert over_budget(sizes) == []


def test_a_big_bundle_and_a_big_tree_are_caught():
    big = {"reports/cpu/1/report.json": 10, "reports/cpu/1/results.jsonl": BUNDLE_MAX_BYTES,
           "reports/cpu/2/report.json": 10, "reports/README.md": 10}
    found = over_budget(big)
    assert len(found) == 1 and found[0].startswith("reports/cpu/1: ")
    found = over_budget({**big, "benchmarks/results/x.json": TREE_MAX_BYTES})
    assert found[0].startswith("tracked tree: ") and len(found) == 2
    assert over_budget({"reports/cpu/1/report.json": BUNDLE_MAX_BYTES}) == []   # at the limit
