"""``pjrt-conformance``: run the suite and write a certification report.

    pjrt-conformance run --platform cpu [--output DIR] [--cpu-devices N] [-n WORKERS]
                         [--plugin-library PATH [--plugin-options JSON-or-FILE]]
                         [--known-failures FILE] [-- extra pytest args]

Exit status: 0 certified, 1 not certified, 2 usage error (unknown platform,
bad option, no report written).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import pytest

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED, EXIT_USAGE = 0, 1, 2


def default_output(platform: str) -> Path:
    """``reports/<platform>/<UTC timestamp>/`` under the current directory."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path("reports") / platform / stamp


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pjrt-conformance",
                                     description="PJRT conformance suite and certification")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite on a platform and write a report")
    run.add_argument("--platform", default="cpu", help="platform to certify (default: cpu)")
    run.add_argument("--output", type=Path, default=None,
                     help="report directory (default: reports/<platform>/<UTC timestamp>/)")
    run.add_argument("--cpu-devices", type=int, default=8,
                     help="devices of the CPU client (default: 8)")
    run.add_argument("--plugin-library", default=None,
                     help="PJRT plugin shared library to certify, registered under --platform")
    run.add_argument("--plugin-options", default=None,
                     help="create options of --plugin-library: a JSON object or a JSON file")
    run.add_argument("--expect-platform", default=None,
                     help="platform string the client must report (default: --platform)")
    run.add_argument("-n", "--workers", default="0",
                     help="pytest-xdist workers ('auto' or a number; default 0: in-process)")
    run.add_argument("--known-failures", action="append", default=[], type=Path,
                     help="known-failures file (repeatable)")
    run.add_argument("--timeout", type=float, default=600,
                     help="per-test timeout in seconds (default: 600)")
    run.add_argument("pytest_args", nargs=argparse.REMAINDER,
                     help="after '--': extra pytest arguments")
    return parser


def pytest_args(ns: argparse.Namespace, output: Path) -> list[str]:
    args = ["--pyargs", "conformance", f"--platform={ns.platform}",
            f"--cpu-devices={ns.cpu_devices}", f"--report-dir={output}",
            f"--timeout={ns.timeout:g}", "-p", "no:cacheprovider", "-q",
            "-o", "addopts=", "-o", "testpaths="]
    args += [f"--known-failures={p}" for p in ns.known_failures]
    for flag in ("plugin_library", "plugin_options", "expect_platform"):
        if getattr(ns, flag) is not None:
            args.append(f"--{flag.replace('_', '-')}={getattr(ns, flag)}")
    if ns.workers not in ("0", 0):
        args += ["-n", str(ns.workers)]
    extra = list(ns.pytest_args)
    if extra and extra[0] == "--":
        extra = extra[1:]
    return args + extra


def run(ns: argparse.Namespace) -> int:
    if ns.cpu_devices < 1:
        print(f"pjrt-conformance: --cpu-devices must be >= 1, got {ns.cpu_devices}",
              file=sys.stderr)
        return EXIT_USAGE
    output = ns.output or default_output(ns.platform)
    rc = pytest.main(pytest_args(ns, output))
    report_json = output / "report.json"
    if rc in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR) or \
            not report_json.exists():
        print(f"pjrt-conformance: no report written (pytest exit {int(rc)}); see the "
              "messages above", file=sys.stderr)
        return EXIT_USAGE
    doc = json.loads(report_json.read_text())
    s = doc["summary"]
    print(f"\npjrt-conformance: {doc['platform'].get('name')} -- {doc['verdict'].upper()}"
          f" ({s['collected']} collected, " + ", ".join(
              f"{v} {k}" for k, v in s["by_status"].items() if v) + ")")
    for reason in doc["verdict_reasons"]:
        print(f"  - {reason}")
    print(f"report: {report_json} and {output / 'report.md'}")
    return EXIT_CERTIFIED if doc["verdict"] == "certified" else EXIT_NOT_CERTIFIED


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if ns.command == "run":
        return run(ns)
    return EXIT_USAGE  # pragma: no cover - argparse enforces the subcommand


if __name__ == "__main__":
    sys.exit(main())
