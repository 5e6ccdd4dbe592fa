"""The shard commands of ``pjrt-conformance``: ``merge`` and ``durations``.

    pjrt-conformance merge PART... --output DIR [--force] [--sign-key PRIVKEY]
    pjrt-conformance durations RESULTS_JSONL [--output FILE]

``merge`` combines the bundles of ``pjrt-conformance run --shard 1/N`` .. ``N/N`` into
one bundle whose verdict is recomputed from the union of their results
(:mod:`conformance.certification.bundle.merge`); ``verify`` re-checks its parts. Exit 0
written, 2 usage error (fewer than 2 parts, a path that does not exist, parts that
overlap, miss a shard or disagree on suite, profile, platform, plugin or environment,
a bad --output or --sign-key, an --output that is one of the parts, inside one or holds
one: merge never writes into its inputs), 3 a part that is not an intact bundle or is malformed.
Every error is one line naming the part.

``durations`` writes the per-test durations that balance ``--shard`` (pytest-split's
format, package-relative test ids) from a real run's results log (``results.jsonl``, the
packed ``results.jsonl.xz`` of a bundle, or the bundle directory): the shipped
``conformance/durations/cpu.json`` is regenerated with
``pjrt-conformance durations reports/cpu/<stamp>/results.jsonl --output
conformance/durations/cpu.json``. Exit 0 written, 2 unreadable input, no test in it or an --output that
cannot be written (a directory, a read-only place).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from conformance.certification.bundle import merge
from conformance import path_limits
from conformance.certification.results import runlog
from conformance.certification.bundle import shards
from conformance.certification.bundle import signing
from conformance.session import validate

EXIT_OK, EXIT_USAGE = 0, 2


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``merge`` and ``durations`` subcommands to ``sub``."""
    doc = {"description": __doc__, "formatter_class": argparse.RawDescriptionHelpFormatter}
    mrg = sub.add_parser("merge", help="merge the bundles of --shard runs into one bundle",
                         **doc)
    mrg.add_argument("parts", type=path_limits.argument, nargs="+", metavar="PART",
                     help="bundle directories of pjrt-conformance run --shard I/N")
    mrg.add_argument("--output", type=path_limits.argument, required=True,
                     help="merged bundle directory")
    mrg.add_argument("--force", action="store_true",
                     help="replace an earlier bundle in --output")
    mrg.add_argument("--sign-key", type=path_limits.argument, default=None,
                     help="OpenSSH private key: sign the merged bundle's manifest")
    dur = sub.add_parser("durations", help="per-test durations for --shard from a run's "
                                           "results.jsonl", **doc)
    dur.add_argument("log", type=path_limits.argument, metavar="RESULTS_JSONL")
    dur.add_argument("--output", type=path_limits.argument, default=None,
                     help="file to write (default: print the JSON)")


def _fail(command: str, message: object, code: int = EXIT_USAGE) -> int:
    print(f"pjrt-conformance {command}: {message}", file=sys.stderr)
    return code


def merge_command(ns: argparse.Namespace) -> int:
    try:
        return _merge(ns)
    finally:   # the claim of validate.output_dir on --output
        validate.release(ns.output)


def _merge(ns: argparse.Namespace) -> int:
    if ns.sign_key is not None and not ns.sign_key.is_file():
        return _fail("merge", f"--sign-key: {ns.sign_key} does not exist or is not a file")
    try:
        merge.check_output(ns.output, ns.parts)
        docs = merge.load_parts(ns.parts)   # checked before --output is touched
        merge.check(docs)
        with validate.claimed(ns.output, command="merge"):   # never while a run writes it
            if ns.force:
                merge.clear_earlier(ns.output)
            validate.output_dir(ns.output, option="--output", force=ns.force)
            command = shlex.join(["pjrt-conformance", "merge", *map(str, ns.parts),
                                  "--output", str(ns.output)])
            doc, path = merge.merge(ns.parts, docs, ns.output, command)
    except merge.MergeError as err:
        return _fail("merge", err, err.exit_code)
    except validate.OptionError as err:
        return _fail("merge", err)
    if ns.sign_key is not None:
        try:
            print(f"signed: {signing.sign(ns.output, ns.sign_key)}")
        except (OSError, signing.SigningError) as err:
            return _fail("merge", f"the bundle was written but not signed: {err}")
    m = doc["merge"]
    print(f"{ns.output}: {len(m['parts'])} shards of {m['selection_count']} tests merged; "
          f"verdict {doc['verdict'].upper()}; report: {path}; check it with: "
          f"pjrt-conformance verify {ns.output}")
    return EXIT_OK


def durations(ns: argparse.Namespace) -> int:
    try:
        if ns.output is not None:
            validate.output_file(ns.output, option="--output")
    except validate.OptionError as err:
        return _fail("durations", err)
    try:
        found = shards.durations_from_log(runlog.read_lines(runlog.resolve(ns.log)))
    except (OSError, ValueError) as err:
        return _fail("durations", f"{ns.log}: {err}")
    if not found:
        return _fail("durations", f"{ns.log}: no test report in it (a results.jsonl of "
                                  "pjrt-conformance run?)")
    if ns.output is None:
        import json

        print(json.dumps(found, indent=0))
    else:
        try:
            shards.write_durations(found, ns.output)
        except OSError as err:
            return _fail("durations", f"--output={ns.output}: cannot write it "
                                      f"({err.strerror or err})")
        print(f"{ns.output}: durations of {len(found)} tests, {sum(found.values()):.0f} s "
              "in all")
    return EXIT_OK


COMMANDS = {"merge": merge_command, "durations": durations}
