"""Inline SVG line charts of the dashboard (no script, no external asset).

Series ``i`` is drawn in :func:`style` ``(i)``: a colour of :data:`PALETTE`, a marker of
:data:`MARKERS` and a dash pattern, so that no two series of a chart look alike however
many there are (the first ten differ by colour alone, as before). The reference line
(1.0 on ratio charts) is :data:`REFERENCE_COLOUR`, dashed. The x axis is either time
(points at ``datetime``\\ s) or categories in a given order (jax releases, commits).
Every point carries an SVG ``<title>`` tooltip: series, value, x and an optional note
(e.g. the commit).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#1f5fbf", "#e8710a", "#2e9e44", "#9334e6", "#c5221f", "#12a4af", "#b06000",
           "#d01884", "#5f6368", "#7cb342")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross")
REFERENCE_COLOUR = "#444444"
_TIME_STEPS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_BYTE_STEPS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))


@dataclasses.dataclass(frozen=True)
class Style:
    """How one series is drawn: ``colour`` (#rrggbb), ``marker`` (one of
    :data:`MARKERS`) and ``dash`` (an SVG stroke-dasharray, "" for a solid line)."""

    colour: str
    marker: str
    dash: str


def style(index: int) -> Style:
    """The style of series number ``index`` (>= 0). Different indexes always give
    different styles: colour cycles fastest, then marker, then the dash pattern
    (solid, "4,3", "6,3", ...). Raises ValueError on a negative or non-int index."""
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"style: index must be an int >= 0, got {index!r}")
    colour = PALETTE[index % len(PALETTE)]
    marker = MARKERS[(index // len(PALETTE)) % len(MARKERS)]
    k = index // (len(PALETTE) * len(MARKERS))
    return Style(colour, marker, f"{2 * k + 2},3" if k else "")


def scale(unit: str, values: Sequence[float]) -> tuple[float, str]:
    """(divisor, label) to show ``values`` of asv ``unit``: "seconds" as s/ms/us/ns and
    "bytes" as GiB/MiB/KiB/B, chosen by the largest magnitude; other units as is."""
    top = max((abs(v) for v in values), default=0.0)
    steps = _TIME_STEPS if unit == "seconds" else _BYTE_STEPS if unit == "bytes" else None
    if steps is None:
        return 1.0, unit
    for div, label in steps:
        if top >= div:
            return div, label
    return steps[-1]


def fmt(value: float, unit: str) -> str:
    """``value`` (in asv ``unit``) with its scaled unit, 3 significant digits."""
    div, label = scale(unit, [value])
    return f"{value / div:.3g} {label}".rstrip()


def _ticks(top: float, bottom: float = 0.0) -> list[float]:
    """About five round tick values from <= ``bottom`` to >= ``top`` (top > bottom)."""
    raw = (top - bottom) / 4 or abs(top) / 4 or 1.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(bottom / step + 1e-9)
    return [i * step for i in range(first, int(math.ceil(top / step - 1e-9)) + 1)] \
        if top > bottom else [bottom, bottom + step]


def y_range(values: Sequence[float], reference: float | None = None) -> tuple[float, float]:
    """The y range (low, high) drawn for ``values`` (not empty): fitted to the values,
    never to interval bounds; from 0 when the smallest value is under 40% of the
    largest (so bars of one scale compare), else the values' range padded by 10%. The
    ``reference`` line is included when within a factor 2 of the values."""
    lo, hi = min(values), max(values)
    if reference is not None and lo / 2 <= reference <= hi * 2:
        lo, hi = min(lo, reference), max(hi, reference)
    if lo >= 0 and lo <= 0.4 * hi:
        return 0.0, hi * 1.05 or 1.0
    pad = (hi - lo) * 0.1 or abs(hi) * 0.05 or 1.0
    return lo - pad, hi + pad


def marker(kind: str, x: float, y: float, colour: str, title: str = "", r: float = 4) -> str:
    """One SVG marker of ``kind`` (see :data:`MARKERS`) centred at (x, y), radius ``r``
    px, with ``title`` as its tooltip. Raises ValueError on an unknown kind."""
    tip = f"<title>{escape(title)}</title>" if title else ""
    paint = f'fill="{colour}"'
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {paint}>{tip}</circle>'
    if kind == "square":
        return (f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" '
                f'{paint}>{tip}</rect>')
    shapes = {"triangle": [(0, -1.2), (1.1, 0.9), (-1.1, 0.9)],
              "down": [(0, 1.2), (1.1, -0.9), (-1.1, -0.9)],
              "diamond": [(0, -1.3), (1.2, 0), (0, 1.3), (-1.2, 0)],
              "cross": [(-.4, -1.2), (.4, -1.2), (.4, -.4), (1.2, -.4), (1.2, .4), (.4, .4),
                        (.4, 1.2), (-.4, 1.2), (-.4, .4), (-1.2, .4), (-1.2, -.4),
                        (-.4, -.4)]}
    if kind not in shapes:
        raise ValueError(f"marker: kind must be one of {MARKERS}, got {kind!r}")
    pts = " ".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in shapes[kind])
    return f'<polygon points="{pts}" {paint}>{tip}</polygon>'


def swatch(s: Style) -> str:
    """A small inline SVG (30x12 px) of style ``s``: its line and marker, for legends."""
    dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
    return (f'<svg class="swatch" width="30" height="12" viewBox="0 0 30 12" '
            f'xmlns="http://www.w3.org/2000/svg"><line x1="0" x2="30" y1="6" y2="6" '
            f'stroke="{s.colour}" stroke-width="2"{dash}/>'
            f'{marker(s.marker, 15, 6, s.colour)}</svg>')


def _point(p: Sequence) -> tuple[object, float, str, tuple[float, float] | None]:
    if len(p) not in (2, 3, 4):
        raise ValueError("line_chart: a point is (x, value), (x, value, note) or (x, value, "
                         f"note, (low, high)), got {p!r}")
    ci = p[3] if len(p) == 4 and p[3] is not None else None
    if ci is not None and not (len(ci) == 2 and all(math.isfinite(c) for c in ci)
                               and ci[0] <= ci[1]):
        raise ValueError(f"line_chart: an interval is (low, high) with low <= high, got {ci!r}")
    return p[0], p[1], (str(p[2]) if len(p) >= 3 and p[2] else ""), ci


def line_chart(series: Sequence[tuple[str, Sequence[tuple]]], *, unit: str,
               reference: float | None = None, width: int = 560, height: int = 220,
               categories: Sequence[str] | None = None) -> str:
    """An SVG chart: y = value in ``unit`` over :func:`y_range` (fitted to the values;
    interval bounds beyond it are clipped with a ``class="clipped"`` mark); one line with markers per
    ``(label, [(x, value) or (x, value, note) or (x, value, note, (low, high)), ...])``
    series, series ``i`` in :func:`style` ``(i)``; ``(low, high)`` (asv's 99% confidence
    interval) is drawn as an error bar; a dashed line at ``reference`` (e.g. 1.0 for a
    ratio).

    x: with ``categories`` None, each x is a ``datetime`` (UTC) on a time axis; else
    each x is one of ``categories`` (str), placed evenly in that order and labelled
    with it. Each point's tooltip names the series, value, x and note. ``width`` /
    ``height`` in CSS pixels. A chart without any point shows "no data" and no series
    colour. Raises ValueError on a non-positive size, a non-finite value, or an x
    that is not one of ``categories``."""
    if width <= 0 or height <= 0:
        raise ValueError(f"width and height must be positive, got {width}x{height}")
    series = [(name, [_point(p) for p in pts]) for name, pts in series]
    values = [v for _, pts in series for _, v, _, _ in pts]
    if any(not math.isfinite(v) for v in values):
        raise ValueError("line_chart: every value must be finite")
    head = (f'<svg class="chart" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">')
    if not values:
        return (head + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                'font-size="12" fill="#888">no data</text></svg>')
    div, label = scale(unit, values + ([reference] if reference else []))
    low, high = y_range(values, reference)
    ticks = _ticks(high / div, low / div)
    left, right, upper, lower = 56, 14, 10, 34
    pw, ph = width - left - right, height - upper - lower
    items = []
    if categories is not None:
        cats = list(categories)
        where = {c: i for i, c in enumerate(cats)}
        bad = [x for _, pts in series for x, *_ in pts if x not in where]
        if bad:
            raise ValueError(f"line_chart: x {bad[0]!r} is not one of categories {cats}")
        step = pw / max(len(cats), 1)

        def x(at: object) -> float:
            return left + step * (where[at] + 0.5)

        def x_text(at: object) -> str:
            return str(at)
        every = max(1, math.ceil(len(cats) * 70 / pw))  # about 70 px per label
        for i, cat in enumerate(cats):
            if i % every == 0:
                items.append(f'<text x="{x(cat):.1f}" y="{height - 18}" font-size="10" '
                             f'text-anchor="middle">{escape(cat[:14])}</text>')
    else:
        stamps = [d.timestamp() for _, pts in series for d, *_ in pts]
        t0, t1 = min(stamps), max(stamps)
        span = (t1 - t0) or 1.0

        def x(at: object) -> float:
            return left + (pw / 2 if t1 == t0 else pw * (at.timestamp() - t0) / span)

        def x_text(at: object) -> str:
            return f"{at:%Y-%m-%d %H:%M} UTC"
        form = "%Y-%m-%d" if t1 - t0 >= 2 * 86400 else "%Y-%m-%d %H:%M"
        ends = [(left, "start", t0), (left + pw, "end", t1)] if t1 > t0 else \
            [(left + pw / 2, "middle", t0)]
        for at, anchor, stamp in ends:
            when = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)
            items.append(f'<text x="{at:.1f}" y="{height - 18}" font-size="10" '
                         f'text-anchor="{anchor}">{when.strftime(form)}</text>')

    def y(v: float) -> float:
        """The pixel row of value ``v``, clamped to the plot area."""
        frac = (v / div - ticks[0]) / ((ticks[-1] - ticks[0]) or 1.0)
        return upper + ph - ph * min(max(frac, 0.0), 1.0)

    def clipped(v: float) -> bool:
        return not ticks[0] <= v / div <= ticks[-1]

    grid = []
    for t in ticks:
        grid.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t * div):.1f}" '
                    f'y2="{y(t * div):.1f}" stroke="#e4e4e4"/>'
                    f'<text x="{left - 4}" y="{y(t * div) + 4:.1f}" font-size="10" '
                    f'text-anchor="end">{t:g}</text>')
    grid.append(f'<text x="4" y="{upper + 8}" font-size="10">{escape(label)}</text>')
    items = grid + items
    if reference is not None and not clipped(reference):
        items.append(f'<line class="reference" x1="{left}" x2="{left + pw}" '
                     f'y1="{y(reference):.1f}" y2="{y(reference):.1f}" '
                     f'stroke="{REFERENCE_COLOUR}" stroke-dasharray="5,4"/>')
    for i, (name, pts) in enumerate(series):
        s = style(i)
        pts = sorted(pts, key=lambda p: x(p[0]))
        if len(pts) > 1:
            coords = " ".join(f"{x(at):.1f},{y(v):.1f}" for at, v, *_ in pts)
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            items.append(f'<polyline points="{coords}" fill="none" stroke="{s.colour}" '
                         f'stroke-width="2"{dash}/>')
        for at, v, note, ci in pts:
            tip = f"{name}: {fmt(v, unit)} at {x_text(at)}" + (f" ({note})" if note else "")
            if ci is not None:
                tip += f"; 99% interval {fmt(ci[0], unit)} to {fmt(ci[1], unit)}"
                items.append(f'<line class="ci" x1="{x(at):.1f}" x2="{x(at):.1f}" '
                             f'y1="{y(ci[0]):.1f}" y2="{y(ci[1]):.1f}" stroke="{s.colour}" '
                             'stroke-width="1" opacity="0.6"/>')
                for end in ci:   # an interval bound off the axis: a clip mark at the edge
                    if clipped(end):
                        items.append(f'<path class="clipped" d="M{x(at) - 4:.1f},'
                                     f'{y(end):.1f} h8" stroke="{s.colour}" '
                                     'stroke-width="2"><title>interval clipped: '
                                     f'{escape(fmt(end, unit))}</title></path>')
            items.append(marker(s.marker, x(at), y(v), s.colour, tip))
    items.append(f'<rect x="{left}" y="{upper}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#999"/>')
    return head + "".join(items) + "</svg>"
