"""Inline SVG charts of the HTML report (no scripts, no external assets).

Colours are fixed so that a screenshot test can find them: :data:`PASS_COLOUR` for
passed tests, :data:`FAIL_COLOUR` for failures, :data:`OTHER_COLOUR` for the rest
(skipped, not supported, waived).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from conformance.certification.verdict import pass_rate

PASS_COLOUR = "#2e9e44"
FAIL_COLOUR = "#d62728"
OTHER_COLOUR = "#c8c8c8"
HIST_COLOUR = "#1f5fbf"


def pass_rate_bar(counts: Mapping[str, int], failing: Sequence[str], *, width: int = 240,
                  height: int = 14) -> str:
    """A stacked bar of one row of status counts: pass (green), ``failing`` statuses
    (red), the rest (grey); ``width``/``height`` in CSS pixels. An all-zero row is an
    empty outlined bar. Raises ValueError on a negative count or a non-positive size."""
    if width <= 0 or height <= 0:
        raise ValueError(f"width and height must be positive, got {width}x{height}")
    if any(v < 0 for v in counts.values()):
        raise ValueError(f"counts must be >= 0, got {dict(counts)}")
    total = sum(counts.values())
    passed = counts.get("pass", 0)
    failed = sum(counts.get(s, 0) for s in failing)
    parts = [(passed, PASS_COLOUR), (failed, FAIL_COLOUR), (total - passed - failed,
                                                            OTHER_COLOUR)]
    rects, x = [], 0.0
    for n, colour in parts:
        if total and n:
            w = width * n / total
            rects.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                         f'fill="{colour}"/>')
            x += w
    rate = f"pass rate {pass_rate.text(counts)}" if total else "no tests"
    return (f'<svg class="bar" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>{escape(rate)}</title>{"".join(rects)}'
            f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" fill="none" '
            f'stroke="#888"/></svg>')


def histogram(labels: Sequence[str], counts: Sequence[int], *, limit_index: int | None = None,
              width: int | None = None, height: int = 90) -> str:
    """A bar chart of ``counts`` per bucket ``labels`` (same length, counts >= 0); the
    buckets from ``limit_index`` on (over the allowed error) are drawn in red; ``width``
    defaults to 46 CSS pixels a bucket. Raises
    ValueError on mismatched lengths or negative counts."""
    if len(labels) != len(counts) or not labels:
        raise ValueError(f"labels ({len(labels)}) and counts ({len(counts)}) must have the "
                         "same non-zero length")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts must be >= 0, got {list(counts)}")
    top, plot_h, n = max(max(counts), 1), height - 28, len(counts)
    width = width or 46 * n
    slot = width / n
    items = []
    for i, (label, c) in enumerate(zip(labels, counts)):
        h = plot_h * c / top
        colour = FAIL_COLOUR if limit_index is not None and i >= limit_index else HIST_COLOUR
        x = i * slot
        items.append(f'<rect x="{x + 1:.2f}" y="{12 + plot_h - h:.2f}" width="{slot - 2:.2f}" '
                     f'height="{h:.2f}" fill="{colour}"><title>{escape(label)} ULP: {c}'
                     f'</title></rect>')
        if c:
            items.append(f'<text x="{x + slot / 2:.2f}" y="{10 + plot_h - h:.2f}" '
                         f'font-size="9" text-anchor="middle">{c}</text>')
        items.append(f'<text x="{x + slot / 2:.2f}" y="{height - 4}" font-size="9" '
                     f'text-anchor="middle">{escape(label)}</text>')
    return (f'<svg class="hist" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'{"".join(items)}</svg>')
