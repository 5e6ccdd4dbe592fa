"""Judging a change between two values of one benchmark: the rule of the whole dashboard.

A change from ``before`` to ``after`` is a **regression** (or an improvement) only when

(a) both values have asv's stored 99% confidence interval and the two intervals do not
    overlap (asv's pessimistic test), **and**
(b) the change is larger than that benchmark's run-to-run noise: ``after > before *
    (1 + t)`` or ``after < before / (1 + t)`` (a factor, as ``asv compare`` counts),
    where ``t`` is the larger of asv's ``regressions_thresholds`` value of the benchmark
    (``asv.conf.json``; where several regexes match the largest applies; none:
    :data:`DEFAULT_THRESHOLD`) and, when repeated runs of one commit measured that
    machine + benchmark + parameters, twice their noise (:attr:`.noise.Noise.threshold`):
    noise can only raise the bar, never lower it below asv's.

A value without an interval (a single sample) is **never** a regression: its verdict is
:data:`NOT_JUDGED` ("no interval: not judged"). Which way is worse comes from the unit
(:mod:`.direction`): a throughput going up is an improvement. *Previous* and *next*
points are given by the caller (git topology on the commit axis, :mod:`.order`;
release order on the release axis). A change is *confirmed* when the next point keeps
it (judged against the same ``before``: two consecutive points, PyTorch HUD's rule);
one the next point went back on is not listed; one without a next point yet is *new*.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from conformance import file_limits
from conformance.certification import jsontext
from conformance.dashboard import direction
from conformance.dashboard.errors import MalformedInput
from conformance.dashboard.noise import NoiseData

DEFAULT_THRESHOLD = 0.05
REGRESSION, IMPROVEMENT = "regression", "improvement"
NOISE, SAME, NOT_JUDGED = "within noise", "unchanged", "no interval: not judged"
Interval = tuple[float, float]


@dataclasses.dataclass(frozen=True)
class Rule:
    """The threshold one value is judged by: ``threshold`` (a fraction), ``source``
    "noise" (measured from ``runs`` repeat runs) or "asv default" (``runs`` 0)."""

    threshold: float
    source: str
    runs: int = 0


class BeforeAfter:
    """What a change between two values (``before``, ``after``, in ``unit``) says of
    itself; ``better`` is :data:`direction.LOWER` or :data:`direction.HIGHER`."""

    before: float
    after: float
    unit: str
    better: str

    @property
    def factor(self) -> float:
        """after / before (inf when before is 0)."""
        return self.after / self.before if self.before else float("inf")

    @property
    def up(self) -> bool:
        """Worse: larger when lower is better, smaller when higher is better."""
        return (self.after > self.before) == (self.better == direction.LOWER)

    @property
    def size(self) -> float:
        """The factor either way (>= 1; inf when before is 0)."""
        f = self.factor
        return max(f, 1 / f) if f else float("inf")

    @property
    def text(self) -> str:
        """e.g. "2.00x slower", "2.00x faster", "1.50x worse" (x is the times sign)."""
        worse, better = direction.words(self.unit)
        return f"{self.size:.2f}\u00d7 {worse if self.up else better}"


@dataclasses.dataclass(frozen=True)
class Change(BeforeAfter):
    """One change: ``benchmark`` (name) at ``params`` in series ``series`` from x
    ``before_at`` to ``after_at`` (releases or short commits, per ``axis``), values in
    ``unit``; ``rule`` the threshold that applied; ``status`` "confirmed" or "new"."""

    benchmark: str
    params: str
    series: str
    axis: str
    before_at: str
    after_at: str
    before: float
    after: float
    unit: str
    rule: Rule
    anchor: str
    better: str = direction.LOWER
    status: str = "new"

    @property
    def threshold(self) -> float:
        return self.rule.threshold


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


def rule_for(machine: str, name: str, combo: tuple[str, ...], noise: NoiseData | None,
             table: Mapping[str, float]) -> Rule:
    """The :class:`Rule` of one value: asv's threshold of ``name`` in ``table``, raised
    to the measured noise's threshold when ``noise`` has one that is larger (source
    "noise"); a noise below asv's threshold never lowers it (source "asv default",
    ``runs`` still the repeat runs measured)."""
    default = threshold_for(name, table)
    measured = noise.of(machine, name, combo) if noise is not None else None
    if measured is not None and measured.threshold > default:
        return Rule(measured.threshold, "noise", measured.runs)
    return Rule(default, "asv default", measured.runs if measured is not None else 0)


def disjoint(a: Interval | None, b: Interval | None) -> bool:
    """asv's interval test: True when both intervals exist and do not overlap."""
    return a is not None and b is not None and (a[1] < b[0] or b[1] < a[0])


def beyond(before: float, after: float, threshold: float) -> int:
    """+1 when ``after > before * (1 + threshold)``, -1 when ``after < before / (1 +
    threshold)``, else 0 (the intervals are not looked at)."""
    return 1 if after > before * (1 + threshold) else \
        -1 if after < before / (1 + threshold) else 0


def judge(before: float, after: float, before_ci: Interval | None,
          after_ci: Interval | None, threshold: float, better: str) -> str:
    """The verdict on a change (module doc): :data:`NOT_JUDGED` when either value has no
    interval, :data:`SAME` within ``threshold``, :data:`NOISE` beyond it with
    overlapping intervals, else :data:`REGRESSION` (worse, per ``better``) or
    :data:`IMPROVEMENT`."""
    if before_ci is None or after_ci is None:
        return NOT_JUDGED
    move = beyond(before, after, threshold)
    if not move:
        return SAME
    if not disjoint(before_ci, after_ci):
        return NOISE
    return REGRESSION if (move > 0) == (better == direction.LOWER) else IMPROVEMENT


def within_history(value: float, history: Sequence[float]) -> bool:
    """True when ``value`` lies inside the range ``history`` (the same series' values at
    the commits up to the step, in git order) already spanned, given at least 2 of
    them: such a change is the series returning to a level it has had, as a bimodal
    benchmark switches modes (``bench_eras.Kernels.track_ratio_run_vs_numpy_scipy``
    on ``matmul_256``: 0.13 to 2.9 over commits that did not change the kernel), so it
    is not called. A real change back to an old level is not called either; the
    history page still shows it."""
    return len(history) >= 2 and min(history) <= value <= max(history)


def confirmation(older: tuple[float, Interval | None], step: str,
                 newer: tuple[float, Interval | None] | None, rule: Rule,
                 better: str) -> str | None:
    """"confirmed" when the next point ``newer`` (value, interval) judged against
    ``older`` gives the same verdict ``step``, "new" when there is no next point, None
    when the next point went back on it."""
    if newer is None:
        return "new"
    again = judge(older[0], newer[0], older[1], newer[1], rule.threshold, better)
    return "confirmed" if again == step else None


def _up_to(chart, at: Mapping, x: str) -> list[float]:
    """The values of one series at ``x`` and every earlier point (``chart.previous``)."""
    out = []
    while x is not None:
        out.append(at[x][1])
        x = chart.previous(x, [k for k in at if k != x])   # nearest earlier point
    return out


def find(chart_list: Iterable, table: Mapping[str, float],
         noise: NoiseData | None = None) -> list[Change]:
    """Every regression and improvement (:func:`judge`) between each point of every
    series of ``chart_list`` (:class:`~conformance.dashboard.history.Chart`) and its
    previous point (``chart.previous``: git topology on the commit axis), kept only when
    confirmed by the next point or not yet followed by one, and on the commit axis only
    when the new value and the next one both lie outside the range of the series up to
    the step (:func:`within_history`); largest factor first."""
    out = []
    for chart in chart_list:
        b = chart.benchmark
        better = direction.better(b.unit, b.name, b.doc)
        for label, pts in chart.series.items():
            machine, combo = chart.origin.get(label, ("", ()))
            rule = rule_for(machine, b.name, combo, noise, table)
            at = {p[0]: p for p in pts}
            for x1, v1, _, c1 in pts:
                x0 = chart.previous(x1, list(at))
                if x0 is None:
                    continue
                _, v0, _, c0 = at[x0]
                verdict = judge(v0, v1, c0, c1, rule.threshold, better)
                if verdict not in (REGRESSION, IMPROVEMENT):
                    continue
                x2 = chart.next(x1, list(at))
                if chart.axis == "commit" and any(
                        within_history(v, _up_to(chart, at, x0))
                        for v in [v1] + ([at[x2][1]] if x2 else [])):
                    continue   # the step or the value that keeps it is inside the range
                status = confirmation((v0, c0), verdict,
                                      (at[x2][1], at[x2][3]) if x2 else None, rule, better)
                if status:
                    out.append(Change(b.name, chart.fixed, label, chart.axis, x0, x1, v0,
                                      v1, b.unit, rule, chart.anchor, better, status))
    return sorted(out, key=lambda c: (-c.size, c.benchmark, c.params, c.series))
