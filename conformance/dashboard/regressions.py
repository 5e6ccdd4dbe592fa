"""The regression list: every change beyond asv's threshold and outside the noise between
consecutive points.

asv's ``regressions_thresholds`` (in ``asv.conf.json``) maps a regular expression over
benchmark names to a relative threshold; where several match, the largest applies, and
where none does (or the key is absent) asv's default :data:`DEFAULT_THRESHOLD` (5%).
A change from ``before`` to ``after`` (consecutive points of one series of a chart, in
x order: releases or commits) is listed when ``after > before * (1 + t)`` (up: slower
for times, worse for ratios) or ``after < before / (1 + t)`` (down), as ``asv compare``
counts a factor, and the two values' stored 99% confidence intervals do not overlap
(asv's pessimistic interval test; a value without an interval is judged by the
threshold alone). A change beyond the threshold inside the noise is not listed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from conformance import file_limits
from conformance.certification.results import jsontext
from conformance.dashboard.errors import MalformedInput
from conformance.dashboard.history import Chart

DEFAULT_THRESHOLD = 0.05


class BeforeAfter:
    """What a change between two values (``before``, ``after``) says of itself."""

    before: float
    after: float

    @property
    def factor(self) -> float:
        """after / before (inf when before is 0)."""
        return self.after / self.before if self.before else float("inf")

    @property
    def up(self) -> bool:
        """A regression: slower, or a worse (larger) ratio."""
        return self.after > self.before

    @property
    def size(self) -> float:
        """The factor either way (>= 1; inf when before is 0)."""
        f = self.factor
        return max(f, 1 / f) if f else float("inf")


@dataclasses.dataclass(frozen=True)
class Change(BeforeAfter):
    """One change: ``benchmark`` (name) at ``params`` in series ``series`` from x
    ``before_at`` to ``after_at`` (releases or short commits, per ``axis``), values in
    ``unit``; ``threshold`` is the relative threshold that applied."""

    benchmark: str
    params: str
    series: str
    axis: str
    before_at: str
    after_at: str
    before: float
    after: float
    unit: str
    threshold: float
    anchor: str


def thresholds(config: Path | None) -> dict[str, float]:
    """``regressions_thresholds`` of the asv config file ``config`` ({regex: fraction});
    ``{".*": DEFAULT_THRESHOLD}`` when ``config`` is None or has no such key. asv's
    ``//`` comment lines are allowed. Raises MalformedInput when the file is not JSON,
    or a threshold is not a number >= 0 or a key not a regular expression."""
    if config is None:
        return {".*": DEFAULT_THRESHOLD}
    config = Path(config)
    try:
        text = file_limits.read_text(config)   # no FIFO or device, 16 MiB
        doc = jsontext.loads("\n".join(ln for ln in text.splitlines()
                                   if not ln.lstrip().startswith("//")))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise MalformedInput(f"{config}: not a readable asv config "
                             f"({' '.join(str(err).split())})") from err
    table = doc.get("regressions_thresholds") if isinstance(doc, dict) else None
    if table is None:
        return {".*": DEFAULT_THRESHOLD}
    if not isinstance(table, dict):
        raise MalformedInput(f"{config}: key 'regressions_thresholds' is not an object")
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise MalformedInput(f"{config}: regressions_thresholds[{key!r}] is not a "
                                 "number >= 0")
        try:
            re.compile(key)
        except re.error as err:
            raise MalformedInput(f"{config}: regressions_thresholds key {key!r} is not a "
                                 f"regular expression ({err})") from err
    return {k: float(v) for k, v in table.items()}


def threshold_for(name: str, table: Mapping[str, float]) -> float:
    """The threshold of benchmark ``name``: the largest of the entries of ``table`` whose
    regex matches it (``re.search``), else :data:`DEFAULT_THRESHOLD`."""
    matching = [t for pattern, t in table.items() if re.search(pattern, name)]
    return max(matching) if matching else DEFAULT_THRESHOLD


Interval = tuple[float, float]


def _disjoint(a: Interval | None, b: Interval | None) -> bool:
    """asv's interval test: two values differ when their 99% intervals do not overlap;
    True when either has none (then the threshold alone decides)."""
    if a is None or b is None:
        return True
    return a[1] < b[0] or b[1] < a[0]


def beyond(before: float, after: float, threshold: float) -> int:
    """+1 when ``after > before * (1 + threshold)``, -1 when ``after < before / (1 +
    threshold)``, else 0 (the noise is not looked at)."""
    return 1 if after > before * (1 + threshold) else \
        -1 if after < before / (1 + threshold) else 0


def changed(before: float, after: float, before_ci: Interval | None,
            after_ci: Interval | None, threshold: float) -> int:
    """+1 when ``after`` is a regression of ``before`` (beyond ``threshold`` and outside
    the noise: :func:`_disjoint` intervals), -1 an improvement, 0 neither."""
    return beyond(before, after, threshold) if _disjoint(before_ci, after_ci) else 0


def find(chart_list: Iterable[Chart], table: Mapping[str, float]) -> list[Change]:
    """Every change beyond its threshold and outside the noise (:func:`changed`) between
    consecutive points of every series of ``chart_list``, largest factor (either way)
    first."""
    out = []
    for chart in chart_list:
        t = threshold_for(chart.benchmark.name, table)
        for label in chart.series:
            pts = chart.ordered(label)
            for (x0, v0, _, c0), (x1, v1, _, c1) in zip(pts, pts[1:]):
                if changed(v0, v1, c0, c1, t):
                    out.append(Change(chart.benchmark.name, chart.fixed, label, chart.axis,
                                      x0, x1, v0, v1, chart.benchmark.unit, t,
                                      chart.anchor))
    return sorted(out, key=lambda c: (-c.size, c.benchmark, c.params, c.series))
