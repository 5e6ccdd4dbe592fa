"""Self-tests of the dashboard's ratios (``track_ratio_*``, benchmarks/pairing.py) and of
the committed asv history (benchmarks/results/, benchmarks/history.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchmarks import discover, history, pairing

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MATRIX = ROOT / "asv.matrix.conf.json"
# track_ratio_<what>_vs_<reference> (bench_transfer.TransferRatio's older
# track_ratio_to_numpy_alloc_copy is reference/path, unit "x numpy allocate+copy")
RATIOS = [c for c in discover.cases(smallest=True) if re.match(r"track_ratio_\w+_vs_", c.method)]


def _work(units: int) -> int:
    """A fixed amount of CPU work (not a wall-clock wait: under load both sides of a
    pair stretch alike)."""
    return sum(range(20_000 * units))


class _StandIn:
    """A benchmark class whose measured side can be slowed."""

    slowdown = 1

    def time_work(self, n):
        _work(n * self.slowdown)

    def time_ref_work(self, n):
        _work(n)

    track_ratio_work_vs_ref = pairing.make_ratio("time_work", "time_ref_work", "Reference: spin.")


def test_track_ratio_is_about_one_for_the_same_function():
    assert 0.5 < _StandIn().track_ratio_work_vs_ref(1) < 2.0  # wide: a shared, loaded CI box


def test_track_ratio_is_above_one_when_the_measured_side_is_slower():
    slowed = _StandIn()
    slowed.slowdown = 4
    assert slowed.track_ratio_work_vs_ref(1) > 2.0


def test_a_real_track_ratio_sees_a_slowed_runtime():
    """bench_kernels' sum on the real backend, its measured side slowed to 4x the
    reference (a stand-in) or replaced by the reference itself."""
    from benchmarks import bench_kernels

    bench = bench_kernels.SortAndReduce()
    bench.setup(1 << 16)
    ref = bench.time_ref_numpy_sum
    bench.time_runtime_sum = lambda n: [ref(n) for _ in range(4)]
    assert bench.track_ratio_sum_vs_numpy(1 << 16) > 2.0
    bench.time_runtime_sum = ref
    assert 0.5 < bench.track_ratio_sum_vs_numpy(1 << 16) < 2.0


@pytest.mark.parametrize("bad, arg", [(dict(reps=0), "reps"),
                                      (dict(min_seconds=-1), "min_seconds")])
def test_paired_ratio_rejects_bad_arguments(bad, arg):
    with pytest.raises(ValueError, match=arg):
        pairing.paired_ratio(lambda: None, lambda: None, **bad)


@pytest.mark.parametrize("case", RATIOS, ids=[c.id for c in RATIOS])
def test_every_track_ratio_names_its_reference_and_existing_methods(case):
    fn = getattr(case.cls, case.method)
    assert fn.unit in (pairing.LOWER, pairing.HIGHER)
    assert "Reference:" in fn.__doc__
    for name in fn.ratio_of:
        assert callable(getattr(case.cls, name, None)), f"{case.id}: no method {name}"


def test_every_family_has_a_ratio():
    families = {c.module for c in RATIOS}
    assert families >= {"bench_transfer", "bench_dispatch", "bench_compile", "bench_kernels",
                        "bench_sharding", "bench_eras"}


def _require_results():
    if not (RESULTS / "benchmarks.json").is_file():
        pytest.fail("benchmarks/results/ has no committed history (run benchmarks/history.sh)")
    pytest.importorskip("asv")


def test_committed_history_covers_every_jaxlib_and_backend_era():
    _require_results()
    assert history.gaps(RESULTS, MATRIX) == []
    found = history.coverage(RESULTS)
    versions = history.matrix_versions(MATRIX)
    assert len(versions) >= 3 and set(versions) <= set(found)
    assert any(k.split(".")[-1].startswith("track_ratio_") for per in found.values() for k in per)


def test_history_check_fails_when_a_version_is_missing(tmp_path):
    _require_results()
    copy = tmp_path / "results"
    shutil.copytree(RESULTS, copy)
    dropped = history.matrix_versions(MATRIX)[1]
    for path in copy.glob("*/*.json"):
        if path.name != "machine.json" and f"jaxlib{dropped}" in path.name:
            path.unlink()
    assert f"jaxlib {dropped}: no results" in history.gaps(copy, MATRIX)


def test_history_check_fails_when_a_backend_era_has_no_values(tmp_path):
    _require_results()
    assert any("no value for not-a-plugin" in g
               for g in history.gaps(RESULTS, MATRIX, eras=["jaxlib-builtin", "not-a-plugin"]))


def test_committed_history_is_asvs_format_without_private_fields():
    _require_results()
    doc = json.loads((RESULTS / "benchmarks.json").read_text())
    assert doc["version"] == 2
    units = {v["unit"] for k, v in doc.items() if re.search(r"\.track_ratio_\w+_vs_", k)}
    assert units <= {"ratio", pairing.LOWER, pairing.HIGHER}  # "ratio": before directions
    for machine in RESULTS.glob("*/machine.json"):
        info = json.loads(machine.read_text())
        assert info["machine"] == machine.parent.name and info["num_cpu"]


def test_the_matrix_pairs_every_release_with_a_python_it_installs_on():
    """asv's own expansion of asv.matrix.conf.json: one environment per release, jax and
    jaxlib equal, 0.10.x on Python 3.11 and 0.11 and later on 3.12 (jaxlib 0.11+ has no
    Python 3.11 wheels)."""
    environment = pytest.importorskip("asv.environment")
    from asv import config

    conf = config.Config.load(str(MATRIX))
    envs = [environment._parse_matrix_entries(e)[:2]
            for e in environment.iter_matrix(conf.environment_type, conf.pythons, conf)]
    versions = history.matrix_versions(MATRIX)
    assert sorted(r["jaxlib"] for _, r in envs) == sorted(versions)
    for python, req in envs:
        assert req["jax"] == req["jaxlib"]
        assert python == ("3.11" if req["jaxlib"].startswith("0.10.") else "3.12"), (python, req)
    assert {"0.11.2", "0.12.0.1"} <= set(versions)


def test_committed_history_has_several_commits_of_one_environment():
    """The commit axis: some machine and environment measured at three commits or more."""
    _require_results()
    from asv import results as asv_results

    commits: dict[tuple[str, str], set[str]] = {}
    for result in asv_results.iter_results(str(RESULTS)):
        commits.setdefault((result.params["machine"], result.env_name), set()).add(
            result.commit_hash)
    assert max(len(c) for c in commits.values()) >= 3, commits


# --- intervals: every track_ value carries its samples and asv's 99% interval ---------

from benchmarks import intervals  # noqa: E402

_COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a",
            "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat",
            "samples", "profile"]


def test_a_track_ratio_records_samples_that_give_an_interval(tmp_path, monkeypatch):
    monkeypatch.setenv(intervals.ENV, str(tmp_path))
    value = _StandIn().track_ratio_work_vs_ref(1)
    records = intervals.load(tmp_path)
    [(name, params)] = records
    assert name == f"{__name__.split('.')[-1]}._StandIn.track_ratio_work_vs_ref" \
        or name.endswith("._StandIn.track_ratio_work_vs_ref")
    assert params == ("1",)
    [rec] = records[name, params]
    assert len(rec["samples"]) == pairing.REPS > 1 and rec["value"] == value
    st = intervals.stats(rec["samples"])
    assert st["ci_99_a"] <= value <= st["ci_99_b"] and st["ci_99_a"] < st["ci_99_b"]
    assert st["repeat"] == pairing.REPS


def test_nothing_is_recorded_without_the_samples_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(intervals.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert intervals.record("x.Y.track_z", (), [1.0, 3.0, 2.0]) == 2.0
    assert list(tmp_path.iterdir()) == []


def test_speed_ratio_is_the_inverse_and_says_higher_is_better():
    class Speed:
        def time_a(self):
            _work(2)

        def time_ref(self):
            _work(1)

        track_ratio_a_vs_ref = pairing.make_ratio("time_a", "time_ref", "Reference: spin.",
                                                  speed=True)

    assert Speed.track_ratio_a_vs_ref.unit == pairing.HIGHER == "ratio (higher is better)"
    assert _StandIn.track_ratio_work_vs_ref.unit == pairing.LOWER
    assert 0.2 < Speed().track_ratio_a_vs_ref() < 1.0


def _synthetic_result(path: Path, value: float, other: float) -> None:
    row = [[value, other], [["1", "2"]], "v", 0, 1.0]  # asv drops trailing null columns
    doc = {"commit_hash": "0" * 40, "env_name": "existing-py", "date": 0,
           "params": {"machine": "m", "python": "3.11"}, "python": "3.11",
           "requirements": {}, "env_vars": {}, "result_columns": _COLUMNS,
           "results": {"bench_x.C.track_ratio_a_vs_b": row}, "durations": {},
           "version": 2}
    path.write_text(json.dumps(doc))


def test_post_processing_writes_the_interval_into_an_asv_result_file(tmp_path, monkeypatch):
    pytest.importorskip("asv")
    from asv.results import Results

    samples = tmp_path / "samples"
    monkeypatch.setenv(intervals.ENV, str(samples))
    ratios = [0.9, 1.0, 1.1, 0.95, 1.05, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97]
    value = intervals.record("bench_x.C.track_ratio_a_vs_b", (1,), ratios)
    intervals.record("bench_x.C.track_ratio_a_vs_b", (2,), [5.0, 6.0])  # another value
    result = tmp_path / "m" / "00000000-existing-py.json"
    result.parent.mkdir()
    _synthetic_result(result, value, 7.0)
    assert intervals.main([str(samples), str(result)]) == 0
    doc = json.loads(result.read_text())
    row = dict(zip(doc["result_columns"], doc["results"]["bench_x.C.track_ratio_a_vs_b"]))
    assert row["stats_ci_99_a"][0] < value < row["stats_ci_99_b"][0]
    assert row["stats_ci_99_a"][1] is None  # 7.0 matches no record: not judged
    assert row["stats_repeat"][0] == len(ratios) and row["samples"][0] == ratios
    loaded = Results.load(str(result))  # asv reads it back
    [stats, _] = loaded.get_result_stats("bench_x.C.track_ratio_a_vs_b", [["1", "2"]])
    assert stats["ci_99_a"] == row["stats_ci_99_a"][0]


def test_the_spread_script_checks_the_five_percent_rule(tmp_path, monkeypatch, capsys):
    from benchmarks import spread

    samples = tmp_path / "samples"
    monkeypatch.setenv(intervals.ENV, str(samples))
    tight = intervals.record("bench_x.C.track_ratio_a_vs_b", (1,), [1.0 + i / 1000 for i in range(21)])
    result = tmp_path / "r.json"
    _synthetic_result(result, tight, 7.0)
    intervals.main([str(samples), str(result)])
    assert spread.main(["ci", str(result)]) == 1  # 7.0 has no interval
    assert "1 of 2 values" in capsys.readouterr().out
    assert spread.aa_spread([str(result), str(result)])[("bench_x.C.track_ratio_a_vs_b",
                                                          ("1",))] == 0.0


HISTORY_SH = ROOT / "benchmarks" / "history.sh"
_LOG_STUB = '#!/bin/sh\necho "$(basename "$0") $*" >> "$STUB_LOG"\n'


def _history_sh(tmp_path, *, asv_rc=0, noise_run="", stale=()):
    """benchmarks/history.sh in a throwaway git repository with asv and python replaced
    by stubs that log their arguments; the asv stub writes one result file of HEAD
    (environment ``fresh``) into benchmarks/results/box/ and exits ``asv_rc``. ``stale``:
    environments whose result files of HEAD an earlier run left (old mtimes)."""
    import os
    import shutil
    import subprocess

    if shutil.which("git") is None or shutil.which("lscpu") is None:
        pytest.skip("needs git and lscpu")
    repo, stubs, tmp = tmp_path / "repo", tmp_path / "stubs", tmp_path / "tmp"
    (repo / "benchmarks").mkdir(parents=True)
    shutil.copy(HISTORY_SH, repo / "benchmarks" / "history.sh")
    (repo / "asv.matrix.conf.json").write_text('{"pythons": []}')
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit8 = subprocess.run([*git, "rev-parse", "--short=8", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    results = repo / "benchmarks" / "results" / "box"
    results.mkdir(parents=True)
    for env in stale:
        old = results / f"{commit8}-{env}.json"
        old.write_text("{}")
        os.utime(old, (1_000_000_000, 1_000_000_000))
    stubs.mkdir()
    tmp.mkdir()
    (stubs / "asv").write_text(_LOG_STUB + f'echo "{{}}" > "{results}/{commit8}-fresh.json"\n'
                               f"exit {asv_rc}\n")
    (stubs / "python").write_text(_LOG_STUB)
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    log = tmp_path / "log"
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", STUB_LOG=str(log),
               PYTHON=str(stubs / "python"), ASV=str(stubs / "asv"), MACHINE="box",
               HOME=str(tmp_path), TMPDIR=str(tmp), NOISE_RUN=noise_run)
    proc = subprocess.run(["bash", str(repo / "benchmarks" / "history.sh")], env=env,
                          capture_output=True, text=True, timeout=120)
    calls = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return proc, calls, repo, commit8, tmp


def test_history_sh_noise_run_keeps_only_the_files_this_run_wrote(tmp_path):
    """NOISE_RUN=K copies this asv run's result files only: a file of another environment
    left by an earlier -E run is a copy, not a repeat; benchmarks.intervals is given the
    same files."""
    proc, calls, repo, commit8, _ = _history_sh(tmp_path, noise_run="2", stale=["older"])
    assert proc.returncode == 0, proc.stderr
    noise = sorted(p.name for p in (repo / "benchmarks" / "noise" / "box").iterdir())
    assert noise == [f"{commit8}-fresh-run2.json"]
    intervals = next(c for c in calls if c[1:3] == ["-m", "benchmarks.intervals"])
    assert [Path(a).name for a in intervals[4:]] == [f"{commit8}-fresh.json"]


def test_history_sh_removes_its_samples_folder_when_asv_fails(tmp_path):
    proc, calls, _, _, tmp = _history_sh(tmp_path, asv_rc=3)
    assert proc.returncode == 3
    assert not any(c[1:3] == ["-m", "benchmarks.intervals"] for c in calls)
    assert list(tmp.iterdir()) == []  # the samples folder (and the stamp) are gone
    proc, _, _, _, tmp = _history_sh(tmp_path / "ok")
    assert proc.returncode == 0, proc.stderr
    assert list(tmp.iterdir()) == []
