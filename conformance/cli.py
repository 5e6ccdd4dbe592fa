"""``pjrt-conformance``: run the suite, write a report bundle, verify and compare bundles.

    pjrt-conformance run --platform cpu [--output DIR] [--cpu-devices N] [-n WORKERS]
                         [--plugin-library PATH [--plugin-options JSON-or-FILE]]
                         [--profile v9|FILE|none] [--declare CAPS] [--declare-file FILE]
                         [--waivers FILE] [--defects shipped|none|FILE]
                         [--reference-differential auto|off] [--sign-key PRIVKEY]
                         [--shard I/N [--shard-durations NAME-or-FILE]]
                         [--multihost [--coordinator-address HOST:PORT --process-id I
                          --process-count N]]  (docs/cluster.md)
                         [-- extra pytest args]
    pjrt-conformance verify DIR [--key PUBKEY | --allowed-signers FILE [--identity NAME]]
                                [--strict]
    pjrt-conformance finalize DIR
    pjrt-conformance diff OLD NEW
    pjrt-conformance sign DIR --key PRIVKEY
    pjrt-conformance profile (--write FILE | --check NAME)
    pjrt-conformance merge PART... --output DIR [--force] [--sign-key PRIVKEY]
    pjrt-conformance durations RESULTS_JSONL [--output FILE]
    pjrt-conformance scoreboard REPORTS_DIR [--markdown FILE] [--html FILE]
    pjrt-conformance dashboard [--asv-results DIR ...] [--bundles DIR] [--limits DIR] --out DIR
    pjrt-conformance catalog bisect (--env [RELEASE=]PYTHON ... | --matrix DIR)
                                    [--only ID] [--timeout S] [-j N] [--no-write]
                                    (docs/catalog-bisect.md)

The verdict has two parts: the plugin verdict (certified / not certified, decided
by the results attributed to the plugin and the unattributed ones) and the stack
findings (framework and suite defects, with upstream links).

Exit status of ``run``: 0 the plugin is certified, 1 not certified, 2 usage error (unknown
platform, bad option, no report written; checked before the first test:
:mod:`conformance.session.validate`), 4 incomplete (cancelled by SIGTERM/SIGINT at any
moment, :mod:`conformance.session.cancel`: the finished results are written with verdict
``incomplete``; a cancel before every check passed writes nothing), 5 the bundle could
not be written (a full disk, :mod:`conformance.session.disk_full`, or no memory;
``finalize`` builds it from the kept results log once space is free). Every test runs in a
pytest-xdist worker (``-n 0`` means one), so a segfault is that test's ``crash``; a
failing test runs once more (pytest-rerunfailures) and one that then passes is
``flaky``. ``finalize``: 0 an ``incomplete`` bundle was built from the
``results.jsonl`` of a run that was killed (corrupt lines dropped and named), 2 no such
run, 5 the bundle could not be written. ``verify``, ``diff`` and
``sign``: see :mod:`conformance.cli_bundles` (verify 0/1/2/3, diff 0 no regression,
1 regressions, 2 usage, 3 malformed input). ``profile --check``: 0 the
shipped profile matches the collected tests, 1 it does not. ``scoreboard``: 0
written, 2 no bundle found (or bad markers), 3 written but a bundle is not intact.
``dashboard``: see :mod:`conformance.dashboard.dashboard_command` (0 written, 2 usage, 3 malformed).
``catalog bisect``: see :mod:`conformance.certification.catalog.catalog_bisect` (0 measured,
1 written with errors or unreproduced entries, 2 usage).
"""

from __future__ import annotations

import sys

from conformance.session import cancel

if cancel.wanted(__name__, sys.argv):   # before the imports below: a cancel during
    cancel.install(program=True)         # them is exit 4 too, never the default 143

import argparse
import datetime
import errno
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance import cli_bundles, cli_multihost
from conformance import path_limits
from conformance.dashboard import dashboard_command
from conformance.certification.catalog import catalog_bisect
from conformance.certification.bundle import signing
from conformance.certification.verdict import plugin_verdict
from conformance.processes import lifetime
from conformance.processes import runner
from conformance.session import disk_full
from conformance.session import invocation
from conformance.session import option_files
from conformance.session import option_intake
from conformance.session import options
from conformance.session import results_log
from conformance.session import run_options
from conformance.session import validate
from conformance.session import sharding
from conformance.certification.catalog import profiles

EXIT_CERTIFIED, EXIT_NOT_CERTIFIED, EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPLETE = 0, 1, 2, 3, 4
EXIT_WRITE_FAILED = disk_full.EXIT_WRITE_FAILED   # 5: the bundle could not be written
#: pytest-rerunfailures: a timeout is not re-run (it would cost the whole timeout again).
_RERUN = ["--reruns=1", "--rerun-except=Timeout"]
EXIT_CODES = """exit status:
  any      5 not enough memory to start (the console script, one line)
  run      0 the plugin is certified, 1 not certified (framework and suite findings
           alone never fail it) or, on --profile none with nothing failed, not a
           certification, 2 usage error (bad option, unknown platform, bad data
           file, no report written), 4 incomplete (cancelled by SIGTERM/SIGINT at any
           moment: the finished results are written with verdict incomplete; nothing
           is written when the cancel comes before the checks passed), 5 the bundle
           could not be written (a full disk, no memory): the results log is kept;
           'finalize' builds the bundle once space is free
  verify   0 intact and certified, 1 intact but not certified (or no profile),
           2 usage error, 3 not intact or malformed
  finalize 0 an incomplete bundle was built from a killed run's results.jsonl
           (corrupt lines are dropped and named), 2 no such run, 5 the bundle could
           not be written (a full disk, no memory): run finalize again
  diff     0 no change, 1 regressions, 2 usage error, 3 malformed input
  sign     0 signed, 2 usage error (no key, no ssh-keygen, a bundle not intact)
  scoreboard
           0 written, 2 no bundle found (or bad markers), 3 a bundle is not intact
  dashboard
           0 written, 2 usage error (no asv results, a path missing), 3 malformed
           input (written without it when only a results file or bundle is bad)
  profile  --check: 0 the shipped profile matches the collected tests, 1 it does not
  merge    0 written, 2 usage error (fewer than 2 parts, parts that overlap, miss a
           shard or disagree), 3 a part that is not an intact bundle
  durations
           0 written, 2 unreadable input or no test in it"""
RUN_EPILOG = """pytest options, given after '--' (e.g. pjrt-conformance run --platform cpu -- -v):
  --hypothesis-profile {ci,dev,nightly}
                 Hypothesis settings of the suite's tests (default ci: 8 examples,
                 derandomized; dev: 25; nightly: 500, random seeds)
  --hypothesis-seed S
                 seed of every draw (see --random-seed)
  --progress {auto,rich,plain,off}
                 live per-area progress (default auto: redrawn in place on a TTY,
                 plain lines every --progress-interval seconds otherwise)
  --progress-interval SECONDS
                 seconds between plain progress lines (default 30)
  -v             print full tracebacks on the terminal (they are always in the
                 bundle's report.json and report.html)
  -k EXPR        select tests by name (the profile check then reports the others
                 as missing; use --profile none for a partial run)

""" + EXIT_CODES


def default_output(platform: str, plugin_library: str | None = None) -> Path:
    """``reports/<platform>/<UTC timestamp>/`` under the current directory; with a
    ``plugin_library``, ``reports/<platform>-<plugin>/<UTC timestamp>/``, where
    ``<plugin>`` is the library's folder with ``_`` as ``-`` (the scoreboard's backend
    name: ``.../fastatomstruct_xla_cpu/libpjrt_cpu.so`` -> ``cpu-fastatomstruct-xla-cpu``),
    so a plugin's bundles never sit beside the built-in client's. The timestamp has
    microseconds (``20261127T015414.123456Z``), and the run makes the folder with an
    exclusive ``mkdir`` (:func:`validate.output_dir` ``fresh``): two runs never share it."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    folder = platform
    if plugin_library:
        plugin = Path(plugin_library).resolve().parent.name.replace("_", "-")
        folder = f"{platform}-{plugin}" if plugin and plugin != platform else platform
    return Path("reports") / folder / stamp




def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pjrt-conformance",
                                     description="PJRT conformance suite and certification",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=EXIT_CODES)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite on a platform and write a report",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=RUN_EPILOG)
    options.add_to(run.add_argument)
    run.set_defaults(reference_differential="auto")
    run.add_argument("--output", type=path_limits.argument, default=None,
                     help="report directory (default: reports/<platform>/<UTC timestamp>/)")
    run.add_argument("--force", action="store_true",
                     help="replace an earlier bundle in --output (default: refuse a "
                          "non-empty directory)")
    run.add_argument("-n", "--workers", default="0",
                     help="pytest-xdist workers ('auto' or a number, at most 4 per CPU "
                          "core; default 0: one worker, so that a crash costs one test)")
    run.add_argument("--timeout", type=float, default=600,
                     help="per-test timeout in seconds (default: 600)")
    run.add_argument("--random-seed", action="store_true",
                     help="the scheduled random-seed job: a fresh Hypothesis seed (printed and "
                          "recorded in the report) and the 'nightly' profile unless "
                          "--hypothesis-profile is given after '--'")
    run.add_argument("--sign-key", type=path_limits.argument, default=None,
                     help="OpenSSH private key: sign the bundle's manifest (see 'sign')")
    cli_multihost.add_arguments(run)
    run.add_argument("pytest_args", nargs=argparse.REMAINDER,
                     help="after '--': extra pytest arguments")
    cli_bundles.add_parsers(sub)
    dashboard_command.add_parser(sub)
    catalog_bisect.add_parser(sub)
    prof = sub.add_parser("profile", help="write or check a profile from the collected tests")
    group = prof.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=path_limits.argument,
                       help="write the profile of the collected tests")
    group.add_argument("--check", help="compare a shipped profile with the collected tests")
    return parser


def cache_dir() -> Path:
    """Where a run keeps the working folders of the tools it runs (Hypothesis' example
    database and caches): ``$XDG_CACHE_HOME/pjrt-conformance`` (``~/.cache/...``), never
    the current directory, which a run leaves as it was."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pjrt-conformance"


def keep_tool_folders_out_of_cwd() -> None:
    """Hypothesis' ``.hypothesis/`` goes to :func:`cache_dir` (``HYPOTHESIS_STORAGE_DIRECTORY``
    for the pytest-xdist workers, which read it at import, and this process's setting),
    unless the user set it; pytest-benchmark is not loaded (``-p no:benchmark`` in
    :func:`pytest_args`), so no ``.benchmarks/`` appears either."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    folder = cache_dir() / "hypothesis"
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(folder)
    import hypothesis.configuration

    hypothesis.configuration.set_hypothesis_home_dir(str(folder))


def pytest_args(ns: argparse.Namespace) -> list[str]:
    """pytest's own arguments of a run: the suite's selection, ``--timeout``, plugins,
    re-runs, ``-n``, the Hypothesis seed of ``--random-seed`` and the user's arguments
    after ``--``. The suite's options are not among them: :func:`run` hands them over as
    one object (:class:`conformance.session.run_options.Handover`)."""
    args = invocation.suite_selection() + [
        f"--timeout={ns.timeout:g}", "-p", "no:cacheprovider", "-p", "no:benchmark", "-q"]
    args += _RERUN
    args += ["-n", "1" if str(ns.workers) == "0" else str(ns.workers)]
    extra = list(ns.pytest_args)
    if extra and extra[0] == "--":
        extra = extra[1:]
    if getattr(ns, "seed", None) is not None:
        if not any(a.startswith("--hypothesis-profile") for a in extra):
            args.append("--hypothesis-profile=nightly")
        args.append(f"--hypothesis-seed={ns.seed}")
    return args + extra


def child_pytest_args(ns: argparse.Namespace, report_dir: Path) -> list[str]:
    """The command line of a child pytest process that runs the suite (a multi-host
    process's own part, writing into ``report_dir``): a child is an argv boundary, so the
    run's options are written out (:meth:`RunOptions.as_pytest_args`) and the child
    builds its own object from them once, then :func:`pytest_args`."""
    return option_intake.from_namespace(ns, report_dir).as_pytest_args() + pytest_args(ns)


class _Written:
    """A pytest plugin that keeps the report document the session wrote (or None)."""

    doc: dict[str, Any] | None = None
    write_error: str | None = None   # the run's files could not be written (a full disk)
    cancelled_by: str | None = None   # what cancelled the session (lifetime.cancelled_by)
    config: pytest.Config | None = None
    usage_error: str | None = None   # found once the tests were collected (--shard)
    start_error: str | None = None   # run.json could not be written (a full disk)

    @property
    def signals(self) -> list[str]:
        """The SIGTERM/SIGINT the session got (:func:`cancel.note_session`), also when
        a cancel left pytest before its end."""
        return cancel.session_signals(self.config) if self.config is not None else []

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # imported here, not at the top: it imports jax (about 1 s), which only a run
        # needs; verify, diff, scoreboard and the other commands start without it
        from conformance.session import session_state

        state = config.stash.get(session_state.KEY, None)
        if state is not None and state.written:
            self.doc = state.written[0]
        if state is not None:
            self.write_error = state.write_error
        self.cancelled_by = lifetime.cancelled_by(config)
        self.usage_error = sharding.usage_error(config)
        self.start_error = disk_full.start_failure(config)


def _validate(ns: argparse.Namespace, output: Path | None) -> None:
    """Every check of :mod:`conformance.session.validate` (OptionError if one fails);
    ``output`` None: not this process's to write (a multi-host process other than 0)."""
    validate.platform_name(ns.platform)   # it names a folder of the default --output
    validate.numbers(cpu_devices=ns.cpu_devices, num_processes=ns.num_processes,
                     timeout=ns.timeout, workers_value=ns.workers)
    option_intake.float_controls(ns.float_controls)
    # a pipe (<(...)) is read once, here: every later reader gets a private copy
    option_files.read_once(lambda dest: getattr(ns, dest), lambda d, v: setattr(ns, d, v))
    ns.pytest_args = option_files.read_once_args(ns.pytest_args)
    option_files.check(lambda dest: getattr(ns, dest))
    option_files.argument_files(ns.pytest_args)
    ns.create_options = validate.parsed_plugin_options(ns.plugin_options, ns.plugin_library)
    validate.certification_files(profile=ns.profile, waivers=ns.waivers,
                                 known_failures=ns.known_failures)
    sharding.check_options(ns.shard, ns.shard_durations)
    if output is not None:
        validate.output_dir(output, option="--output", force=ns.force,
                            fresh=ns.output is None)   # claimed (locked) until run() ends


def run(ns: argparse.Namespace) -> int:
    """``pjrt-conformance run``; a SIGTERM or SIGINT at any moment is exit 4
    (:mod:`conformance.session.cancel`, :func:`_cancelled`)."""
    output = ns.output or default_output(ns.platform, ns.plugin_library)
    existed = output.exists()
    if ns.random_seed and any(a.startswith("--hypothesis-seed") for a in ns.pytest_args):
        print("pjrt-conformance: --random-seed and --hypothesis-seed exclude each other",
              file=sys.stderr)
        return EXIT_USAGE
    keep_tool_folders_out_of_cwd()   # the run's processes inherit it
    if cli_multihost.wanted(ns):   # its processes handle their signals (docs/cluster.md)
        if cancel.release() is not None:
            return _cancelled(ns, output, existed)
        return cli_multihost.run(ns, output, child_pytest_args, _validate)
    cancel.install()
    written = _Written()
    try:
        cancel.arm()
        return _run(ns, output, existed, written)
    except KeyboardInterrupt:
        cancel.disarm()
        return _cancelled(ns, output, existed, by=(written.signals or [None])[0])
    finally:
        validate.release(output)
        cancel.finish()


def _cancelled(ns: argparse.Namespace, output: Path, existed: bool,
               by: str | None = None) -> int:
    """Exit 4 for a run cancelled at any moment. Before the run claimed ``output``
    (``run.json``: every check passed) nothing is kept (a directory the run made is
    removed); from then on the ``incomplete`` bundle of the finished results is, the one
    the session wrote or, when the cancel came before or while it was written (or
    signed), one built from the results log as ``finalize`` does. ``by``: the signal
    the session saw, when this process's handler saw none."""
    why = f"cancelled by {cancel.signal_name() or by or 'SIGINT'}"
    claimed = validate.holds(output)   # else another run's (or nobody's): never touched
    if not claimed or not (output / results_log.RUN_FILE).is_file():
        if claimed:
            results_log.discard_unstarted(output, remove_dir=not existed)
            validate.release(output, remove_made=True)   # and the folders made for it
        print(f"pjrt-conformance: {why} before the run began: nothing written to {output}/ "
              "(run the same command again)", file=sys.stderr)
        return EXIT_INCOMPLETE
    try:
        doc = results_log.incomplete_bundle(output, why)
    except ValueError as err:
        print(f"pjrt-conformance: {why}; no bundle: {err}", file=sys.stderr)
        return EXIT_INCOMPLETE
    except (OSError, MemoryError) as err:
        print(f"pjrt-conformance: {why}; {disk_full.describe(output, _os_error(err))}",
              file=sys.stderr)
        return EXIT_WRITE_FAILED
    if ns.sign_key is not None:
        try:
            print(f"signed: {signing.sign(output, ns.sign_key)}")
        except (OSError, signing.SigningError) as err:
            print(f"pjrt-conformance: the incomplete bundle was written but not signed: "
                  f"{err}", file=sys.stderr)
    print(f"\npjrt-conformance: run {why} -- verdict INCOMPLETE; "
          f"{doc['summary']['reported']} finished result(s) kept in {output}/ "
          f"(check it with: pjrt-conformance verify {output})", file=sys.stderr)
    return EXIT_INCOMPLETE


def _os_error(err: BaseException) -> OSError:
    """``err`` as an OSError (a MemoryError: ENOMEM), for :func:`disk_full.describe`."""
    return err if isinstance(err, OSError) else OSError(errno.ENOMEM, "not enough memory "
                                                        f"({type(err).__name__})")


def _run(ns: argparse.Namespace, output: Path, existed: bool, written: _Written) -> int:
    if ns.sign_key is not None:
        try:   # before --output is made: a key that cannot sign now would fail at the end
            signing.check_key(ns.sign_key)
        except (FileNotFoundError, signing.SigningError) as err:
            print(f"pjrt-conformance: --sign-key: {err}", file=sys.stderr)
            return EXIT_USAGE
    try:
        _validate(ns, output)
    except validate.OptionError as err:
        print(f"pjrt-conformance: {err}", file=sys.stderr)
        return EXIT_USAGE
    cancel.check()   # each step asks too: Python may have lost the KeyboardInterrupt
    ns.seed = None
    if ns.random_seed:
        ns.seed = secrets.randbelow(2**32)
        print(f"pjrt-conformance: Hypothesis seed {ns.seed}; reproduce with: "
              f"pjrt-conformance run ... -- --hypothesis-profile=nightly "
              f"--hypothesis-seed={ns.seed}", flush=True)
    cancel.hold()   # pytest starts up: a cancel is taken up when the suite configures
    handover = run_options.Handover(option_intake.from_namespace(ns, output, force=ns.force))
    rc = pytest.main(pytest_args(ns), plugins=[written, handover])
    cancel.arm()
    doc = written.doc
    if doc is None and written.start_error:   # a full disk before any test: nothing kept
        results_log.discard_unstarted(output, remove_dir=not existed)
        validate.release(output, remove_made=True)
        print(f"pjrt-conformance: {written.start_error}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    if doc is None and written.write_error:   # a full disk: the results log is kept
        print(f"pjrt-conformance: no report written: {written.write_error}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    if (rc == pytest.ExitCode.INTERRUPTED and doc is None) or (   # cancelled before the
            written.signals and (doc is None or doc["verdict"] != "incomplete")):
        cancel.disarm()   # session wrote its bundle, or its cancel was lost
        return _cancelled(ns, output, existed,
                          by=(written.signals or [written.cancelled_by])[0])
    if doc is None:   # nothing to keep: the same command may run again
        results_log.discard_unstarted(output, remove_dir=not existed)
        validate.release(output, remove_made=True)   # and the folders made for it
    if doc is None and written.usage_error:
        print(f"pjrt-conformance: {written.usage_error}", file=sys.stderr)
        return EXIT_USAGE
    if rc in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR) or doc is None:
        print(f"pjrt-conformance: no report written (exit {EXIT_USAGE}: the run could not "
              "start); see the messages above", file=sys.stderr)
        return EXIT_USAGE
    if ns.sign_key is not None:
        try:
            print(f"signed: {signing.sign(output, ns.sign_key)}")
        except (OSError, signing.SigningError) as err:
            print(f"pjrt-conformance: the bundle was written but not signed: {err}",
                  file=sys.stderr)
            return EXIT_USAGE
    cancel.check()
    if doc["verdict"] == "incomplete":
        print(f"\npjrt-conformance: run cancelled -- verdict INCOMPLETE; "
              f"{doc['summary']['reported']} finished result(s) kept in {output}/ "
              f"(check it with: pjrt-conformance verify {output})", file=sys.stderr)
        return EXIT_INCOMPLETE
    s = doc["summary"]
    print(f"\npjrt-conformance: {doc['platform'].get('name')} -- "
          f"{plugin_verdict.headline(doc, upper=True)}"
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
    handover = run_options.Handover(run_options.RunOptions(
        cpu_devices=1, profile="none", write_profile=Path(target)))
    return int(pytest.main(invocation.suite_selection() + [
                            "--collect-only", "-q", "-p", "no:cacheprovider"],
                           plugins=[handover]))


def profile_command(ns: argparse.Namespace) -> int:
    if ns.write:
        try:
            validate.output_file(ns.write, option="--write")
        except validate.OptionError as err:
            print(f"pjrt-conformance profile: {err}", file=sys.stderr)
            return EXIT_USAGE
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
    commands = {"run": run, "profile": profile_command, **cli_bundles.COMMANDS,
                "dashboard": dashboard_command.run, "catalog": catalog_bisect.main}
    return commands[ns.command](ns)


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:   # the command's own CPU seconds, where the self-tests' time goes (docs/ci.md)
        _times = os.times()
        runner.log_time({"cli": sys.argv[1:2], "cpu_s": round(_times.user + _times.system, 3)})
