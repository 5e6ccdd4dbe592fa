"""How wide the measured spread of stored benchmark values is (a measurement script,
not a test: it reads asv result files, it times nothing).

    python -m benchmarks.spread ci RESULT.json [...]   # the ±5% rule, per value
    python -m benchmarks.spread aa RUN1.json RUN2.json [...]   # A/A run-to-run spread

``ci``: for every value with asv's 99% interval, its half-width relative to the value,
``max(b - v, v - a) / v`` (dimensionless); prints how many values are within
``--tolerance`` (default 0.05, the issue's ±5%) and the widest ones; exit status 1 when
some value is outside or has no interval. ``aa``: for each benchmark and parameters
present in every run of one commit (``benchmarks/noise/<machine>/<commit8>-<env>-run<k>
.json``), the run-to-run spread ``(max - min) / median`` of the values; prints the
median and the largest spread per benchmark.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

Key = tuple[str, tuple[str, ...]]


def values(path: str | Path) -> Iterator[tuple[Key, float, float | None, float | None]]:
    """(benchmark name, parameter reprs), value, 99% interval low, high (None when the
    result has none) of every numeric value in an asv result file."""
    doc = json.loads(Path(path).read_text())
    columns = doc["result_columns"]
    for name, row in doc["results"].items():
        row = dict(zip(columns, row))
        result = row.get("result")
        if not isinstance(result, list):
            continue
        params = row.get("params") or []
        combos = list(itertools.product(*params)) if params else [()]
        lows = row.get("stats_ci_99_a") or [None] * len(result)
        highs = row.get("stats_ci_99_b") or [None] * len(result)
        for combo, v, a, b in zip(combos, result, lows, highs):
            if isinstance(v, (int, float)) and math.isfinite(v):
                yield (name, tuple(combo)), float(v), a, b


def half_width(v: float, a: float | None, b: float | None) -> float:
    """The 99% interval's larger half-width relative to ``v`` (inf without one)."""
    if a is None or b is None or v == 0 or not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return max(b - v, v - a) / abs(v)


def ci_report(paths: list[str], tolerance: float) -> tuple[list[str], int]:
    rows = [(half_width(v, a, b), key) for p in paths for key, v, a, b in values(p)]
    within = sum(1 for w, _ in rows if w <= tolerance)
    lines = [f"{within} of {len(rows)} values have a 99% interval within "
             f"±{tolerance:.0%} of the value; "
             f"{sum(1 for w, _ in rows if math.isinf(w))} have none"]
    by_family: dict[str, list[float]] = {}
    for w, (name, _) in rows:
        by_family.setdefault(name, []).append(w)
    for name, ws in sorted(by_family.items(), key=lambda kv: -statistics.median(kv[1])):
        ok = sum(1 for w in ws if w <= tolerance)
        lines.append(f"  {name}: {ok}/{len(ws)} within, median half-width "
                     f"{statistics.median(ws):.1%}, widest {max(ws):.1%}")
    return lines, len(rows) - within


def aa_spread(paths: list[str]) -> dict[Key, float]:
    """{(benchmark, params): (max - min) / median over the runs} for keys in every run."""
    runs = [{key: v for key, v, _, _ in values(p)} for p in paths]
    common = set(runs[0]).intersection(*runs[1:]) if runs else set()
    out = {}
    for key in common:
        vs = [r[key] for r in runs]
        med = statistics.median(vs)
        if med:
            out[key] = (max(vs) - min(vs)) / abs(med)
    return out


def aa_report(paths: list[str]) -> list[str]:
    spread = aa_spread(paths)
    by_name: dict[str, list[float]] = {}
    for (name, _), s in spread.items():
        by_name.setdefault(name, []).append(s)
    all_s = sorted(spread.values())
    lines = [f"{len(paths)} runs, {len(spread)} values in all: run-to-run spread "
             f"(max-min)/median: median {statistics.median(all_s):.1%}, "
             f"90th percentile {all_s[int(0.9 * (len(all_s) - 1))]:.1%}, "
             f"largest {all_s[-1]:.1%}" if all_s else "no common values"]
    for name, ss in sorted(by_name.items(), key=lambda kv: -statistics.median(kv[1])):
        lines.append(f"  {name}: median {statistics.median(ss):.1%}, largest {max(ss):.1%}"
                     f" ({len(ss)} values)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["ci", "aa"])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--tolerance", type=float, default=0.05)
    args = parser.parse_args(argv)
    if args.mode == "ci":
        lines, outside = ci_report(args.results, args.tolerance)
        print("\n".join(lines))
        return 1 if outside else 0
    print("\n".join(aa_report(args.results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
