"""Inline SVG line charts of the dashboard (no script, no external asset).

Series colours come from :data:`PALETTE` in order, so a screenshot test can look for
them; the reference line (1.0 on ratio charts) is :data:`REFERENCE_COLOUR`, dashed.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#1f5fbf", "#e8710a", "#2e9e44", "#9334e6", "#c5221f", "#12a4af", "#b06000",
           "#d01884", "#5f6368", "#7cb342")
REFERENCE_COLOUR = "#444444"
_TIME_STEPS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_BYTE_STEPS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))


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


def _ticks(top: float) -> list[float]:
    """About five round tick values from 0 to >= ``top`` (> 0)."""
    raw = top / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(top / step)) + 1)]


def line_chart(series: Sequence[tuple[str, Sequence[tuple[datetime.datetime, float]]]],
               *, unit: str, reference: float | None = None, width: int = 560,
               height: int = 220) -> str:
    """An SVG chart: x = date (UTC), y = value in ``unit`` from 0; one polyline with
    point markers per ``(label, [(date, value), ...])`` series, coloured from
    :data:`PALETTE` in order (cycled); a dashed line at ``reference`` (e.g. 1.0 for a
    ratio). ``width``/``height`` in CSS pixels. A chart without any point shows
    "no data" and no series colour. Raises ValueError on a non-positive size or a
    non-finite value."""
    if width <= 0 or height <= 0:
        raise ValueError(f"width and height must be positive, got {width}x{height}")
    values = [v for _, pts in series for _, v in pts]
    if any(not math.isfinite(v) for v in values):
        raise ValueError("line_chart: every value must be finite")
    head = (f'<svg class="chart" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">')
    if not values:
        return (head + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                'font-size="12" fill="#888">no data</text></svg>')
    div, label = scale(unit, values + ([reference] if reference else []))
    top = max(values + ([reference * 1.1] if reference else [])) / div or 1.0
    ticks = _ticks(top)
    left, right, upper, lower = 56, 12, 10, 34
    pw, ph = width - left - right, height - upper - lower
    stamps = [d.timestamp() for _, pts in series for d, _ in pts]
    t0, t1 = min(stamps), max(stamps)
    span = (t1 - t0) or 1.0

    def x(d: datetime.datetime) -> float:
        return left + (pw / 2 if t1 == t0 else pw * (d.timestamp() - t0) / span)

    def y(v: float) -> float:
        return upper + ph - ph * (v / div) / ticks[-1]

    items = []
    for t in ticks:
        items.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t * div):.1f}" '
                     f'y2="{y(t * div):.1f}" stroke="#e4e4e4"/>'
                     f'<text x="{left - 4}" y="{y(t * div) + 4:.1f}" font-size="10" '
                     f'text-anchor="end">{t:g}</text>')
    items.append(f'<text x="4" y="{upper + 8}" font-size="10">{escape(label)}</text>')
    form = "%Y-%m-%d" if t1 - t0 >= 2 * 86400 else "%Y-%m-%d %H:%M"
    ends = [(left, "start", t0), (left + pw, "end", t1)] if t1 > t0 else \
        [(left + pw / 2, "middle", t0)]
    for at, anchor, stamp in ends:
        when = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)
        items.append(f'<text x="{at:.1f}" y="{height - 18}" font-size="10" '
                     f'text-anchor="{anchor}">{when.strftime(form)}</text>')
    if reference is not None:
        items.append(f'<line class="reference" x1="{left}" x2="{left + pw}" '
                     f'y1="{y(reference):.1f}" y2="{y(reference):.1f}" '
                     f'stroke="{REFERENCE_COLOUR}" stroke-dasharray="5,4"/>')
    for i, (name, pts) in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        pts = sorted(pts)
        coords = " ".join(f"{x(d):.1f},{y(v):.1f}" for d, v in pts)
        if len(pts) > 1:
            items.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                         'stroke-width="2"/>')
        for d, v in pts:
            items.append(f'<circle cx="{x(d):.1f}" cy="{y(v):.1f}" r="4" fill="{colour}">'
                         f'<title>{escape(name)}: {escape(fmt(v, unit))} '
                         f'({d:%Y-%m-%d %H:%M} UTC)</title></circle>')
    items.append(f'<rect x="{left}" y="{upper}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#999"/>')
    return head + "".join(items) + "</svg>"
