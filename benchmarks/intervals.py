"""Spread of ``track_`` values: samples persisted by the benchmark, written into asv's
results by a post-processing step.

asv keeps a 99% interval (``stats_ci_99_a``/``stats_ci_99_b``), quartiles, ``number``,
``repeat`` and the samples only for ``time_`` benchmarks; a ``track_`` method returns
one number. So every ``track_`` benchmark of this suite that returns a statistic of
several samples (``track_ratio_*``: the median of per-pair ratios, :mod:`benchmarks.
pairing`; GB/s, GFLOP/s: the median of repeated measurements) calls :func:`record`,
which appends the samples to a JSON-lines file under ``$PJRT_BENCH_SAMPLES`` (nothing
is written when that variable is unset, e.g. under pytest). After ``asv run``,

    python -m benchmarks.intervals SAMPLES_DIR RESULT.json [RESULT.json ...]

(run by ``benchmarks/nightly.sh`` and ``benchmarks/history.sh``) writes, for each
value whose benchmark, parameters and value match a record, asv's own statistics of
the samples (``asv_runner.statistics.compute_stats``: the median, its distribution-free
99% interval from binomial order statistics, extended by asv's Laplace posterior when
there are too few samples, and the quartiles) into that value's ``stats_*`` columns and
``samples``. Units are those of the value (a ratio: dimensionless; else the
benchmark's ``unit``).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ENV = "PJRT_BENCH_SAMPLES"
STATS_COLUMNS = ("stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75",
                 "stats_number", "stats_repeat")


def benchmark_name(obj: Any, fn: Any) -> str:
    """asv's name of the benchmark method ``fn`` (a function object in the class of
    ``obj``): ``<module under benchmarks/>.<Class>.<attribute>``. Raises LookupError
    when no attribute of the class is ``fn``."""
    cls = type(obj)
    for klass in cls.__mro__:
        for attr, value in vars(klass).items():
            if value is fn:
                module = cls.__module__
                module = module.split(".", 1)[1] if module.startswith("benchmarks.") else module
                return f"{module}.{cls.__name__}.{attr}"
    raise LookupError(f"{fn!r} is no attribute of {cls.__name__}")


def record(name: str, params: Sequence[Any], samples: Sequence[float],
           number: int = 1) -> float:
    """Persist ``samples`` (each the mean of ``number`` calls) of benchmark ``name`` with
    parameter values ``params``; return their median, the value the benchmark reports.
    Writes only when ``$PJRT_BENCH_SAMPLES`` names a directory (created if needed).
    Raises ValueError for no samples or a non-finite one."""
    samples = [float(s) for s in samples]
    if not samples or not all(math.isfinite(s) for s in samples):
        raise ValueError(f"samples: expected finite floats, got {samples!r}")
    value = statistics.median(samples)
    folder = os.environ.get(ENV)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        line = json.dumps({"name": name, "params": [repr(p) for p in params],
                           "value": value, "samples": samples, "number": int(number)})
        with open(Path(folder) / f"{os.getpid()}.jsonl", "a") as out:
            out.write(line + "\n")
    return value


def load(folder: str | os.PathLike) -> dict[tuple[str, tuple[str, ...]], list[dict]]:
    """{(benchmark name, parameter reprs): [records, oldest first]} of every
    ``*.jsonl`` file in ``folder`` (empty when it does not exist)."""
    out: dict[tuple[str, tuple[str, ...]], list[dict]] = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                out.setdefault((rec["name"], tuple(rec["params"])), []).append(rec)
    return out


def stats(samples: Sequence[float], number: int = 1) -> dict[str, float]:
    """asv's statistics of ``samples``: keys ``ci_99_a``, ``ci_99_b``, ``q_25``, ``q_75``,
    ``number``, ``repeat`` (the number of samples)."""
    from asv_runner.statistics import compute_stats

    return compute_stats(list(samples), number)[1]


def _same(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def apply(result_path: str | os.PathLike, records: dict) -> int:
    """Write the statistics of matching ``records`` (from :func:`load`) into the asv
    result file ``result_path`` in place; return how many values got them. A value
    matches a record of its benchmark and parameters whose median equals it."""
    path = Path(result_path)
    doc = json.loads(path.read_text())
    columns = doc["result_columns"]
    where = {c: columns.index(c) for c in ("result", "params", *STATS_COLUMNS, "samples")}
    done = 0
    for name, row in doc["results"].items():
        values = row[where["result"]]
        if not isinstance(values, list):
            continue
        params = row[where["params"]] if len(row) > where["params"] else []
        combos = list(itertools.product(*params)) if params else [()]
        if len(combos) != len(values):
            continue
        row.extend([None] * (len(columns) - len(row)))
        for column in (*STATS_COLUMNS, "samples"):
            if row[where[column]] is None:
                row[where[column]] = [None] * len(values)
        for i, (combo, value) in enumerate(zip(combos, values)):
            if value is None or not isinstance(value, (int, float)):
                continue
            match = [r for r in records.get((name, tuple(combo)), [])
                     if _same(r["value"], float(value))]
            if not match:
                continue
            rec = match[-1]
            st = stats(rec["samples"], rec["number"])
            for column in STATS_COLUMNS:
                row[where[column]][i] = st[column[len("stats_"):]]
            row[where["samples"]][i] = rec["samples"]
            done += 1
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc))  # compact, as asv writes result files
    os.replace(tmp, path)
    return done


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print(__doc__.split("\n\n")[2].strip(), file=sys.stderr)
        return 2
    records = load(args[0])
    for result in args[1:]:
        print(f"intervals: {apply(result, records)} track values given a 99% interval "
              f"in {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
