"""CI: plain pytest's outcome of README command 1's bundle.

    python .ci/pytest_outcome.py BUNDLE

Exits 0 when plain pytest would have passed the run (every failure is a strict xfail of
the defect catalog), 1 naming the tests it counts as failed (a failure outside the
catalog, a strict XPASS, an error, a crashed worker), 2 when BUNDLE has no readable
results log. The rule is conformance/certification/results/pytest_outcome.py's; why CI checks it
here instead of running the suite twice: docs/ci.md.
"""

import sys

from conformance.certification.results.pytest_outcome import unexpected_in_bundle


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python .ci/pytest_outcome.py BUNDLE", file=sys.stderr)
        return 2
    try:
        failed = unexpected_in_bundle(argv[0])
    except (OSError, ValueError, TypeError) as err:
        print(f"CI: {argv[0]}: no readable results log ({err})", file=sys.stderr)
        return 2
    for nodeid in failed:
        print(f"CI: failed under plain pytest's rule: {nodeid}", file=sys.stderr)
    print(f"CI: {argv[0]}: {len(failed)} tests outside the defect catalog "
          "(plain pytest would have failed on any)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
