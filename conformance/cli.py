"""``pjrt-conformance``: run the suite, write a report bundle, verify and compare bundles.

    pjrt-conformance run --platform cpu [--output DIR] [--cpu-devices N] [-n WORKERS]
                         [--plugin-library PATH [--plugin-options JSON-or-FILE]]
                         [--profile v4|FILE|none] [--declare CAPS] [--declare-file FILE]
                         [--waivers FILE] [--defects shipped|none|FILE]
                         [--reference-differential auto|off] [--sign-key PRIVKEY]
                         [-- extra pytest args]
    pjrt-conformance verify DIR [--key PUBKEY | --allowed-signers FILE [--identity NAME]]
                                [--strict]
    pjrt-conformance diff OLD NEW
    pjrt-conformance sign DIR --key PRIVKEY
    pjrt-conformance profile (--write FILE | --check NAME)

The verdict has two parts: the plugin verdict (certified / not certified, decided
by the results attributed to the plugin and the unattributed ones) and the stack
findings (framework and suite defects, with upstream links).

Exit status of ``run``: 0 the plugin is certified, 1 not certified, 2 usage error
(unknown platform, bad option or data file, no report written). ``verify``, ``diff``
and ``sign``: see :mod:`conformance.cli_bundles` (verify 0/1/2/3, diff 0 no
regression, 1 regressions, 2 usage, 3 malformed input). ``profile --check``: 0 the
shipped profile matches the collected tests, 1 it does not.
"""

from __future__ import annotations

import argparse
import datetime
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance import cli_bundles
from conformance.certification import signing
from conformance.certification import verdict
from conformance.session import options
from conformance.session import state as session_state
from conformance.certification import profiles

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED, EXIT_USAGE, EXIT_INVALID = 0, 1, 2, 3


def default_output(platform: str) -> Path:
    """``reports/<platform>/<UTC timestamp>/`` under the current directory."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path("reports") / platform / stamp


EXIT_CODES = {
    "run": "exit status: 0 the plugin is certified, 1 not certified (framework and suite "
           "findings alone never fail it), 2 usage error (unknown platform, bad option or "
           "data file, no report written)",
    "verify, diff, sign": "exit status: see 'pjrt-conformance verify|diff|sign --help'",
    "profile": "exit status: 0 written / the shipped profile matches the collected tests, "
               "1 it does not, 2 usage error",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pjrt-conformance", description="PJRT conformance suite and certification",
        epilog="; ".join(f"{k}: {v}" for k, v in EXIT_CODES.items()))
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite on a platform and write a report",
                         epilog=EXIT_CODES["run"])
    options.add_to(run.add_argument)
    run.set_defaults(reference_differential="auto")
    run.add_argument("--output", type=Path, default=None,
                     help="report directory (default: reports/<platform>/<UTC timestamp>/)")
    run.add_argument("-n", "--workers", default="0",
                     help="pytest-xdist workers ('auto' or a number; default 0: in-process)")
    run.add_argument("--timeout", type=float, default=600,
                     help="per-test timeout in seconds (default: 600)")
    run.add_argument("--random-seed", action="store_true",
                     help="the scheduled random-seed job: a fresh Hypothesis seed (printed and "
                          "recorded in the report) and the 'nightly' profile unless "
                          "--hypothesis-profile is given after '--'")
    run.add_argument("--sign-key", type=Path, default=None,
                     help="OpenSSH private key: sign the bundle's manifest (see 'sign')")
    run.add_argument("pytest_args", nargs=argparse.REMAINDER,
                     help="after '--': extra pytest arguments")
    cli_bundles.add_parsers(sub)
    prof = sub.add_parser("profile", help="write or check a profile from the collected tests",
                          epilog=EXIT_CODES["profile"])
    group = prof.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="write the profile of the collected tests")
    group.add_argument("--check", help="compare a shipped profile with the collected tests")
    return parser


def pytest_args(ns: argparse.Namespace, output: Path) -> list[str]:
    args = ["--pyargs", "conformance", f"--report-dir={output}", f"--timeout={ns.timeout:g}",
            "-p", "no:cacheprovider", "-q", "-o", "addopts=", "-o", "testpaths="]
    args += options.as_pytest_args(ns)
    if ns.workers not in ("0", 0):
        args += ["-n", str(ns.workers)]
    extra = list(ns.pytest_args)
    if extra and extra[0] == "--":
        extra = extra[1:]
    if getattr(ns, "seed", None) is not None:
        if not any(a.startswith("--hypothesis-profile") for a in extra):
            args.append("--hypothesis-profile=nightly")
        args.append(f"--hypothesis-seed={ns.seed}")
    return args + extra


class _Written:
    """A pytest plugin that keeps the report document the session wrote (or None)."""

    doc: dict[str, Any] | None = None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        state = config.stash.get(session_state.KEY, None)
        if state is not None and state.written:
            self.doc = state.written[0]


def run(ns: argparse.Namespace) -> int:
    if ns.num_processes < 1:
        print(f"pjrt-conformance: --num-processes must be >= 1, got {ns.num_processes}",
              file=sys.stderr)
        return 2
    if ns.cpu_devices < 1:
        print(f"pjrt-conformance: --cpu-devices must be >= 1, got {ns.cpu_devices}",
              file=sys.stderr)
        return EXIT_USAGE
    if ns.sign_key is not None:
        try:
            signing.ssh_keygen()
            if not ns.sign_key.is_file():
                raise FileNotFoundError(f"{ns.sign_key} does not exist or is not a file")
        except (FileNotFoundError, signing.SigningError) as err:
            print(f"pjrt-conformance: --sign-key: {err}", file=sys.stderr)
            return EXIT_USAGE
    output = ns.output or default_output(ns.platform)
    ns.seed = None
    if ns.random_seed:
        if any(a.startswith("--hypothesis-seed") for a in ns.pytest_args):
            print("pjrt-conformance: --random-seed and --hypothesis-seed exclude each other",
                  file=sys.stderr)
            return EXIT_USAGE
        ns.seed = secrets.randbelow(2**32)
        print(f"pjrt-conformance: Hypothesis seed {ns.seed}; reproduce with: "
              f"pjrt-conformance run ... -- --hypothesis-profile=nightly "
              f"--hypothesis-seed={ns.seed}", flush=True)
    written = _Written()
    rc = pytest.main(pytest_args(ns, output), plugins=[written])
    doc = written.doc
    if rc in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR) or doc is None:
        print(f"pjrt-conformance: no report written (pytest exit {int(rc)}); see the "
              "messages above", file=sys.stderr)
        return EXIT_USAGE
    if ns.sign_key is not None:
        try:
            print(f"signed: {signing.sign(output, ns.sign_key)}")
        except (OSError, signing.SigningError) as err:
            print(f"pjrt-conformance: the bundle was written but not signed: {err}",
                  file=sys.stderr)
            return EXIT_USAGE
    s = doc["summary"]
    print(f"\npjrt-conformance: {doc['platform'].get('name')} -- "
          f"{verdict.headline(doc, upper=True)}"
          f" ({s['collected']} collected, " + ", ".join(
              f"{v} {k}" for k, v in s["by_status"].items() if v) + ")")
    for reason in doc["verdict_reasons"]:
        print(f"  - {reason}")
    if ns.seed is not None:
        print(f"Hypothesis seed: {ns.seed} (--hypothesis-seed={ns.seed} reproduces every draw)")
    print(f"report bundle: {output}/ (report.json, report.md, report.html, junit.xml, "
          f"MANIFEST.sha256); check it with: pjrt-conformance verify {output}")
    return EXIT_CERTIFIED if doc["verdict"] == "certified" else EXIT_NOT_CERTIFIED


def collected_profile(target: Path) -> int:
    """Collect the suite (1 CPU device) and write its profile to ``target``."""
    return int(pytest.main(["--pyargs", "conformance", "--collect-only", "-q",
                            "-p", "no:cacheprovider", "-o", "addopts=", "-o", "testpaths=",
                            "--cpu-devices=1", "--profile=none", f"--write-profile={target}"]))


def profile_command(ns: argparse.Namespace) -> int:
    if ns.write:
        return EXIT_USAGE if collected_profile(ns.write) else 0
    try:
        shipped = profiles.load(ns.check)
    except ValueError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / f"{shipped.name}.json"
        if collected_profile(target):
            return EXIT_USAGE
        current = profiles.load(str(target))
    added = sorted(set(current.tests) - set(shipped.tests))
    removed = sorted(set(shipped.tests) - set(current.tests))
    moved = sorted(t for t in set(current.tests) & set(shipped.tests)
                   if current.tests[t] != shipped.tests[t])
    for title, items in (("not in the profile", added), ("in the profile, not collected",
                                                         removed), ("tier changed", moved)):
        for t in items:
            print(f"{title}: {t}")
    if added or removed or moved:
        print(f"profile {shipped.name} is out of date: regenerate with "
              f"'pjrt-conformance profile --write conformance/profiles/{shipped.name}.json' "
              "and bump its version if core tests changed")
        return EXIT_NOT_CERTIFIED
    print(f"profile {shipped.name}: {len(shipped.tests)} test ids match the collected suite")
    return 0


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    commands = {"run": run, "profile": profile_command, **cli_bundles.COMMANDS}
    return commands[ns.command](ns)


if __name__ == "__main__":
    sys.exit(main())
