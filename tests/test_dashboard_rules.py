"""The rules of how a regression is called (conformance/dashboard/regressions.py,
noise.py, order.py, direction.py), each with a synthetic self-test that fails when the
rule is broken: an A/A pair gives no regression; a real 2x slowdown confirmed by the
next commit is reported; a throughput gain is an improvement; commits are ordered by
git topology, not date; a value without an interval is never a regression; charts keep
to 8 series and fit their y axis to the values."""

from __future__ import annotations

import datetime
import json
import random
import subprocess
from pathlib import Path

import pytest

from conformance.dashboard import (asv_results, charts, direction, history, last_run, noise,
                                   order, regressions, site)

NAME = "bench.Mod.time_x"
T = {".*": 0.0}   # asv's threshold at 0: only the intervals and the noise decide
UTC = datetime.timezone.utc


def _bench(name=NAME, unit="seconds", doc=""):
    return asv_results.Benchmark(name=name, type="time", unit=unit, param_names=("n",),
                                 params=(tuple(str(i) for i in range(40)),), title=name,
                                 doc=doc)


def _run(commit, day, values, cis, machine="m", env="e"):
    at = datetime.datetime(2026, 11, day, tzinfo=UTC)
    return asv_results.Run(machine=machine, commit=commit, date=at, env=env, source=None,
                           values=values, ci=cis, ran_at=at)


def _dir(runs, bench=None):
    bench = bench or _bench()
    return asv_results.ResultsDir(root=None, benchmarks={bench.name: bench},
                                  machines={"m": {}}, runs=runs, problems=[])


def _measure(rng, level, n=40):
    """One asv run of n parameter values: a run-level offset (3% run-to-run noise) and
    tight samples within the run (0.3%): asv's intervals are then narrower than the
    run-to-run noise, as on a shared machine."""
    offset = rng.lognormvariate(0, 0.03)
    values, cis = {}, {}
    for i in range(n):
        samples = [level * offset * rng.lognormvariate(0, 0.003) for _ in range(10)]
        samples.sort()
        values[(str(i),)] = samples[5]
        cis[(str(i),)] = (samples[0], samples[-1])
    return {NAME: values}, {NAME: cis}


def _write_asv(path: Path, commit: str, values: dict):
    rows = {name: [list(v.values()), [[c[0] for c in v]]] for name, v in values.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"commit_hash": commit, "date": 0, "params": {},
                                "result_columns": ["result", "params"], "results": rows,
                                "version": 2}))


def _noise_dir(tmp_path, rng, repeats=5):
    root = tmp_path / "noise"
    for k in range(1, repeats + 1):
        values, _ = _measure(rng, 1.0)
        _write_asv(root / "m" / f"{'a' * 8}-e-run{k}.json", "a" * 40, values)
    return noise.load(root)


def test_noise_loader_reads_the_layout_and_measures_the_spread(tmp_path):
    root = tmp_path / "noise"
    for k, v in enumerate([1.0, 1.1, 0.95], start=1):
        _write_asv(root / "m" / f"{'b' * 8}-py3.11-jax0.10.2-run{k}.json", "b" * 40,
                   {NAME: {("1",): v}})
    (root / "m" / "stray.json").write_text("{}")
    data = noise.load(root)
    got = data.of("m", NAME, ("1",))
    assert got.spread == pytest.approx((1.1 - 0.95) / 1.0) and got.runs == 3
    assert got.threshold == pytest.approx(2 * got.spread)
    assert data.files == 3 and len(data.problems) == 1 and "stray.json" in data.problems[0]
    assert noise.load(tmp_path / "absent").table == {}
    assert regressions.rule_for("m", NAME, ("1",), data, T).source == "noise"
    assert regressions.rule_for("m", NAME, ("2",), data, {".*": 0.1}) == \
        regressions.Rule(0.1, "asv default", 0)


def test_a_a_runs_give_no_regression_with_noise_data(tmp_path):
    """Two commits of the same code (values from one distribution, with intervals):
    judged against the noise of 5 repeated runs, 0 regressions; the same pair judged by
    the intervals alone (no noise data, threshold 0) flags some: the noise rule is what
    keeps A/A clean."""
    rng = random.Random(7)
    noisy = _noise_dir(tmp_path, rng)
    flagged_without = 0
    for trial in range(5):
        a, b = ("1" * 40, "2" * 40)
        runs = [_run(a, 1, *_measure(rng, 1.0)), _run(b, 2, *_measure(rng, 1.0))]
        h = last_run.headline([_dir(runs)], T, noisy)
        assert h.compared == 40 and h.by_noise == 40 and h.noise_runs == (5, 5)
        assert h.regressions == [] and h.improvements == [], trial
        flagged_without += len(last_run.headline([_dir(runs)], T, None).regressions) + \
            len(last_run.headline([_dir(runs)], T, None).improvements)
    assert flagged_without > 0


def test_a_2x_slowdown_confirmed_by_the_next_commit_is_reported(tmp_path):
    rng = random.Random(3)
    noisy = _noise_dir(tmp_path, rng)
    c1, c2, c3 = "1" * 40, "2" * 40, "3" * 40
    runs = [_run(c1, 1, *_measure(rng, 1.0)), _run(c2, 2, *_measure(rng, 2.0)),
            _run(c3, 3, *_measure(rng, 2.0))]
    h = last_run.headline([_dir(runs)], T, noisy)
    assert h.regressed and len(h.confirmed) == 40 and h.called   # red: a second point
    assert all(s.since.commit == c1 and s.until.commit == c2 for s in h.confirmed)
    assert all(s.text.endswith("slower") and s.size > 1.8 for s in h.confirmed)
    # the whole-history list: confirmed by c3
    changes = regressions.find(history.build([_dir(runs)]), T, noisy)
    assert len(changes) == 40 and {c.status for c in changes} == {"confirmed"}
    # the next commit went back: neither the headline nor the list keeps it
    back = runs[:2] + [_run(c3, 3, *_measure(rng, 1.0))]
    hb = last_run.headline([_dir(back)], T, noisy)
    assert not hb.confirmed and not hb.regressed
    assert not [c for c in regressions.find(history.build([_dir(back)]), T, noisy) if c.up]
    # the last commit alone is new, not confirmed
    hn = last_run.headline([_dir(runs[:2])], T, noisy)
    assert len(hn.regressions) == 40 and not hn.confirmed
    assert not hn.called and len(hn.to_confirm) == 40   # amber until the next commit


def test_a_throughput_gain_is_an_improvement():
    assert direction.better("GFLOP/s") == direction.HIGHER == direction.better("GB/s")
    assert direction.better("seconds") == direction.LOWER
    assert direction.better("ratio", "b.C.track_ratio_x_vs_y") == direction.LOWER
    assert direction.better("ratio (higher is better)") == direction.HIGHER
    assert direction.better("ratio (lower is better)") == direction.LOWER
    assert direction.better("ratio", "b.C.track_ratio_x", "Speedup; higher is better.") \
        == direction.HIGHER
    bench = _bench("bench.Mod.track_flops", unit="GFLOP/s")
    runs = [_run("1" * 40, 1, {bench.name: {("0",): 10.0}}, {bench.name: {("0",): (9.9, 10.1)}}),
            _run("2" * 40, 2, {bench.name: {("0",): 20.0}}, {bench.name: {("0",): (19.9, 20.1)}})]
    h = last_run.headline([_dir(runs, bench)], {".*": 0.1})
    assert not h.regressed and len(h.improvements) == 1
    assert h.improvements[0].text == "2.00\u00d7 faster" and not h.improvements[0].up
    html = site.pages(site.Inputs(results=[_dir(runs, bench)], bundles=None, limits=None))
    box = html["index.html"].split("</section>")[0]
    assert "Last run: no regression" in box and "slower" not in box


def _git(repo, *args, date=None):
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
    import os
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@x", "-c",
                           "user.name=t", *args], check=True, capture_output=True,
                          text=True, env={**os.environ, **env}).stdout.strip()


def test_commits_are_ordered_by_git_topology_not_date(tmp_path):
    """Three commits whose dates run backwards (the child is dated before its parent):
    the ordering, the headline's last/previous and the By-commit axis follow git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    hashes = []
    for i, date in enumerate(["2026-11-30T00:00:00Z", "2026-11-10T00:00:00Z",
                              "2026-11-01T00:00:00Z"]):
        (repo / "f").write_text(str(i))
        _git(repo, "add", "f")
        _git(repo, "commit", "-q", "-m", str(i), date=date)
        hashes.append(_git(repo, "rev-parse", "HEAD"))
    days = {hashes[0]: 30, hashes[1]: 10, hashes[2]: 1}
    level = {hashes[0]: 1.0, hashes[1]: 1.0, hashes[2]: 2.0}   # the newest commit is slow
    runs = [_run(h, days[h], {NAME: {("0",): level[h]}},
                 {NAME: {("0",): (level[h] * 0.99, level[h] * 1.01)}}) for h in hashes]
    d = _dir(runs)
    ordering = history.ordering_of([d], repo)
    assert ordering.fallback is None and ordering.sequence == hashes
    assert ordering.is_ancestor(hashes[0], hashes[2]) and ordering.previous(
        hashes[2], hashes[:2]) == hashes[1]
    h = last_run.headline([d], {".*": 0.1}, None, ordering)
    assert h.last.commit == hashes[2] and h.previous.commit == hashes[1]
    assert len(h.regressions) == 1 and not h.regressions[0].confirmed
    chart = history.build([d], ordering)[0]
    assert chart.categories == [c[:8] for c in hashes]
    pages = site.pages(site.Inputs(results=[d], bundles=None, limits=None, repo=repo))
    assert ", ".join(c[:8] for c in hashes) in pages["commits.html"]
    assert "Last run: no confirmed regression; 1 new change to confirm" in pages["index.html"]
    # by date the order would be reversed: the check can fail
    by_date = history.ordering_of([d], None)
    assert by_date.sequence == hashes[::-1] and by_date.fallback
    # a commit unknown to the repository: the fallback is said on both pages
    stray = _dir(runs + [_run("f" * 40, 28, {NAME: {("0",): 1.0}}, {})])
    told = site.pages(site.Inputs(results=[stray], bundles=None, limits=None, repo=repo))
    for page in ("index.html", "commits.html"):
        assert "is not in the git repository" in told[page] and "commit date" in told[page]


def test_the_history_list_never_calls_a_value_without_interval_a_regression():
    runs = [_run("1" * 40, 1, {NAME: {("0",): 1.0}}, {}),
            _run("2" * 40, 2, {NAME: {("0",): 16.0}}, {}),
            _run("3" * 40, 3, {NAME: {("0",): 16.0}}, {})]
    assert regressions.find(history.build([_dir(runs)]), T) == []
    with_ci = [_run(r.commit, i + 1, r.values, {NAME: {("0",): (v * .99, v * 1.01)}})
               for i, (r, v) in enumerate(zip(runs, (1.0, 16.0, 16.0)))]
    assert len(regressions.find(history.build([_dir(with_ci)]), T)) == 1


def test_charts_have_at_most_8_series_and_a_fitted_y_axis():
    bench = _bench()
    series = {f"env{i}": [("c1", 100e-6 + i * 1e-6, "", (10e-6, 0.08))] for i in range(20)}
    chart = history.Chart(benchmark=bench, fixed="", series=series, categories=["c1"])
    parts = chart.facets()
    assert [len(p.series) for p in parts] == [8, 8, 4] and parts[1].part == (2, 3)
    assert len({p.anchor for p in parts}) == 3
    svg = parts[0].svg()
    top = max(float(t) for t in __import__("re").findall(r'text-anchor="end">([\d.]+)<', svg))
    assert top < 200, top   # us: fitted to 100-107 us, not to the 80,000 us bound
    assert 'class="clipped"' in svg
    assert charts.y_range([5.0, 20.0]) == (0.0, 21.0) and charts.y_range([10.0, 20.0]) == (9.0, 21.0)


def test_byte_identical_repeats_are_copies_and_noise_only_raises_the_bar(tmp_path):
    """Two byte-identical repeat files (a stale result copied twice) are one
    measurement: no spread of 0, hence no threshold of 0. A measured noise below asv's
    threshold never lowers it; one above raises it."""
    root = tmp_path / "noise"
    for k in (1, 2):
        _write_asv(root / "m" / f"{'c' * 8}-e-run{k}.json", "c" * 40, {NAME: {("1",): 1.0}})
    data = noise.load(root)
    assert data.of("m", NAME, ("1",)) is None and data.files == 1
    assert len(data.copies) == 1 and "run2.json" in data.copies[0]
    assert regressions.rule_for("m", NAME, ("1",), data, {".*": 0.05}) == \
        regressions.Rule(0.05, "asv default", 0)
    # a third, different repeat: a real spread of 2% from two measurements
    _write_asv(root / "m" / f"{'c' * 8}-e-run3.json", "c" * 40, {NAME: {("1",): 1.02}})
    data = noise.load(root)
    got = data.of("m", NAME, ("1",))
    assert got.runs == 2 and got.threshold == pytest.approx(2 * 0.02 / 1.01)
    low = regressions.rule_for("m", NAME, ("1",), data, {".*": 0.05})
    assert low.threshold == 0.05 and low.source == "asv default"   # 4% < 5%: asv's stays
    high = regressions.rule_for("m", NAME, ("1",), data, {".*": 0.01})
    assert high.threshold == pytest.approx(got.threshold) and high.source == "noise"
