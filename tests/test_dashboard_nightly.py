"""benchmarks/nightly.sh: --quick becomes asv overrides that store one real point per
benchmark, --machine reaches asv, and the offline dashboard is rendered last (asv,
pip and pjrt-conformance replaced by stubs that log their arguments)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

NIGHTLY = Path(__file__).resolve().parent.parent / "benchmarks" / "nightly.sh"
QUICK = ["-a", "repeat=1", "-a", "number=1", "-a", "rounds=1", "-a", "warmup_time=0"]
STUB = '#!/bin/sh\necho "$(basename "$0") $*" >> "$STUB_LOG"\n'
# an asv that fails (exit 3) while running the module named in $FAIL_MODULE
FAILING_ASV = STUB + 'case "$*" in *"^$FAIL_MODULE"*) exit 3 ;; esac\n' + (
    # with $WRITE_RESULT, `asv run` writes a result file of HEAD (as asv does when a run ends)
    '[ -n "$WRITE_RESULT" ] && [ "$1" = run ] && for d in .asv/results/*/; do '
    'echo "{}" > "$d$(git rev-parse --short=8 HEAD)-existing-py.json"; done\nexit 0\n')
# benchmarks.intervals exits 2 without a result file to annotate (its usage error)
PYTHON_STUB = STUB + '[ "$1 $2" = "-m benchmarks.intervals" ] && [ $# -lt 4 ] && exit 2\nexit 0\n'

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None,
                                reason="needs git and bash")


def _nightly(tmp_path, *args, fail_module="", rc=0, write_result=False):
    repo, stubs = tmp_path / "repo", tmp_path / "stubs"
    (repo / "benchmarks").mkdir(parents=True)
    shutil.copy(NIGHTLY, repo / "benchmarks" / "nightly.sh")
    for module in ("bench_compile", "bench_transfer"):
        (repo / "benchmarks" / f"{module}.py").write_text("")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    stubs.mkdir()
    for name in ("asv", "pip", "pjrt-conformance"):
        (stubs / name).write_text(FAILING_ASV if name == "asv" else STUB)
        (stubs / name).chmod(0o755)
    log = tmp_path / "log"
    (stubs / "python").write_text(PYTHON_STUB)  # nightly.sh's `$PYTHON -m benchmarks.intervals`
    (stubs / "python").chmod(0o755)
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", STUB_LOG=str(log),
               PYTHON=str(stubs / "python"),
               FAIL_MODULE=fail_module or "no-such-module",
               WRITE_RESULT="1" if write_result else "")
    proc = subprocess.run(["bash", str(repo / "benchmarks" / "nightly.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == rc, proc.stderr
    _nightly.stderr = proc.stderr
    return [line.split() for line in log.read_text().splitlines()], repo


def test_quick_stores_points_and_renders_the_dashboard(tmp_path):
    calls, repo = _nightly(tmp_path, "--quick", "--bench", "Transfer")
    runs = [c for c in calls if c[:2] == ["asv", "run"]]
    assert len(runs) == 1 and "--quick" not in runs[0]
    joined = " ".join(runs[0])
    assert " ".join(QUICK) in joined and "--bench Transfer" in joined
    assert "--set-commit-hash=" in joined and "--python=same" in joined
    assert calls[-1][:2] == ["pjrt-conformance", "dashboard"] and "--out" in calls[-1]
    assert ["asv", "machine", "--yes"] in calls
    assert list((repo / ".asv" / "results").glob("*/*-pip-freeze.txt"))


def test_machine_name_reaches_asv_and_a_full_run_has_no_overrides(tmp_path):
    calls, repo = _nightly(tmp_path, "--machine", "lab-box")
    assert ["asv", "machine", "--yes", "--machine", "lab-box"] in calls
    run = next(c for c in calls if c[:2] == ["asv", "run"])
    assert "--machine" in run and "lab-box" in run and "-a" not in run
    assert (repo / ".asv" / "results" / "lab-box").is_dir()


def test_each_module_is_stored_on_its_own_and_a_failure_keeps_the_others(tmp_path):
    calls, _ = _nightly(tmp_path, "--quick", fail_module="bench_compile", rc=1)
    runs = [" ".join(c) for c in calls if c[:2] == ["asv", "run"]]
    # one asv run per module (asv stores results when a run ends): the failing first
    # module does not lose the second's results, and the dashboard is still rendered
    assert [r.split("--bench ")[1].split()[0] for r in runs] == ["^bench_compile\\.",
                                                                 "^bench_transfer\\."]
    assert all(" ".join(QUICK) in r for r in runs)
    assert calls[-1][:2] == ["pjrt-conformance", "dashboard"]


def test_a_round_without_a_result_file_still_renders_the_dashboard(tmp_path):
    """No result file (asv wrote none): benchmarks.intervals is not called with nothing
    to annotate (its exit 2 stopped the script under set -e), --store copies nothing,
    and the dashboard and the failure summary still come."""
    calls, repo = _nightly(tmp_path, "--quick", "--store", "--machine", "box",
                           fail_module="bench_transfer", rc=1)
    assert not any(c[:3] == ["python", "-m", "benchmarks.intervals"] for c in calls)
    assert calls[-1][:2] == ["pjrt-conformance", "dashboard"]
    assert "no result file" in _nightly.stderr
    assert "asv run failed for: bench_transfer" in _nightly.stderr  # the summary
    assert not list((repo / "benchmarks" / "results").glob("box/*.json"))


def test_store_keeps_the_pip_freeze_beside_the_result(tmp_path):
    """The dashboard names an existing environment (and its jax release) from
    <commit8>-pip-freeze.txt beside the result file: --store copies it too."""
    calls, repo = _nightly(tmp_path, "--quick", "--store", "--machine", "box",
                           write_result=True)
    stored = sorted(p.name for p in (repo / "benchmarks" / "results" / "box").iterdir())
    commit8 = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=8", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert stored == [f"{commit8}-existing-py.json", f"{commit8}-pip-freeze.txt"]
    intervals = next(c for c in calls if c[:3] == ["python", "-m", "benchmarks.intervals"])
    assert intervals[-1].endswith(f"{commit8}-existing-py.json")
    assert calls[-1][:2] == ["pjrt-conformance", "dashboard"]
