"""The overview's headline: did the last run regress against the previous run of its
machine?

*The last run* is the asv results file measured last (its ``started_at``; the commit
date when asv stored none) over every results directory given. *The previous run* is
the newest earlier run on the same machine, in the same environment when there is one
(a nightly compares like with like), else in any environment of that machine (then the
jax release range is part of the change). Runs of other machines are never compared
with it: asv's timings of two machines are separate series. The headline names them
and when each last ran instead.

A benchmark value counts as *changed* when it is beyond asv's threshold for that
benchmark (:func:`conformance.dashboard.regressions.threshold_for`) **and** outside the
noise: asv's stored 99% confidence intervals of the two values do not overlap (asv's
own pessimistic CI test, ``asv compare``). A value without a stored interval (a single
sample) is compared by the threshold alone and marked ``no interval``.

A change counts only if it persists. A change of the last run against the previous
is *new*: the next run confirms or dismisses it. A change of the previous run against
the one before it (same machine and, where possible, environment) is *confirmed* when
the last run keeps it (the last value is changed the same way against the value before
the step); one the last run went back on was noise and is not listed. Regressions (up:
slower, or a worse ratio) are listed apart from improvements.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping

from conformance.dashboard.asv_results import ResultsDir, Run
from conformance.dashboard.regressions import BeforeAfter, beyond, changed, threshold_for


@dataclasses.dataclass(frozen=True)
class Step(BeforeAfter):
    """One benchmark value of the last run against the previous run.

    ``before``/``after`` in ``unit`` (seconds for times, a plain number for ratios);
    ``before_ci``/``after_ci`` asv's 99% intervals (None where asv stored none);
    ``threshold`` the relative threshold that applied; ``since``/``until``: the runs
    the step lies between; ``confirmed``: a step of the previous run that the last run
    kept (``after`` is then the last run's value; see the module doc)."""

    benchmark: str
    params: str
    unit: str
    before: float
    after: float
    before_ci: tuple[float, float] | None
    after_ci: tuple[float, float] | None
    threshold: float
    since: Run
    until: Run
    confirmed: bool


@dataclasses.dataclass(frozen=True)
class Headline:
    """The overview's answer. ``last``/``previous`` are runs (``previous`` None when the
    machine has no earlier run); ``same_env``: the two ran in one environment;
    ``regressions``/``improvements``: the changed values (largest first); ``noise``:
    values beyond the threshold but inside the noise (overlapping intervals);
    ``compared``: values present in both runs; ``other_machines``: (machine, when it
    last ran) of every other machine, newest first."""

    last: Run
    previous: Run | None
    same_env: bool
    regressions: list[Step]
    improvements: list[Step]
    noise: int
    compared: int
    other_machines: list[tuple[str, datetime.datetime]]

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    @property
    def confirmed(self) -> list[Step]:
        return [s for s in self.regressions if s.confirmed]


def when(run: Run) -> datetime.datetime:
    """When ``run`` measured: asv's latest ``started_at``, else its commit date."""
    return run.ran_at or run.date


def _previous(run: Run, runs: list[Run]) -> tuple[Run | None, bool]:
    earlier = [r for r in runs if r.machine == run.machine and when(r) < when(run)]
    same = [r for r in earlier if r.env == run.env]
    pool = same or earlier
    return (max(pool, key=when), bool(same)) if pool else (None, False)


def _params(results: list[ResultsDir], name: str, combo: tuple[str, ...]) -> str:
    for d in results:
        if name in d.benchmarks:
            names = d.benchmarks[name].param_names
            return ", ".join(f"{k}={v}" for k, v in zip(names, combo))
    return ", ".join(combo)


def _unit(results: list[ResultsDir], name: str) -> str:
    return next((d.benchmarks[name].unit for d in results if name in d.benchmarks), "")


def headline(results: list[ResultsDir], thresholds: Mapping[str, float]) -> Headline | None:
    """The headline of ``results`` (None when they hold no run); ``thresholds``: asv's
    ``regressions_thresholds`` ({regex: fraction})."""
    runs = [r for d in results for r in d.runs]
    if not runs:
        return None
    last = max(runs, key=when)
    previous, same_env = _previous(last, runs)
    before_that = _previous(previous, runs)[0] if previous else None
    newest: dict[str, datetime.datetime] = {}
    for r in runs:
        if r.machine != last.machine:
            newest[r.machine] = max(newest.get(r.machine, when(r)), when(r))
    others = sorted(newest.items(), key=lambda kv: kv[1], reverse=True)
    regressions: list[Step] = []
    improvements: list[Step] = []
    noise = compared = 0
    if previous is not None:
        for name, values in last.values.items():
            for combo, after in values.items():
                before = previous.values.get(name, {}).get(combo)
                if before is None:
                    continue
                compared += 1
                t = threshold_for(name, thresholds)
                b_ci = previous.ci.get(name, {}).get(combo)
                a_ci = last.ci.get(name, {}).get(combo)
                way = changed(before, after, b_ci, a_ci, t)
                unit, params = _unit(results, name), _params(results, name, combo)
                if way:
                    (regressions if way > 0 else improvements).append(Step(
                        name, params, unit, before, after, b_ci, a_ci, t, previous, last,
                        False))
                else:
                    noise += beyond(before, after, t) != 0
                older = before_that.values.get(name, {}).get(combo) if before_that else None
                if older is None or before_that is None:
                    continue
                o_ci = before_that.ci.get(name, {}).get(combo)
                step = changed(older, before, o_ci, b_ci, t)
                if step and changed(older, after, o_ci, a_ci, t) == step:
                    (regressions if step > 0 else improvements).append(Step(
                        name, params, unit, older, after, o_ci, a_ci, t, before_that,
                        previous, True))
    key = (lambda s: (not s.confirmed, -s.size, s.benchmark, s.params))
    return Headline(last=last, previous=previous, same_env=same_env,
                    regressions=sorted(regressions, key=key),
                    improvements=sorted(improvements, key=key), noise=noise,
                    compared=compared, other_machines=others)
