"""``python -m tests.mutants``: run the mutant catalog (or some of it) and print the score.

Exit code 0 when the score reaches ``--min-score``, the healthy control is clean and no
rewriting mutant was a no-op (its rewrite changed no program: printed on stderr as
``ERROR NoOpRewrite: mutant NAME ...``), 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tests.mutants import CATALOG, KINDS, runner, score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    parser.add_argument("--kind", choices=sorted(KINDS), action="append",
                        help="run only mutants of this operator kind (repeatable)")
    parser.add_argument("--fast", action="store_true",
                        help="stop each child at its first failure (-x)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="child runs at a time")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the score as JSON")
    parser.add_argument("--min-score", type=float, default=0.95,
                        help="lowest passing overall score, 0..1 (default 0.95)")
    parser.add_argument("--no-control", action="store_true", help="skip the healthy control")
    parser.add_argument("--list", action="store_true", help="list the catalog and exit")
    args = parser.parse_args(argv)
    if not 0 <= args.min_score <= 1:
        parser.error(f"--min-score must be within 0..1, got {args.min_score}")
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    try:
        mutants = runner.select(args.only)
    except KeyError as err:
        parser.error(str(err.args[0]))
    if args.kind:
        mutants = [m for m in mutants if m.kind in args.kind]
    if args.list:
        for m in mutants:
            print(f"{m.name:<36} {m.kind:<10} {','.join(m.areas):<40} {m.doc}")
        return 0

    def progress(o):  # before the comparison with the control
        state = "error" if o.error else "fails" if o.killed else "passes"
        print(f"{o.platform:<36} {state:<8} {o.seconds:6.1f} s  {o.statuses}", flush=True)

    print(f"running {len(mutants)} of {len(CATALOG)} mutants, {args.jobs} at a time",
          flush=True)
    outcomes, controls = runner.run_all(mutants, jobs=args.jobs, fast=args.fast,
                                        control=not args.no_control, progress=progress)
    print(score.report(outcomes, controls))
    if args.json:
        args.json.write_text(json.dumps(score.as_json(outcomes, controls), indent=1))
    no_ops = [o.error for o in outcomes
              if o.error and o.error.startswith(("NoOpRewrite", "RewriteError"))]
    for error in no_ops:
        print(f"ERROR {error[:500]}", file=sys.stderr)
    ok = score.overall(outcomes) >= args.min_score and not score.control_failures(controls)
    return 0 if ok and not no_ops else 1


if __name__ == "__main__":
    sys.exit(main())
