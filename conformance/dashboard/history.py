"""From asv runs to what the dashboard shows: history charts and the versions view.

A chart is one benchmark at one combination of its parameters other than ``backend``
(the plugin era); its series are one per (machine when there are several,
environment, ``backend`` value), each point the value at a commit date. The versions
view is, for every benchmark and combination, the value at each series' newest
commit side by side.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable

from conformance.dashboard import charts
from conformance.dashboard.asv_results import Benchmark, ResultsDir

ERA_PARAM = "backend"
RATIO_UNIT = "ratio"
Point = tuple[datetime.datetime, float]


@dataclasses.dataclass
class Chart:
    """One chart: ``benchmark`` at parameters ``fixed`` (e.g. "nbytes=1024"), its
    series as ``{label: [(date, value), ...]}`` in legend order."""

    benchmark: Benchmark
    fixed: str
    series: dict[str, list[Point]]

    @property
    def is_ratio(self) -> bool:
        return self.benchmark.unit == RATIO_UNIT

    @property
    def anchor(self) -> str:
        return "b-" + "".join(c if c.isalnum() else "-" for c in
                              f"{self.benchmark.name}-{self.fixed}")

    def svg(self) -> str:
        return charts.line_chart(list(self.series.items()), unit=self.benchmark.unit,
                                 reference=1.0 if self.is_ratio else None)

    def legend(self) -> list[tuple[str, str]]:
        """(label, colour) of every series, in the colours the chart uses."""
        return [(label, charts.PALETTE[i % len(charts.PALETTE)])
                for i, label in enumerate(self.series)]

    def newest(self) -> dict[str, float]:
        """The value at each series' newest commit date."""
        return {label: max(pts)[1] for label, pts in self.series.items() if pts}


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


def build(dirs: Iterable[ResultsDir]) -> list[Chart]:
    """Every chart of the runs in ``dirs``, sorted by benchmark name then parameters.
    Each run's parameters are named by its own directory's benchmarks.json; a
    benchmark listed in more than one directory takes its first definition for unit
    and title."""
    dirs = list(dirs)
    several = len({run.machine for d in dirs for run in d.runs}) > 1
    defs: dict[str, Benchmark] = {}
    for d in dirs:
        for name, bench in d.benchmarks.items():
            defs.setdefault(name, bench)
    found: dict[tuple[str, str], dict[str, list[Point]]] = {}
    for d in dirs:
        for run in d.runs:
            for name, values in run.values.items():
                bench = d.benchmarks[name]  # this directory's parameter names
                for combo, value in values.items():
                    pairs = list(zip(bench.param_names, map(show, combo)))
                    era = dict(pairs).get(ERA_PARAM)
                    fixed = ", ".join(f"{k}={v}" for k, v in pairs if k != ERA_PARAM)
                    label = " | ".join(
                        ([run.machine] if several else []) + [run.env]
                        + ([f"{ERA_PARAM} {era}"] if era is not None else []))
                    points = found.setdefault((name, fixed), {}).setdefault(label, [])
                    points.append((run.date, value))
    return [Chart(benchmark=defs[name], fixed=fixed,
                  series={k: sorted(v) for k, v in sorted(series.items())})
            for (name, fixed), series in sorted(found.items())]


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
