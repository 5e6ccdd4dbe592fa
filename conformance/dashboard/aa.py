"""The A/A check: two runs of ONE commit, judged by the dashboard's own rule.

    python -m conformance.dashboard.aa RESULT_A.json RESULT_B.json [--asv-config FILE]
        [--benchmarks benchmarks/results/benchmarks.json] [--noise benchmarks/noise]

Each value of run B is judged against the same value of run A with
:func:`conformance.dashboard.regressions.judge`: the benchmark's asv threshold
(``regressions_thresholds`` of ``--asv-config``, default ``asv.conf.json``), the two
stored 99% intervals, the direction from the unit. Nothing changed between the runs, so
every regression or improvement it reports is noise the rule let through: the rule is
honest on this machine when both counts are 0. It also counts what the intervals alone
(no threshold) would have flagged, which is what the threshold is there to stop.
With ``--noise DIR`` the thresholds are the dashboard's (asv's, raised to twice the
run-to-run spread of the A/A repeats in DIR), the spread computed *without* run B: B is
a fresh rerun judged by the noise seen before it, never by itself.

Prints one line of counts per verdict and the flagged values; exit 0 when no value is a
regression or an improvement, 1 when some are, 2 on a usage error (a file missing or not
an asv results file, or the two of different benchmarks.json: one line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.dashboard import asv_results, direction, errors, noise, regressions
from conformance import path_limits


def check(a: asv_results.Run, b: asv_results.Run, table: dict[str, float],
          benchmarks: dict[str, asv_results.Benchmark],
          noise_data: noise.NoiseData | None = None) -> dict[str, list[str]]:
    """{verdict: ["name(params): before -> after", ...]} of every value in both runs,
    by :func:`regressions.judge` with the dashboard's threshold of each value
    (:func:`regressions.rule_for`: asv's, raised to twice the run-to-run spread of
    ``noise_data`` where that is larger), plus ``"intervals alone"``: the values whose
    intervals are disjoint whatever their size."""
    out: dict[str, list[str]] = {}
    for name, combos in sorted(b.values.items()):
        bench = benchmarks.get(name)
        if bench is None or name not in a.values:
            continue
        better = direction.better(bench.unit, name, bench.doc)
        for combo, after in sorted(combos.items()):
            if combo not in a.values[name]:
                continue
            before = a.values[name][combo]
            ci_a, ci_b = a.ci.get(name, {}).get(combo), b.ci.get(name, {}).get(combo)
            rule = regressions.rule_for(b.machine, name, combo, noise_data, table)
            verdict = regressions.judge(before, after, ci_a, ci_b, rule.threshold, better)
            label = f"{name}({', '.join(combo)}): {before:.4g} -> {after:.4g}"
            out.setdefault(verdict, []).append(label)
            if ci_a is not None and ci_b is not None and regressions.disjoint(ci_a, ci_b):
                out.setdefault("intervals alone", []).append(label)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.dashboard.aa",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=path_limits.argument)
    parser.add_argument("b", type=path_limits.argument)
    parser.add_argument("--asv-config", type=path_limits.argument, default=Path("asv.conf.json"))
    parser.add_argument("--benchmarks", type=path_limits.argument,
                        default=Path("benchmarks/results/benchmarks.json"))
    parser.add_argument("--noise", type=path_limits.argument, default=None, metavar="DIR",
                        help="A/A repeats (benchmarks/noise): judge with the dashboard's "
                             "noise thresholds, computed without run B (held out)")
    args = parser.parse_args(argv)
    try:
        benchmarks = asv_results.read_benchmarks(args.benchmarks)
        runs = [asv_results.read_run(path, path.parent.name, benchmarks)
                for path in (args.a, args.b)]
    except (OSError, ValueError, errors.UsageError, errors.MalformedInput) as err:
        print(f"aa: {str(err)[:200]}", file=sys.stderr)
        return 2
    table = regressions.thresholds(args.asv_config if args.asv_config.is_file() else None)
    noise_data = noise.load(args.noise, exclude=(args.b,)) if args.noise else None
    if noise_data is not None:
        print(f"noise: {noise_data.files} repeat run(s) of {args.noise}, {args.b.name} held "
              f"out; {len(noise_data.table)} values with a measured spread")
    found = check(runs[0], runs[1], table, benchmarks, noise_data)
    for verdict in sorted(found):
        print(f"{verdict}: {len(found[verdict])}")
    flagged = found.get(regressions.REGRESSION, []) + found.get(regressions.IMPROVEMENT, [])
    for label in flagged:
        print(f"  flagged: {label}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
