"""What the committed asv history covers, read with asv's own results reader.

``benchmarks/history.sh`` writes ``benchmarks/results/`` (asv's results tree) for
every environment of ``asv.matrix.conf.json``; this module checks that every jaxlib
version of that matrix has results, and that every ``backend`` era of ``bench_eras``
(:data:`benchmarks.backend.ERAS`) has measured values in each of them.

    python -m benchmarks.history [RESULTS_DIR] [--config asv.matrix.conf.json]

prints the coverage and the gaps; exit status 1 when something is missing.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "bench_eras."


def matrix_versions(config: str | os.PathLike, package: str = "jaxlib") -> list[str]:
    """The versions of ``package`` in the asv config's ``matrix.req``. Raises ValueError
    naming the config when it has none."""
    doc = json.loads(Path(config).read_text())
    versions = doc.get("matrix", {}).get("req", {}).get(package)
    if not versions:
        raise ValueError(f"config: {config} has no matrix.req.{package} versions")
    return [str(v) for v in versions]


def _literal(text: str) -> str:
    """asv stores parameter values as their repr: ``"'xla-cpu-pjrt'"`` -> ``xla-cpu-pjrt``."""
    try:
        return str(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text


def _eras_with_values(result, key: str) -> set[str]:
    """The first parameter's values (``backend``) that have a measured value of ``key``."""
    params = result.get_result_params(key)
    if not params:
        return set()
    values = result.get_result_value(key, params)
    return {_literal(combo[0]) for combo, value in zip(itertools.product(*params), values)
            if value is not None and not math.isnan(value)}


def coverage(results_dir: str | os.PathLike) -> dict[str, dict[str, set[str]]]:
    """{jaxlib version: {benchmark name: backend eras with a measured value}} over every
    machine and commit under ``results_dir`` (asv's ``Results.load``). Raises
    FileNotFoundError naming ``results_dir`` when it is not a directory."""
    from asv import results as asv_results

    if not Path(results_dir).is_dir():
        raise FileNotFoundError(f"results_dir: {results_dir} is not a directory")
    out: dict[str, dict[str, set[str]]] = {}
    for result in asv_results.iter_results(str(results_dir)):
        version = str(result.params.get("jaxlib", "")) or "(unknown)"
        per_bench = out.setdefault(version, {})
        for key in result.get_all_result_keys():
            if key.startswith(PREFIX):
                per_bench.setdefault(key, set()).update(_eras_with_values(result, key))
    return out


def gaps(results_dir: str | os.PathLike, config: str | os.PathLike,
         eras: list[str] | None = None) -> list[str]:
    """What the history lacks: a jaxlib version of ``config``'s matrix without results,
    or a ``bench_eras`` benchmark without a value for some era in some version (``eras``:
    default every key of :data:`benchmarks.backend.ERAS`). Empty when complete."""
    if eras is None:
        from benchmarks.backend import ERAS

        eras = list(ERAS)
    found = coverage(results_dir)
    names = sorted({k for per in found.values() for k in per})
    missing = [] if names else [f"no {PREFIX}* results under {results_dir}"]
    for version in matrix_versions(config):
        if version not in found:
            missing.append(f"jaxlib {version}: no results")
            continue
        for name in names:
            lacking = sorted(set(eras) - found[version].get(name, set()))
            if lacking:
                missing.append(f"jaxlib {version}: {name}: no value for {', '.join(lacking)}")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results_dir", nargs="?", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--config", default=str(ROOT / "asv.matrix.conf.json"))
    args = parser.parse_args(argv)
    for version, per in sorted(coverage(args.results_dir).items()):
        eras = sorted(set().union(*per.values())) if per else []
        print(f"jaxlib {version}: {len(per)} benchmarks; backends {', '.join(eras)}")
    missing = gaps(args.results_dir, args.config)
    for line in missing:
        print(f"MISSING {line}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
