"""The bundle commands of ``pjrt-conformance``: ``verify``, ``diff`` and ``sign``.

    pjrt-conformance verify DIR [--key PUBKEY | --allowed-signers FILE [--identity NAME]]
                                [--strict]
    pjrt-conformance diff OLD NEW
    pjrt-conformance sign DIR --key PRIVKEY
    pjrt-conformance rerender DIR... [--key PRIVKEY]

Exit status of ``verify``: 0 intact and certified against a shipped profile, 1
intact but not certified (or no profile), 2 usage error (missing key file,
ssh-keygen missing), 3 not intact, malformed or a bad signature. ``diff``: 0 no
regression, 1 regressions (a new failure, a lost certification), 2 usage error
(a path that does not exist), 3 malformed input or a bundle that ``verify`` finds not
intact (a lone report.json, without its manifest, is compared unchecked); bundles of
different platforms are compared with a warning. ``sign``: 0 signed, 2 usage
error or ssh-keygen refused the key. ``rerender``: 0 every bundle rebuilt from its
records (attribution decided again, every file rendered again, signed again with
``--key``), 2 usage error, 3 a bundle that is not intact (left as it was). Every error
is one line, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from conformance import cli_shards
from conformance import path_limits
from conformance.certification.bundle import bundle_files
from conformance.certification.compare import diff
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog
from conformance.certification.bundle import signing
from conformance.session import results_log
from conformance.session import validate

EXIT_OK, EXIT_NOT_CERTIFIED, EXIT_USAGE, EXIT_INVALID = 0, 1, 2, 3
EXIT_WRITE_FAILED = 5   # finalize: the bundle could not be written (space, memory)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``verify``, ``diff``, ``sign``, ``finalize`` and ``scoreboard`` subcommands
    to ``sub``."""
    doc = {"description": __doc__, "formatter_class": argparse.RawDescriptionHelpFormatter}
    ver = sub.add_parser("verify", help="check a report bundle and print its verdict", **doc)
    ver.add_argument("bundle", type=path_limits.argument, metavar="DIR")
    trust = ver.add_mutually_exclusive_group()
    trust.add_argument("--key", type=path_limits.argument, metavar="PUBKEY",
                       help="OpenSSH public key that must have signed the manifest")
    trust.add_argument("--allowed-signers", type=path_limits.argument, metavar="FILE",
                       help="ssh-keygen allowed_signers file of trusted signers")
    ver.add_argument("--identity", metavar="NAME", help="principal of --allowed-signers that must have "
                     "signed (default: any principal listed for the signing key)")
    ver.add_argument("--strict", action="store_true",
                     help="another suite version, commit or wheel, or a modified suite, "
                          "makes the bundle invalid (exit 3) instead of a note")
    dif = sub.add_parser("diff", help="compare two report bundles (exit 1 on regressions)",
                         **doc)
    dif.add_argument("old", type=path_limits.argument, metavar="OLD",
                     help="bundle directory or report.json")
    dif.add_argument("new", type=path_limits.argument, metavar="NEW",
                     help="bundle directory or report.json")
    sig = sub.add_parser("sign", help="sign a bundle's manifest with an OpenSSH key", **doc)
    sig.add_argument("bundle", type=path_limits.argument, metavar="DIR")
    sig.add_argument("--key", type=path_limits.argument, required=True, metavar="PRIVKEY",
                     help="OpenSSH private key (or a public key whose private half is in "
                          "ssh-agent)")
    rer = sub.add_parser("rerender", help="rebuild bundles from their own records: "
                         "attribution decided again, every file rendered again", **doc)
    rer.add_argument("bundles", type=path_limits.argument, nargs="+", metavar="DIR")
    rer.add_argument("--key", type=path_limits.argument, metavar="PRIVKEY",
                     help="OpenSSH private key to sign the rebuilt manifests with "
                          "(without it, the bundles are left unsigned)")
    rer.add_argument("--keep-log", action="store_true",
                     help="leave a results log stored byte for byte as it is (default: "
                          "pack it as runs do now)")

    board = sub.add_parser("scoreboard", help="one table of the newest bundle of every backend")
    board.add_argument("reports_dir", type=path_limits.argument)
    board.add_argument("--markdown", type=path_limits.argument, help="insert the table between the "
                       "scoreboard markers of this file (default: print it)")
    board.add_argument("--html", type=path_limits.argument,
                       help="write a self-contained HTML page here")
    fin = sub.add_parser("finalize", help="build the incomplete bundle of a run that was "
                                          "killed before it wrote its report")
    fin.add_argument("bundle", type=path_limits.argument)
    cli_shards.add_parsers(sub)

def _usage(command: str, message: object) -> int:
    print(f"pjrt-conformance {command}: {message}", file=sys.stderr)
    return EXIT_USAGE


def verify(ns: argparse.Namespace) -> int:
    if ns.identity is not None and ns.allowed_signers is None:
        return _usage("verify", "--identity needs --allowed-signers")
    try:
        killed = not (ns.bundle / "report.json").exists() and runlog.locate(ns.bundle) is not None
    except ValueError:   # a log that is not a regular file: verify below says so
        killed = False
    if killed:
        print(f"{ns.bundle}: no report.json, but the results of a run that was killed; "
              f"build its incomplete bundle with: pjrt-conformance finalize {ns.bundle}")
    try:
        result = bundle_files.verify(ns.bundle, key=ns.key, allowed_signers=ns.allowed_signers,
                                     identity=ns.identity, strict=ns.strict)
    except (FileNotFoundError, ValueError, signing.SigningError) as err:
        return _usage("verify", err)
    if result.signature is not None and result.signature.ok:
        print(f"  signature: {result.signature.state}: {result.signature.detail}")
    for note in result.notes:
        print(f"  note: {note}")
    for problem in result.problems:
        print(f"  - {problem}")
    if not result.valid:
        print(f"{ns.bundle}: NOT INTACT ({len(result.problems)} problem(s)); stated verdict "
              f"{result.verdict!r} cannot be trusted")
        return EXIT_INVALID
    print(f"{ns.bundle}: intact; verdict {result.verdict.upper()} (profile "
          f"{result.profile or 'none: not a certification'})")
    return EXIT_OK if result.verdict == "certified" and result.profile \
        else EXIT_NOT_CERTIFIED


def diff_bundles(ns: argparse.Namespace) -> int:
    try:
        old, new = diff.load(ns.old), diff.load(ns.new)
    except FileNotFoundError as err:
        return _usage("diff", err)
    except reportfile.MalformedReport as err:
        print(f"pjrt-conformance diff: malformed input: {err}", file=sys.stderr)
        return EXIT_INVALID
    for path in (ns.old, ns.new):   # a tampered bundle is never compared as genuine
        problems = diff.integrity(path)
        if problems:
            print(f"pjrt-conformance diff: {path}: not intact ({len(problems)} problem(s): "
                  f"{problems[0]}); check it with: pjrt-conformance verify "
                  f"{diff.bundle_dir(path)}", file=sys.stderr)
            return EXIT_INVALID
    warning = diff.platform_warning(old, new)
    if warning:
        print(f"pjrt-conformance diff: {warning}", file=sys.stderr)
    changes = diff.compare(old, new)
    print(diff.render(changes), end="")
    if diff.regressed(changes):
        print(f"regressions: {len(changes['new_failures'])} new failure(s)"
              + ("" if changes["new_failures"] else ", the certified verdict was lost"))
        return EXIT_NOT_CERTIFIED
    return EXIT_OK


def _locked(command: str, path: Path, action: Callable[[], int]) -> int:
    """``action()`` while this process holds the claim of the directory ``path``
    (:func:`conformance.session.validate.claimed`); exit 2 with one line when a run or
    another command is writing into it."""
    try:
        with validate.claimed(path, command=command):
            return action()
    except validate.DirectoryBusy as err:
        return _usage(command, err)


def sign(ns: argparse.Namespace) -> int:
    return _locked("sign", ns.bundle, lambda: _sign(ns))


def _sign(ns: argparse.Namespace) -> int:
    if not ns.bundle.is_dir():
        return _usage("sign", f"{ns.bundle} is not a bundle directory")
    problems = [p for p in bundle_files.verify(ns.bundle).problems   # an old signature is replaced
                if not p.startswith(signing.SIGNATURE)]
    if problems:
        return _usage("sign", f"refusing to sign {ns.bundle}: not intact ({problems[0]})")
    try:
        path = signing.sign(ns.bundle, ns.key)
    except (FileNotFoundError, signing.SigningError) as err:
        return _usage("sign", err)
    print(f"signed: {path} (check with: pjrt-conformance verify {ns.bundle} --key "
          f"<public key>)")
    return EXIT_OK


def finalize_run(ns: argparse.Namespace) -> int:
    return _locked("finalize", ns.bundle, lambda: _finalize(ns))


def _finalize(ns: argparse.Namespace) -> int:
    try:
        doc, _, lines = results_log.finalize(ns.bundle, why="the run was killed before "
                                                            "it wrote its report")
    except ValueError as err:
        print(f"pjrt-conformance finalize: {err}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, MemoryError) as err:   # no space or memory: the next finalize rebuilds
        why = getattr(err, "strerror", None) or str(err) or "not enough memory"
        print(f"pjrt-conformance finalize: {ns.bundle}: cannot write the bundle ({why}); "
              "free space (or memory) and run finalize again", file=sys.stderr)
        return EXIT_WRITE_FAILED
    if lines:
        print(f"{ns.bundle}: dropped {len(lines)} corrupt or cut-off line(s) of its results "
              f"log (line {', '.join(map(str, lines[:20]))}{', ...' if len(lines) > 20 else ''}"
              "): not JSON test reports; every other result kept (noted in the report's "
              "'Report errors')")
    print(f"{ns.bundle}: verdict {doc['verdict'].upper()}: {doc['summary']['reported']} "
          f"finished result(s) of {doc['summary']['collected']} collected; check it with: "
          f"pjrt-conformance verify {ns.bundle}")
    return 0


def rerender_command(ns: argparse.Namespace) -> int:
    from conformance.certification.bundle import rerender

    if ns.key is not None and not ns.key.is_file():
        return _usage("rerender", f"--key {ns.key}: no such file")
    status = EXIT_OK
    for path in ns.bundles:
        try:
            with validate.claimed(path, command="rerender"):
                doc = rerender.rerender(path, key=ns.key, keep_log=ns.keep_log)
        except validate.DirectoryBusy as err:
            return _usage("rerender", err)
        except rerender.RerenderError as err:
            print(f"pjrt-conformance rerender: {err}", file=sys.stderr)
            status = EXIT_INVALID
            continue
        except signing.SigningError as err:
            return _usage("rerender", err)
        counts = doc["stack_findings"]["results_by_attribution"]
        print(f"{path}: re-rendered; verdict {doc['verdict'].upper()}; attribution "
              + ", ".join(f"{k} {v}" for k, v in counts.items())
              + f"; {doc['shared_with_xla']['count']} plugin failure(s) shared with XLA"
              + ("; signed" if ns.key else "; unsigned"))
    return status


def scoreboard_command(ns: argparse.Namespace) -> int:
    """0 written; 2 no bundles, bad markers or an output inside a bundle; 3 written, but
    a bundle shown, or a newer one passed over, is not intact."""
    from conformance.certification.compare import scoreboard

    from conformance.certification.bundle import entries
    from conformance.option_error import OptionError

    try:   # never into a bundle: verify would find it changed
        for option, target in (("--markdown", ns.markdown), ("--html", ns.html)):
            if target is not None:
                entries.refuse_inside_bundle(target, option, is_dir=False)
    except OptionError as err:
        return _usage("scoreboard", err)
    passed_over: list[scoreboard.Row] = []
    try:
        rows = scoreboard.collect(ns.reports_dir, passed_over)
        table = scoreboard.render_markdown(rows)
        if ns.markdown:
            scoreboard.insert_markdown(ns.markdown, table)
        else:
            print(table, end="")
        if ns.html:
            ns.html.write_text(scoreboard.render_html(rows, ns.html.parent), encoding="utf-8")
    except (scoreboard.ScoreboardError, OSError) as err:
        print(f"pjrt-conformance scoreboard: {err}", file=sys.stderr)
        return EXIT_USAGE
    bad = [r for r in rows if r.problem.startswith(("not intact", "malformed"))]
    for r in bad:
        print(f"  - {r.backend}: {r.problem}", file=sys.stderr)
    for r in passed_over:   # newer than the row shown, but not intact: not shown
        print(f"  - {r.backend}: {r.source} passed over, {r.problem}", file=sys.stderr)
    return EXIT_INVALID if bad or passed_over else 0


COMMANDS = {"verify": verify, "diff": diff_bundles, "sign": sign, "finalize": finalize_run,
            "rerender": rerender_command,
            "scoreboard": scoreboard_command, **cli_shards.COMMANDS}
