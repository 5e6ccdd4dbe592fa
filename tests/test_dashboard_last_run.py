"""The overview's headline (conformance/dashboard/last_run.py): the last run against the
previous run of its machine, noise-aware (asv's 99% intervals), a change counted only
when it persists, other machines never compared; and the whole-history regression list
ignores changes inside the noise."""

import datetime

import pytest

from conformance.dashboard import asv_results, history, last_run, regressions, site

T = {".*": 0.05}
NAME = "bench.Copy.time_copy"
COMBO = ("1024",)


def _bench():
    return asv_results.Benchmark(name=NAME, type="time", unit="seconds",
                                 param_names=("nbytes",), params=(("1024",),), title=NAME,
                                 doc="")


def _run(day, value, ci=None, machine="m1", env="py3.11", commit=None, release="0.10.2"):
    at = datetime.datetime(2026, 11, day, 2, 0, tzinfo=datetime.timezone.utc)
    return asv_results.Run(machine=machine, commit=commit or f"{day:02d}" * 20, date=at,
                           env=env, source=None, values={NAME: {COMBO: value}},
                           release=release, ci={NAME: {COMBO: ci}} if ci else {},
                           ran_at=at)


def _dir(*runs):
    return asv_results.ResultsDir(root=None, benchmarks={NAME: _bench()},
                                  machines={"m1": {}, "m2": {}}, runs=list(runs),
                                  problems=[])


def test_a_slowdown_outside_the_noise_is_a_new_regression():
    h = last_run.headline([_dir(_run(1, 1.0, (0.98, 1.02)), _run(2, 1.5, (1.45, 1.55)))], T)
    assert h.regressed and [s.factor for s in h.regressions] == [1.5]
    step = h.regressions[0]
    assert not step.confirmed and step.since.commit.startswith("01")
    assert step.until.commit.startswith("02") and h.compared == 1 and h.noise == 0


def test_a_slowdown_inside_the_noise_is_not_a_regression():
    # 10% slower: beyond the 5% threshold, but the 99% intervals overlap
    h = last_run.headline([_dir(_run(1, 1.0, (0.8, 1.2)), _run(2, 1.1, (0.9, 1.3)))], T)
    assert not h.regressed and h.noise == 1 and not h.improvements


def test_a_value_without_an_interval_is_never_a_regression():
    """Even 16x slower: without asv's interval the value is "no interval: not judged"."""
    h = last_run.headline([_dir(_run(1, 1.0), _run(2, 16.0))], T)
    assert not h.regressed and h.not_judged == 1 and h.compared == 1
    one_sided = last_run.headline([_dir(_run(1, 1.0, (0.99, 1.01)), _run(2, 16.0))], T)
    assert not one_sided.regressed and one_sided.not_judged == 1
    assert regressions.judge(1.0, 16.0, None, (15.9, 16.1), 0.05, "lower") == \
        regressions.NOT_JUDGED


def test_a_step_the_last_run_kept_is_confirmed_and_one_it_went_back_on_is_not():
    ci = (lambda v: (v * 0.99, v * 1.01))
    kept = last_run.headline([_dir(_run(1, 1.0, ci(1.0)), _run(2, 2.0, ci(2.0)),
                                   _run(3, 2.0, ci(2.0)))], T)
    assert kept.regressed and [s.confirmed for s in kept.regressions] == [True]
    assert kept.confirmed[0].since.commit.startswith("01")
    assert kept.confirmed[0].until.commit.startswith("02")
    back = last_run.headline([_dir(_run(1, 1.0, ci(1.0)), _run(2, 2.0, ci(2.0)),
                                   _run(3, 1.0, ci(1.0)))], T)
    # the last run went back to a level the series had: neither a regression nor an
    # improvement (within_history), and the step it went back on is not confirmed
    assert not back.regressed and not back.improvements and back.in_history == 1


def test_other_machines_are_named_never_compared():
    d = _dir(_run(1, 1.0, machine="m1"), _run(2, 9.0, machine="m2"),
             _run(3, 1.0, machine="m1"))
    h = last_run.headline([d], T)
    assert h.last.machine == "m1" and h.previous.commit.startswith("01")
    assert not h.regressed and [m for m, _ in h.other_machines] == ["m2"]


def test_the_same_environment_is_preferred_and_a_first_run_has_nothing_to_compare():
    d = _dir(_run(1, 1.0, env="a"), _run(2, 5.0, env="b"), _run(3, 1.0, env="a"))
    h = last_run.headline([d], T)
    assert h.same_env and h.previous.env == "a" and not h.regressed
    first = last_run.headline([_dir(_run(1, 1.0))], T)
    assert first.previous is None and not first.regressed and first.compared == 0
    assert last_run.headline([_dir()], T) is None


def test_the_last_run_is_the_nightly_series_not_a_release_measured_later():
    """A release benchmarked at the newest commit alone (the versions page's runs),
    measured after the nightly series' run of that commit, is not the last run: it has
    no earlier commit, and the headline said "nothing to compare it with"."""
    d = _dir(_run(1, 1.0, (0.99, 1.01), env="nightly"),
             _run(2, 2.0, (1.98, 2.02), env="nightly", commit="02" * 20),
             _run(3, 1.0, env="release-0.11.1", commit="02" * 20))
    h = last_run.headline([d], T)
    assert h.last.env == "nightly" and h.previous.commit.startswith("01")
    assert h.regressed and h.compared == 1


def test_a_bimodal_benchmark_switching_modes_is_not_called():
    """matmul_256's ratio on the committed history: 0.17, 1.95, 2.58, 0.13, then 2.72
    and 1.64 at the next two commits (kernel unchanged): the step 0.13 -> 2.72, kept at
    1.64, lies inside the range the series already spanned, so it is counted, never
    called. A step out of the range (0.44-0.47 -> 0.58, kept at 0.63: dispatch at 1000
    arguments, slowed by argument checks) is a confirmed regression."""
    ci = (lambda v: (v * 0.99, v * 1.01))
    days = [_run(d, v, ci(v)) for d, v in enumerate([0.17, 1.95, 2.58, 0.13, 2.72, 1.64], 1)]
    h = last_run.headline([_dir(*days)], T)
    assert not h.regressed and not h.improvements and h.in_history == 1
    assert regressions.within_history(1.64, [0.17, 1.95, 2.58, 0.13])
    assert not regressions.within_history(0.63, [0.47, 0.45, 0.47, 0.44])
    assert not regressions.within_history(1.0, [1.0])   # one value is no range
    real = [_run(d, v, ci(v)) for d, v in enumerate([0.47, 0.45, 0.47, 0.44, 0.58, 0.63], 1)]
    h = last_run.headline([_dir(*real)], T)
    assert [s.confirmed for s in h.regressions] == [True, False] and h.in_history == 0
    # the history list applies the same rule: only the first switch (no range yet) stays
    bimodal = regressions.find(_commit_charts([0.17, 1.95, 2.58, 0.13, 2.72, 1.64]), T)
    assert [c.after for c in bimodal] == [1.95]
    steady = regressions.find(_commit_charts([0.47, 0.45, 0.47, 0.44, 0.58, 0.63]), T)
    assert [c.after for c in steady] == [0.58, 0.63]


def _commit_charts(values):
    ci = (lambda v: (v * 0.99, v * 1.01))
    return history.build([_dir(*[_run(d, v, ci(v)) for d, v in enumerate(values, 1)])])


def test_the_history_list_ignores_changes_inside_the_noise():
    noisy = _dir(_run(1, 1.0, (0.8, 1.2), commit="a" * 40),
                 _run(2, 1.1, (0.9, 1.3), commit="b" * 40))
    assert regressions.find(history.build([noisy]), T) == []
    clear = _dir(_run(1, 1.0, (0.99, 1.01), commit="a" * 40),
                 _run(2, 1.1, (1.09, 1.11), commit="b" * 40))
    assert len(regressions.find(history.build([clear]), T)) == 1


@pytest.mark.parametrize("regressed", [True, False])
def test_the_overview_opens_with_the_answer(regressed):
    after = 2.0 if regressed else 1.0
    runs = [_run(1, 1.0, (0.99, 1.01)), _run(2, after, (after - 0.01, after + 0.01))]
    html = site.pages(site.Inputs(results=[_dir(*runs)], bundles=None, limits=None))
    page = html["index.html"]
    box = page[page.index('<section id="last-run"'):page.index("</section>")]
    assert page.index('id="last-run"') < page.index('id="site-contents"')
    if regressed:
        # one point: a change to confirm (amber), not a called regression (red)
        assert "Last run: no confirmed regression; 1 new change to confirm" in box
        assert 'class="headline watch"' in page
        assert "2.00\u00d7 slower" in box
    else:
        assert "Last run: no regression" in box and "slower" not in box
    assert "machine <b>m1</b>" in box


def test_charts_draw_the_stored_intervals_as_error_bars():
    chart = history.build([_dir(_run(1, 1.0, (0.9, 1.2), commit="a" * 40),
                                _run(2, 1.0, commit="b" * 40))])[0]
    svg = chart.svg()
    assert svg.count('class="ci"') == 1 and "99% interval" in svg
    with pytest.raises(ValueError, match="interval"):
        from conformance.dashboard import charts
        charts.line_chart([("s", [("a", 1.0, "", (2.0, 1.0))])], unit="seconds",
                          categories=["a"])
