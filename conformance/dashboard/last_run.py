"""The overview's headline: did the last run regress against the previous one?

*The last run* is the run of the newest commit in git order (:mod:`.order`, the same
ordering as the By-commit page). Of several runs of that commit, it is the one of the
nightly series: the machine + environment with runs at the most commits (a release
benchmarked at that commit alone, for the versions page, has no earlier commit to be
compared with); of those, the one measured last.
For each of its values, *the previous value* is that of the nearest git ancestor that
has a result for the same machine + environment + benchmark + parameters; runs of other
machines or environments are never compared with it (the headline names the other
machines instead).

Each value is judged by :func:`conformance.dashboard.regressions.judge`: a regression
needs separated 99% intervals **and** a change beyond the benchmark's run-to-run noise
(measured from repeated runs of one commit, else asv's ``regressions_thresholds``). A
value without an interval is never a regression: it is counted as "no interval: not
judged", and neither is a change into the range the same series already spanned at
earlier commits (a bimodal benchmark switching modes; :func:`regressions.within_history`).
A regression of the last run against its previous value is *new*; one of the
previous value against the one before it is *confirmed* when the last run (the next
commit in git order with a result) keeps it, and is dropped when the last run went back
on it (PyTorch HUD's two consecutive points).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping

from conformance.dashboard import direction, order, regressions
from conformance.dashboard.asv_results import ResultsDir, Run
from conformance.dashboard.noise import NoiseData
from conformance.dashboard.regressions import BeforeAfter, Rule


@dataclasses.dataclass(frozen=True)
class Step(BeforeAfter):
    """One benchmark value of the last run against its previous value.

    ``before``/``after`` in ``unit``; ``before_ci``/``after_ci`` asv's 99% intervals;
    ``rule`` the threshold that applied; ``since``/``until``: the runs the step lies
    between; ``confirmed``: a step of the previous value that the last run kept
    (``after`` is then the last run's value); ``better``: which way is better."""

    benchmark: str
    params: str
    unit: str
    before: float
    after: float
    before_ci: tuple[float, float] | None
    after_ci: tuple[float, float] | None
    rule: Rule
    since: Run
    until: Run
    confirmed: bool
    better: str = direction.LOWER

    @property
    def threshold(self) -> float:
        return self.rule.threshold


@dataclasses.dataclass(frozen=True)
class Headline:
    """The overview's answer. ``last``/``previous`` runs (``previous``: the nearest
    ancestor run of the same machine + environment, None when there is none);
    ``regressions``/``improvements`` (largest first, confirmed first); ``noise``:
    values beyond the threshold with overlapping intervals; ``not_judged``: values
    compared without an interval on both sides; ``compared``: values with a previous
    value; ``by_noise``/``by_default``: values judged by measured noise / by asv's
    default threshold; ``noise_runs``: (fewest, most) repeat runs behind a measured
    noise, None when none; ``ordering``: the commit order used (its ``fallback`` says
    when it is not git's); ``other_machines``: (machine, when it last ran);
    ``in_history``: changes beyond the noise back into the range the series already
    spanned (:func:`regressions.within_history`), not called."""

    last: Run
    previous: Run | None
    regressions: list[Step]
    improvements: list[Step]
    noise: int
    not_judged: int
    compared: int
    by_noise: int
    by_default: int
    noise_runs: tuple[int, int] | None
    ordering: order.Ordering
    other_machines: list[tuple[str, datetime.datetime]]
    in_history: int = 0

    @property
    def regressed(self) -> bool:
        """Any regression, confirmed or new."""
        return bool(self.regressions)

    @property
    def called(self) -> bool:
        """A regression is *called* (the red headline) only when a second point confirms
        it: a new step of the last run alone is a change to confirm (amber)."""
        return bool(self.confirmed)

    @property
    def to_confirm(self) -> list[Step]:
        """The last run's own steps: the next commit confirms or drops them."""
        return [s for s in self.regressions if not s.confirmed]

    @property
    def confirmed(self) -> list[Step]:
        return [s for s in self.regressions if s.confirmed]

    @property
    def same_env(self) -> bool:
        return True   # only the same environment is ever compared


#: The verdict of a change back into the range its series already spanned.
IN_HISTORY = "within the history's range"


def when(run: Run) -> datetime.datetime:
    """When ``run`` measured: asv's latest ``started_at``, else its commit date."""
    return run.ran_at or run.date


def _params(results: list[ResultsDir], name: str, combo: tuple[str, ...]) -> str:
    for d in results:
        if name in d.benchmarks:
            names = d.benchmarks[name].param_names
            return ", ".join(f"{k}={v}" for k, v in zip(names, combo))
    return ", ".join(combo)


def _bench(results: list[ResultsDir], name: str):
    return next((d.benchmarks[name] for d in results if name in d.benchmarks), None)


def _ordering_of(runs: list[Run]) -> order.Ordering:
    dates: dict[str, datetime.datetime] = {}
    for r in runs:
        dates[r.commit] = min(dates.get(r.commit, r.date), r.date)
    return order.by_date(dates, "no git ordering given: commits ordered by asv's commit "
                                "date")


def headline(results: list[ResultsDir], thresholds: Mapping[str, float],
             noise: NoiseData | None = None, ordering: order.Ordering | None = None
             ) -> Headline | None:
    """The headline of ``results`` (None when they hold no run). ``thresholds``: asv's
    ``regressions_thresholds`` ({regex: fraction}); ``noise``: the measured run-to-run
    noise (None: none); ``ordering``: the commit order (None: asv's commit date, said
    in the ordering's ``fallback``)."""
    runs = [r for d in results for r in d.runs]
    if not runs:
        return None
    ordering = ordering or _ordering_of(runs)
    commits: dict[tuple[str, str], set[str]] = {}
    for r in runs:
        commits.setdefault((r.machine, r.env), set()).add(r.commit)
    last = max(runs, key=lambda r: (ordering.position(r.commit),
                                    len(commits[(r.machine, r.env)]), when(r)))
    same = [r for r in runs if r.machine == last.machine and r.env == last.env
            and r.commit != last.commit]
    at = {r.commit: r for r in same}
    prev_commit = ordering.previous(last.commit, list(at))
    newest: dict[str, datetime.datetime] = {}
    for r in runs:
        if r.machine != last.machine:
            newest[r.machine] = max(newest.get(r.machine, when(r)), when(r))
    regs: list[Step] = []
    imps: list[Step] = []
    count = dict(noise=0, not_judged=0, compared=0, by_noise=0, by_default=0, in_history=0)
    spent: list[int] = []
    for name, values in last.values.items():
        bench = _bench(results, name)
        unit = bench.unit if bench else ""
        better = direction.better(unit, name, bench.doc if bench else "")
        for combo, after in values.items():
            having = {c: r for c, r in at.items() if combo in r.values.get(name, {})}
            p = ordering.previous(last.commit, list(having))
            if p is None:
                continue
            prev = having[p]
            count["compared"] += 1
            rule = regressions.rule_for(last.machine, name, combo, noise, thresholds)
            count["by_noise" if rule.source == "noise" else "by_default"] += 1
            if rule.runs:
                spent.append(rule.runs)
            before = prev.values[name][combo]
            b_ci, a_ci = prev.ci.get(name, {}).get(combo), last.ci.get(name, {}).get(combo)
            params = _params(results, name, combo)
            verdict = regressions.judge(before, after, b_ci, a_ci, rule.threshold, better)
            series = [having[c].values[name][combo] for c in sorted(
                having, key=ordering.position)]   # git order, up to p
            if verdict in (regressions.REGRESSION, regressions.IMPROVEMENT) and \
                    regressions.within_history(after, series):
                verdict = IN_HISTORY
                count["in_history"] += 1
            if verdict == regressions.NOT_JUDGED:
                count["not_judged"] += 1
            elif verdict == regressions.NOISE:
                count["noise"] += 1
            elif verdict in (regressions.REGRESSION, regressions.IMPROVEMENT):
                (regs if verdict == regressions.REGRESSION else imps).append(Step(
                    name, params, unit, before, after, b_ci, a_ci, rule, prev, last, False,
                    better))
            o = ordering.previous(p, list(having))
            if o is None or ordering.next(o, list(having) + [last.commit]) != p \
                    or ordering.next(p, list(having) + [last.commit]) != last.commit:
                continue
            older = having[o]
            o_val, o_ci = older.values[name][combo], older.ci.get(name, {}).get(combo)
            step = regressions.judge(o_val, before, o_ci, b_ci, rule.threshold, better)
            upto_o = series[:sorted(having, key=ordering.position).index(o) + 1]
            if step in (regressions.REGRESSION, regressions.IMPROVEMENT) and \
                    regressions.confirmation((o_val, o_ci), step, (after, a_ci), rule,
                                             better) == "confirmed" and \
                    not any(regressions.within_history(v, upto_o) for v in (before, after)):
                (regs if step == regressions.REGRESSION else imps).append(Step(
                    name, params, unit, o_val, after, o_ci, a_ci, rule, older, prev, True,
                    better))
    key = (lambda s: (not s.confirmed, -s.size, s.benchmark, s.params))
    return Headline(last=last, previous=at.get(prev_commit) if prev_commit else None,
                    regressions=sorted(regs, key=key), improvements=sorted(imps, key=key),
                    noise=count["noise"], not_judged=count["not_judged"],
                    compared=count["compared"], by_noise=count["by_noise"],
                    by_default=count["by_default"], in_history=count["in_history"],
                    noise_runs=(min(spent), max(spent)) if spent else None,
                    ordering=ordering,
                    other_machines=sorted(newest.items(), key=lambda kv: kv[1],
                                          reverse=True))
