"""The A/A check (conformance/dashboard/aa.py): two runs of one commit judged by the
dashboard's rule report nothing; a real 2x change between them is reported."""

from __future__ import annotations

import datetime
from pathlib import Path

from conformance.dashboard import aa, asv_results

T = {".*": 0.1}
BENCH = {"b.time_x": asv_results.Benchmark("b.time_x", "time", "seconds", ("n",),
                                           (("1", "2"),), "x", ""),
         "b.track_gbps": asv_results.Benchmark("b.track_gbps", "track", "GB/s", ("n",),
                                               (("1", "2"),), "g", "")}


def _run(values: dict[str, dict[tuple[str, ...], float]], spread: float) -> asv_results.Run:
    ci = {n: {c: (v * (1 - spread), v * (1 + spread)) for c, v in combos.items()}
          for n, combos in values.items()}
    return asv_results.Run("m", "a" * 40, datetime.datetime(2026, 1, 1), "env", Path("x"),
                           values, ci=ci)


def test_two_runs_of_one_commit_report_nothing():
    a = _run({"b.time_x": {("1",): 1.00, ("2",): 2.00}, "b.track_gbps": {("1",): 10.0}}, 0.03)
    b = _run({"b.time_x": {("1",): 1.04, ("2",): 1.97}, "b.track_gbps": {("1",): 10.3}}, 0.03)
    found = aa.check(a, b, T, BENCH)
    assert "regression" not in found and "improvement" not in found
    assert len(found["unchanged"]) == 3


def test_a_real_change_is_flagged_in_its_direction():
    """The check can fail: a 2x slower time is a regression, a 2x higher GB/s an
    improvement; intervals that separate by less than the threshold are counted under
    'intervals alone' only."""
    a = _run({"b.time_x": {("1",): 1.0, ("2",): 1.0}, "b.track_gbps": {("1",): 10.0}}, 0.01)
    b = _run({"b.time_x": {("1",): 2.0, ("2",): 1.05}, "b.track_gbps": {("1",): 20.0}}, 0.01)
    found = aa.check(a, b, T, BENCH)
    assert found["regression"] == ["b.time_x(1): 1 -> 2"]
    assert found["improvement"] == ["b.track_gbps(1): 10 -> 20"]
    assert "b.time_x(2): 1 -> 1.05" in found["intervals alone"]


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert aa.main([str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                    "--benchmarks", str(tmp_path / "benchmarks.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aa: ") and err.count("\n") == 1


def test_noise_of_earlier_repeats_raises_the_bar_and_the_judged_run_is_held_out():
    """A 30% step beyond asv's 10% threshold is a regression, but not when earlier
    repeats of the commit moved by 20% (twice that: 40%); a step past the noise bar is
    flagged all the same (the check can fail)."""
    from conformance.dashboard import noise

    measured = noise.NoiseData(root=None, table={("m", "b.time_x", ("1",)): noise.Noise(
        spread=0.2, runs=2, groups=1)})
    a = _run({"b.time_x": {("1",): 1.0}}, 0.01)
    b = _run({"b.time_x": {("1",): 1.3}}, 0.01)
    assert aa.check(a, b, T, BENCH)["regression"] == ["b.time_x(1): 1 -> 1.3"]
    assert "regression" not in aa.check(a, b, T, BENCH, measured)
    c = _run({"b.time_x": {("1",): 1.5}}, 0.01)
    assert aa.check(a, c, T, BENCH, measured)["regression"] == ["b.time_x(1): 1 -> 1.5"]


def test_load_leaves_out_the_held_out_run(tmp_path):
    """With the judged run among the repeats its own change would set the bar: it is
    left out (``exclude``), and the spread comes from the others alone."""
    import json

    from conformance.dashboard import noise

    folder = tmp_path / "m"
    folder.mkdir()
    for k, value in ((1, 1.0), (2, 1.1), (3, 3.0)):
        (folder / f"aaaaaaaa-env-run{k}.json").write_text(json.dumps({
            "commit_hash": "a" * 40, "env_name": "env", "date": 0, "params": {},
            "version": 2, "result_columns": ["result", "params"],
            "results": {"b.time_x": [[value], [["1"]]]}}))
    every = noise.load(tmp_path)
    held = noise.load(tmp_path, exclude=(folder / "aaaaaaaa-env-run3.json",))
    assert every.of("m", "b.time_x", ("1",)).spread > 1.5
    assert abs(held.of("m", "b.time_x", ("1",)).spread - 0.1 / 1.05) < 1e-9
