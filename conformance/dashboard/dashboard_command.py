"""``pjrt-conformance dashboard``: render the offline site.

    pjrt-conformance dashboard [--asv-results DIR ...] [--bundles REPORTS_DIR ...]
                               [--limits DIR] [--asv-config FILE] [--asv-html DIR ...]
                               [--noise DIR] [--repo DIR] --out DIR

Defaults (used only when the option is not given, and only the paths that exist):
``--asv-results`` = ``.asv/results``, ``.asv/matrix-results``, ``benchmarks/results``;
``--bundles`` = ``reports``, ``matrix`` (the release matrix's bundles, noxfile.py;
those holding a report.json); ``--limits`` = ``benchmarks/gpu``; ``--asv-config`` =
``asv.conf.json`` (its ``regressions_thresholds`` set the regression list; asv's 5%
without one); ``--asv-html`` = ``.asv/html``, ``.asv/matrix-html`` (asv's own site,
``asv publish``: linked from the overview when it holds an index.html); ``--noise`` =
``benchmarks/noise`` (repeated runs of one commit: each benchmark's run-to-run noise,
:mod:`conformance.dashboard.noise`); ``--repo`` = the folder of the asv config (the git
repository the results' commits belong to: commits are ordered by git topology).

Exit status: 0 written; 2 usage error (a path given that does not exist, no asv
results at all, an ``--out`` that is or lies in a report bundle: nothing is written into a
bundle); 3 malformed input (benchmarks.json, machine.json or a limits file
malformed: nothing written; a results file malformed or naming a benchmark not in
benchmarks.json, or a bundle that does not load: the site is written without it and
the problem is printed). Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.certification.bundle import entries
from conformance.dashboard import asv_results, bundle_history, limits, noise, regressions, site
from conformance.dashboard.errors import MalformedInput, UsageError
from conformance.option_error import OptionError
from conformance import path_limits

EXIT_OK, EXIT_USAGE, EXIT_MALFORMED = 0, 2, 3
DEFAULT_RESULTS = (Path(".asv/results"), Path(".asv/matrix-results"),
                   Path("benchmarks/results"))
DEFAULT_BUNDLES = (Path("reports"), Path("matrix"))
DEFAULT_LIMITS = Path("benchmarks/gpu")
DEFAULT_CONFIG = Path("asv.conf.json")
DEFAULT_HTML = (Path(".asv/html"), Path(".asv/matrix-html"))
DEFAULT_NOISE = Path("benchmarks/noise")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``dashboard`` subcommand to ``sub``."""
    p = sub.add_parser("dashboard", help="render the offline benchmark and conformance "
                                         "dashboard (static HTML + SVG)",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--asv-results", type=path_limits.argument, action="append", metavar="DIR",
                   help="an asv results directory (repeatable; default: those of "
                        f"{', '.join(map(str, DEFAULT_RESULTS))} that exist)")
    p.add_argument("--bundles", type=path_limits.argument, action="append", metavar="REPORTS_DIR",
                   help="a folder of conformance bundles (repeatable; a bundle found "
                        "twice is shown once; default: those of "
                        f"{', '.join(map(str, DEFAULT_BUNDLES))} that exist)")
    p.add_argument("--limits", type=path_limits.argument, metavar="DIR",
                   help=f"folder of device-limits JSON files (default: {DEFAULT_LIMITS} "
                        "when it exists)")
    p.add_argument("--asv-config", type=path_limits.argument, metavar="FILE",
                   help="asv config whose regressions_thresholds set the regression "
                        f"list (default: {DEFAULT_CONFIG} when it exists, else 5%%)")
    p.add_argument("--asv-html", type=path_limits.argument, action="append", metavar="DIR",
                   help="asv's published site to link to (repeatable; default: those of "
                        f"{', '.join(map(str, DEFAULT_HTML))} that exist)")
    p.add_argument("--noise", type=path_limits.argument, metavar="DIR",
                   help="repeated asv runs of one commit, <machine>/<commit8>-<env>-run<k>"
                        f".json (default: {DEFAULT_NOISE} when it exists)")
    p.add_argument("--repo", type=path_limits.argument, metavar="DIR",
                   help="the git repository of the results' commits (default: the asv "
                        "config's folder, else the current one)")
    p.add_argument("--out", type=path_limits.argument, required=True, metavar="DIR",
                   help="where the site goes (index.html and the other pages)")


def _inputs(ns: argparse.Namespace) -> site.Inputs:
    dirs = ns.asv_results or [d for d in DEFAULT_RESULTS if d.is_dir()]
    if not dirs:
        raise UsageError("no asv results: none of " + ", ".join(map(str, DEFAULT_RESULTS))
                         + " exists (run benchmarks/nightly.sh --quick, or pass "
                         "--asv-results DIR)")
    results = [asv_results.load(d) for d in dirs]
    if not any(r.runs for r in results):
        raise MalformedInput(f"no readable asv results file: {results[0].problems[0]}")
    reports = ns.bundles or [d for d in DEFAULT_BUNDLES
                             if d.is_dir() and next(d.glob("**/report.json"), None)]
    limits_dir = ns.limits or (DEFAULT_LIMITS if DEFAULT_LIMITS.is_dir() else None)
    if ns.asv_config is not None and not ns.asv_config.is_file():
        raise UsageError(f"{ns.asv_config}: no such asv config file")
    config = ns.asv_config or (DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None)
    if ns.noise is not None and not ns.noise.is_dir():
        raise UsageError(f"{ns.noise}: no such noise directory")
    repo = ns.repo or (config.parent if config is not None else Path("."))
    return site.Inputs(results=results, noise=noise.load(ns.noise or DEFAULT_NOISE),
                       repo=repo,
                       bundles=bundle_history.merge([bundle_history.collect(d) for d in reports])
                       if reports else None,
                       limits=limits.load_dir(limits_dir) if limits_dir else None,
                       thresholds=regressions.thresholds(config),
                       asv_html=ns.asv_html or [d for d in DEFAULT_HTML if d.is_dir()])


def run(ns: argparse.Namespace) -> int:
    """Render the site; the exit status of the module doc."""
    try:
        try:   # never into a report bundle: verify would find it changed
            entries.refuse_inside_bundle(ns.out, "--out", is_dir=True)
        except OptionError as err:
            raise UsageError(str(err)) from None
        inputs = _inputs(ns)
        written = site.write(inputs, ns.out)
    except UsageError as err:
        print(f"pjrt-conformance dashboard: {err}", file=sys.stderr)
        return EXIT_USAGE
    except (MalformedInput, site.OfflineViolation) as err:
        print(f"pjrt-conformance dashboard: {err}", file=sys.stderr)
        return EXIT_MALFORMED
    except OSError as err:
        print(f"pjrt-conformance dashboard: cannot write {ns.out}: {err}", file=sys.stderr)
        return EXIT_USAGE
    problems = [p for r in inputs.results for p in r.problems]
    problems += list(inputs.noise.problems) if inputs.noise else []
    problems += [f"bundle {b.path} not loaded: {b.reason}" for b in
                 (inputs.bundles[1] if inputs.bundles else [])]
    for p in problems:
        print(f"pjrt-conformance dashboard: skipped {p}", file=sys.stderr)
    print(f"dashboard: {written[0]} ({len(written)} pages)")
    return EXIT_MALFORMED if problems else EXIT_OK
