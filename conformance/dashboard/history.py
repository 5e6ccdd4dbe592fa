"""From asv runs to what the dashboard shows: charts on two x axes and the versions view.

A chart is one benchmark at one combination of its parameters other than ``backend``
(the plugin era), on one axis:

- ``commit`` (:func:`build`): x = the commits in git topological order
  (:mod:`.order`; asv's commit date only under its stated fallback); one series per
  (machine when there are several, environment, ``backend`` value). A point's previous
  point is its nearest ancestor in the series, its next the nearest descendant.
- ``release`` (:func:`by_release`): x = the jaxlib release of each run's environment
  (the release matrix), sorted by :func:`conformance.certification.compare.scoreboard.release_key`;
  one series per (machine when there are several, ``backend`` value); the value of a
  release is that of its newest run.

Every point is ``(x, value, note)``; the note names the commit (and environment) for
the tooltip. The versions view is, for every benchmark and combination, the value at
each commit series' newest commit side by side.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from pathlib import Path

from conformance.certification.compare.scoreboard import release_key
from conformance.dashboard import charts, direction, order
from conformance.dashboard.asv_results import Benchmark, ResultsDir, Run

ERA_PARAM = "backend"
RATIO_UNIT = "ratio"
MAX_SERIES = 8   # per chart: more are faceted into several charts (Chart.facets)
AXES = ("commit", "release")
#: (x, value, note, asv's 99% interval or None)
Point = tuple[str, float, str, "tuple[float, float] | None"]


@dataclasses.dataclass
class Chart:
    """One chart: ``benchmark`` at parameters ``fixed`` (e.g. "nbytes=1024") on
    ``axis`` (one of :data:`AXES`), x in the order ``categories``; its series as
    ``{label: [(x, value, note, interval), ...]}`` in legend order (``interval``: asv's
    stored 99% confidence interval, None where it stored none)."""

    benchmark: Benchmark
    fixed: str
    series: dict[str, list[Point]]
    axis: str = "commit"
    categories: list[str] = dataclasses.field(default_factory=list)
    #: label -> (machine, full parameter combination incl. ``backend``)
    origin: dict[str, tuple[str, tuple[str, ...]]] = dataclasses.field(default_factory=dict)
    #: commit axis: short hash -> full hash, and the ordering the x axis follows
    commits: dict[str, str] = dataclasses.field(default_factory=dict)
    ordering: order.Ordering | None = None
    part: tuple[int, int] = (1, 1)

    @property
    def is_ratio(self) -> bool:
        return direction.is_ratio(self.benchmark.unit, self.benchmark.name)

    def previous(self, x: str, xs: list[str]) -> str | None:
        """The x of ``xs`` that ``x`` is compared with: on the commit axis its nearest
        git ancestor (:meth:`order.Ordering.previous`), else the x before it in
        :attr:`categories`; None when there is none."""
        if self.ordering is not None and self.axis == "commit":
            full = {self.commits.get(c, c): c for c in xs}
            found = self.ordering.previous(self.commits.get(x, x), list(full))
            return full[found] if found else None
        where = {c: i for i, c in enumerate(self.categories)}
        older = [c for c in xs if where[c] < where[x]]
        return max(older, key=where.get) if older else None

    def next(self, x: str, xs: list[str]) -> str | None:
        """The x of ``xs`` that confirms a change at ``x`` (the nearest descendant, or
        the next category); None when there is none."""
        if self.ordering is not None and self.axis == "commit":
            full = {self.commits.get(c, c): c for c in xs}
            found = self.ordering.next(self.commits.get(x, x), list(full))
            return full[found] if found else None
        where = {c: i for i, c in enumerate(self.categories)}
        newer = [c for c in xs if where[c] > where[x]]
        return min(newer, key=where.get) if newer else None

    def facets(self) -> list["Chart"]:
        """This chart split into charts of at most :data:`MAX_SERIES` series each (in
        legend order, so one environment's series stay together); ``part`` = (i, n)."""
        labels = list(self.series)
        if len(labels) <= MAX_SERIES:
            return [self]
        groups = [labels[i:i + MAX_SERIES] for i in range(0, len(labels), MAX_SERIES)]
        out = []
        for i, group in enumerate(groups):
            used = {p[0] for lb in group for p in self.series[lb]}
            out.append(dataclasses.replace(
                self, series={lb: self.series[lb] for lb in group},
                categories=[c for c in self.categories if c in used],
                origin={lb: self.origin[lb] for lb in group if lb in self.origin},
                part=(i + 1, len(groups))))
        return out

    @property
    def anchor(self) -> str:
        suffix = f"-part{self.part[0]}" if self.part[0] > 1 else ""
        return f"{self.axis[0]}-" + "".join(c if c.isalnum() else "-" for c in
                                            f"{self.benchmark.name}-{self.fixed}") + suffix

    def ordered(self, label: str) -> list[Point]:
        """The points of series ``label`` in x order."""
        where = {c: i for i, c in enumerate(self.categories)}
        return sorted(self.series[label], key=lambda p: where[p[0]])

    def svg(self) -> str:
        return charts.line_chart(list(self.series.items()), unit=self.benchmark.unit,
                                 reference=1.0 if self.is_ratio else None,
                                 categories=self.categories)

    def legend(self) -> list[tuple[str, charts.Style]]:
        """(label, style) of every series, in the styles the chart uses."""
        return [(label, charts.style(i)) for i, label in enumerate(self.series)]

    def newest(self) -> dict[str, float]:
        """The value at each series' last x (newest commit or release)."""
        return {label: self.ordered(label)[-1][1] for label, pts in self.series.items()
                if pts}


def show(value: str) -> str:
    """asv's repr of a parameter value for people: ``'built-in'`` -> ``built-in``."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def reference_of(bench: Benchmark) -> str:
    """What a ratio benchmark is relative to: its docstring, else its ``pretty_name``,
    else the part of its name after ``_vs_``."""
    if bench.doc:
        return bench.doc
    if bench.title != bench.name:
        return bench.title
    method = bench.name.rsplit(".", 1)[-1]
    return method.split("_vs_", 1)[1].replace("_", " ") if "_vs_" in method else "not named"


def _definitions(dirs: list[ResultsDir]) -> dict[str, Benchmark]:
    defs: dict[str, Benchmark] = {}
    for d in dirs:
        for name, bench in d.benchmarks.items():
            defs.setdefault(name, bench)
    return defs


def _cases(dirs: list[ResultsDir]) -> Iterable[tuple[Run, str, str, str | None, float,
                                                    tuple[float, float] | None,
                                                    tuple[str, ...]]]:
    """(run, benchmark name, fixed parameters, era or None, value, interval, combo) of
    every value."""
    for d in dirs:
        for run in d.runs:
            for name, values in run.values.items():
                bench = d.benchmarks[name]  # this directory's parameter names
                for combo, value in values.items():
                    pairs = list(zip(bench.param_names, map(show, combo)))
                    era = dict(pairs).get(ERA_PARAM)
                    fixed = ", ".join(f"{k}={v}" for k, v in pairs if k != ERA_PARAM)
                    yield run, name, fixed, era, value, run.ci.get(name, {}).get(combo), combo


def ordering_of(dirs: Iterable[ResultsDir], repo: Path | None) -> order.Ordering:
    """The git ordering (:func:`order.of_commits`) of every commit of ``dirs`` in the
    repository ``repo``; the overview and the commit axis both use it."""
    dates: dict[str, datetime.datetime] = {}
    for d in dirs:
        for run in d.runs:
            dates[run.commit] = min(dates.get(run.commit, run.date), run.date)
    return order.of_commits(dates, repo)


def build(dirs: Iterable[ResultsDir], ordering: order.Ordering | None = None) -> list[Chart]:
    """Every commit-axis chart of the runs in ``dirs``, sorted by benchmark name then
    parameters; x = short commit hashes in ``ordering``'s order (None: made with
    :func:`ordering_of` without a repository, i.e. asv's commit date, said in its
    ``fallback``). Each run's parameters are named by its own directory's
    benchmarks.json; a benchmark listed in more than one directory takes its first
    definition for unit and title."""
    dirs = list(dirs)
    ordering = ordering or ordering_of(dirs, None)
    several = len({run.machine for d in dirs for run in d.runs}) > 1
    defs = _definitions(dirs)
    found: dict[tuple[str, str], dict[str, list[Point]]] = {}
    origin: dict[tuple[str, str], dict[str, tuple[str, tuple[str, ...]]]] = {}
    full: dict[str, str] = {}
    for run, name, fixed, era, value, ci, combo in _cases(dirs):
        label = " | ".join(([run.machine] if several else []) + [run.env]
                           + ([f"{ERA_PARAM} {era}"] if era is not None else []))
        commit = run.commit[:8]
        full[commit] = run.commit
        note = f"commit {run.commit[:12]}, {run.date:%Y-%m-%d %H:%M} UTC"
        found.setdefault((name, fixed), {}).setdefault(label, []).append(
            (commit, value, note, ci))
        origin.setdefault((name, fixed), {})[label] = (run.machine, combo)
    seq = [c[:8] for c in ordering.sequence]
    order_of = seq + sorted(set(full) - set(seq))
    out = []
    for (name, fixed), series in sorted(found.items()):
        used = {p[0] for pts in series.values() for p in pts}
        out.append(Chart(benchmark=defs[name], fixed=fixed, axis="commit",
                         categories=[c for c in order_of if c in used],
                         series={k: v for k, v in sorted(series.items())},
                         origin=origin[(name, fixed)], commits=dict(full),
                         ordering=ordering))
    return out


def by_release(dirs: Iterable[ResultsDir], ordering: order.Ordering | None = None
               ) -> list[Chart]:
    """Every release-axis chart of the runs in ``dirs`` that name their jaxlib
    (:attr:`Run.release`), sorted like :func:`build`; x = the releases of that chart,
    oldest first. Of several runs of one release in a series the one of the newest
    commit in ``ordering`` (git topological order; None: made with :func:`ordering_of`
    without a repository, i.e. asv's commit date, said in its ``fallback``) is kept,
    of one commit the one of the latest asv date; its note names the commit and
    environment."""
    dirs = list(dirs)
    ordering = ordering or ordering_of(dirs, None)

    def newer(run: Run, than: tuple) -> bool:
        return (ordering.position(run.commit), run.date) > (than[4], than[0])
    several = len({run.machine for d in dirs for run in d.runs}) > 1
    defs = _definitions(dirs)
    found: dict[tuple[str, str], dict[str, dict[str, tuple]]] = {}
    origin: dict[tuple[str, str], dict[str, tuple[str, tuple[str, ...]]]] = {}
    for run, name, fixed, era, value, ci, combo in _cases(dirs):
        if run.release is None:
            continue
        label = " | ".join(([run.machine] if several else [])
                           + ([f"{ERA_PARAM} {era}"] if era is not None else ["all"]))
        origin.setdefault((name, fixed), {})[label] = (run.machine, combo)
        at = found.setdefault((name, fixed), {}).setdefault(label, {})
        if run.release not in at or newer(run, at[run.release]):
            at[run.release] = (run.date, value,
                               f"commit {run.commit[:12]}, {run.env}", ci,
                               ordering.position(run.commit))
    out = []
    for (name, fixed), series in sorted(found.items()):
        releases = sorted({r for pts in series.values() for r in pts}, key=release_key)
        out.append(Chart(benchmark=defs[name], fixed=fixed, axis="release",
                         categories=releases, origin=origin[(name, fixed)],
                         series={label: [(r, v, note, ci)
                                         for r, (_, v, note, ci, _) in pts.items()]
                                 for label, pts in sorted(series.items())}))
    return out


def without_results(dirs: Iterable[ResultsDir]) -> list[Benchmark]:
    """The benchmarks that ``benchmarks.json`` lists but no run of ``dirs`` has a value
    of (failed, skipped or never run), sorted by name."""
    dirs = list(dirs)
    measured = {name for d in dirs for run in d.runs for name, v in run.values.items() if v}
    return [b for name, b in sorted(_definitions(dirs).items()) if name not in measured]


def versions(chart_list: list[Chart]) -> list[tuple[Benchmark, list[str], list[Chart]]]:
    """Per benchmark: (benchmark, the series labels of all its charts sorted, its
    charts) -- the rows and columns of the versions view."""
    out: dict[str, tuple[Benchmark, set[str], list[Chart]]] = {}
    for chart in chart_list:
        bench, labels, rows = out.setdefault(chart.benchmark.name,
                                             (chart.benchmark, set(), []))
        labels.update(chart.series)
        rows.append(chart)
    return [(bench, sorted(labels), rows) for bench, labels, rows in out.values()]
