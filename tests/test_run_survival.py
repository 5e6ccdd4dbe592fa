"""Results that survive anything (issue 19 parts 1 and 6): a segfault is one ``crash``
and the run goes on, a test that fails then passes is ``flaky``, SIGTERM cancels with an
``incomplete`` bundle, a SIGKILL of the controller takes its workers and leaves a log
that ``pjrt-conformance finalize`` turns into a verifiable ``incomplete`` bundle.

Some kill scenarios are ``slow`` (nightly, docs/ci.md): the default run keeps a worker
killed once, the controller killed and the CLI's SIGTERM."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.certification.results import runlog
from conformance.certification.verdict import plugin_verdict
from conformance.certification.results.records import Collector
from conformance.processes import runner
from conformance.session import results_log
from tests.bundle_helpers import flagged
from tests.mutants.runner import pytester_run

_ARGS = ["--platform=cpu", "--cpu-devices=1", "--profile=none", "-p", "no:cacheprovider",
         "-n", "1"]
_SLOW = """
import os, pathlib, time
def test_a():
    pass
def test_b():
    pass
def test_slow():
    pathlib.Path(os.environ["PJRT_TEST_PID_FILE"]).write_text(str(os.getpid()))
    time.sleep(300)
"""


def _statuses(doc):
    return {r["nodeid"].split("::")[-1]: r["status"] for r in doc["results"]}


def _wait_for(predicate, seconds=240.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().split(")")[-1].split()[0] != "Z"


def _teardowns(out):
    log = out / results_log.LOG_FILE
    return log.exists() and log.read_text().count('"when": "teardown"')


def _start_slow_run(pytester, monkeypatch, *, quiet=False):
    """A child pytest of :data:`_SLOW` over xdist, started and waited for until its worker
    is inside ``test_slow`` (two teardowns reported); returns (process, report dir)."""
    monkeypatch.setenv("PJRT_TEST_PID_FILE", str(pytester.path / "pid"))
    pytester.makepyfile(test_slow=_SLOW)
    out = pytester.path / "out"
    pipes = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if quiet else dict(
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *_ARGS, f"--report-dir={out}"],
                            cwd=pytester.path, **pipes)
    if not _wait_for(lambda: (pytester.path / "pid").exists() and _teardowns(out) == 2):
        proc.kill()
        proc.communicate()
        pytest.fail("the child run never reached test_slow")
    return proc, out


def test_segfault_is_one_crash_and_a_flaky_test_is_never_a_pass(pytester, monkeypatch):
    monkeypatch.setenv("PJRT_TEST_MARK", str(pytester.path / "mark"))
    pytester.makepyfile(test_mix="""
        import ctypes, os, pathlib
        def test_ok():
            pass
        def test_segfault():
            ctypes.string_at(0)
        def test_flaky():
            mark = pathlib.Path(os.environ["PJRT_TEST_MARK"])
            if not mark.exists():
                mark.write_text("failed once")
                assert False, "fails the first time"
        def test_after():
            pass
    """)
    out = pytester.path / "out"
    result = pytester_run(pytester, *_ARGS, "--reruns=1", f"--report-dir={out}")
    doc = json.loads((out / "report.json").read_text())
    assert _statuses(doc) == {"test_ok": "pass", "test_segfault": "crash",
                              "test_flaky": "flaky", "test_after": "pass"}, result.stdout.str()
    assert flagged(doc)
    assert any("status flaky" in r or "flaky" in r for r in doc["verdict_reasons"])
    assert bundle_files.verify(out).valid
    # the bundle's log is packed, and reads back into the same results
    assert not (out / runlog.LOG).exists() and (out / runlog.PACKED).is_file()
    collector = Collector()
    for rep in results_log.read_reports(out / runlog.PACKED):
        collector.add(rep)
    assert {n.split("::")[-1]: r.status for n, r in collector.results.items()} == \
        _statuses(doc)


_KILLED_ONCE = """
import ctypes, os, pathlib, time
import pytest
@pytest.mark.parametrize("i", range(4))
def test_before(i):
    pass
def test_victim():
    pid = pathlib.Path(os.environ["PJRT_TEST_PID_FILE"])
    if os.environ.get("PJRT_TEST_DEATH") == "always" or not pid.exists():
        pid.write_text(str(os.getpid()))
        if os.environ.get("PJRT_TEST_DEATH") == "segfault":
            ctypes.string_at(0)
        time.sleep(300)   # SIGKILLed from outside (as the OOM killer does)
@pytest.mark.parametrize("i", range(4))
def test_after(i):
    pass
"""


def _run_and_kill_the_victims_worker(root, death):
    """Run ``conformance/test_zzkill.py`` (outside the rootdir, as ``--pyargs conformance``
    is in ``pjrt-conformance run``: node ids relative to the package, locations relative
    to the rootdir) on 2 xdist workers with the CLI's re-run; kill the worker process
    running ``test_victim`` with SIGKILL (``death`` 'once': the re-run passes; 'always':
    it is killed again) or let it segfault once ('segfault'). Returns the report."""
    (root / "pkg" / "conformance").mkdir(parents=True)
    (root / "pkg" / "conformance" / "test_zzkill.py").write_text(_KILLED_ONCE)
    (root / "run").mkdir()
    out, pid_file = root / "run" / "out", root / "pid"
    env = {**os.environ, "PJRT_TEST_PID_FILE": str(pid_file), "PJRT_TEST_DEATH": death}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--platform=cpu", "--cpu-devices=1", "--profile=none",
         "-p", "no:cacheprovider", "-n", "2", *cli._RERUN, f"--rootdir={root / 'run'}",
         f"--report-dir={out}", str(root / "pkg" / "conformance")],
        cwd=root / "run", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        killed = set()
        while death != "segfault" and proc.poll() is None and len(killed) < (
                2 if death == "always" else 1):
            if pid_file.exists() and pid_file.read_text() and \
                    int(pid_file.read_text()) not in killed:
                killed.add(int(pid_file.read_text()))
                time.sleep(0.5)
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            time.sleep(0.1)
        output = proc.communicate(timeout=240)[0]
    finally:
        proc.kill()
    assert "crashed while running 'test_zzkill.py::test_victim'" in output, output[-3000:]
    check = bundle_files.verify(out)
    assert check.valid, check.problems
    return json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("death, status", [  # one kill in the default run, the rest nightly
    ("once", "flaky"), pytest.param("segfault", "flaky", marks=pytest.mark.slow),
    pytest.param("always", "crash", marks=pytest.mark.slow)])
def test_a_killed_worker_is_never_a_pass(tmp_path, death, status):
    """Issue 27 item 1: a test whose worker died is ``crash``, ``flaky`` if its re-run
    passes; never ``pass``, whatever killed the worker; recorded under the test's own
    id, once (pytest-xdist's crash report located it by its package-relative file part,
    so the crash and the passing re-run were two different ids)."""
    doc = _run_and_kill_the_victims_worker(tmp_path, death)
    victims = [r for r in doc["results"] if "test_victim" in r["nodeid"]]
    assert [(r["nodeid"], r["status"]) for r in victims] == [
        ("conformance/test_zzkill.py::test_victim", status)]
    assert flagged(doc) and doc["summary"]["reported"] == 9


@pytest.mark.slow  # nightly: test_cli_sigterm_exits_4... checks SIGTERM's bundle in the default run
def test_sigterm_cancels_with_an_incomplete_bundle(pytester, monkeypatch):
    proc, out = _start_slow_run(pytester, monkeypatch)
    try:
        worker = int((pytester.path / "pid").read_text())
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=120)[0]
    finally:
        proc.kill()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "cancelled by SIGTERM" in output
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    doc = json.loads((out / "report.json").read_text())
    assert _statuses(doc) == {"test_a": "pass", "test_b": "pass"}  # test_slow: in flight
    assert doc["summary"]["collected"] == 3 and doc["interrupted"] == "cancelled by SIGTERM"
    assert _wait_for(lambda: not _alive(worker), 30)


def test_sigkill_of_the_controller_takes_its_worker_and_finalize_builds_the_bundle(
        pytester, monkeypatch, capsys):
    proc, out = _start_slow_run(pytester, monkeypatch, quiet=True)
    try:
        worker = int((pytester.path / "pid").read_text())
        proc.kill()
        proc.wait(60)
    finally:
        proc.kill()
    assert _wait_for(lambda: not _alive(worker), 30), "the xdist worker outlived its controller"
    assert not (out / "report.json").exists()
    assert cli.main(["finalize", str(out)]) == 0
    assert "INCOMPLETE: 2 finished result(s) of 3 collected" in capsys.readouterr().out
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    assert _statuses(json.loads((out / "report.json").read_text())) == {
        "test_a": "pass", "test_b": "pass"}
    assert not (out / runlog.LOG).exists() and (out / runlog.PACKED).is_file()  # packed
    assert cli.main(["finalize", str(out)]) == 2  # a report exists: refused


def test_cli_sigterm_exits_4_with_a_verifiable_bundle(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--cpu-devices", "1", "--profile",
         "none", "--output", str(out), "--", "-k", "test_registry"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert _wait_for(lambda: _teardowns(out) >= 1)
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=120)[0]
    finally:
        proc.kill()
    assert proc.returncode == 4, output[-3000:]
    assert "verdict INCOMPLETE" in output
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems


def test_children_die_with_their_parent():
    """Every runner child asks for SIGKILL at its parent's death (PR_GET_PDEATHSIG)."""
    code = ("import ctypes; v = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(v)); "
            "print(v.value)")
    assert runner.run_python(code, timeout=60).stdout.strip() == str(int(signal.SIGKILL))


def test_results_log_keeps_whole_lines_only(tmp_path):
    log = tmp_path / "results.jsonl"
    log.write_text('{"$report_type": "SessionStart"}\n{"$report_type": "TestRep')
    assert results_log.read_reports(log) == []  # the cut-off last line is skipped
    log.write_text('{"x": 1\n{"$report_type": "SessionStart"}\n')
    with pytest.raises(ValueError, match="line 1: not JSON"):
        results_log.read_reports(log)
    with pytest.raises(ValueError, match="not the output directory of a run"):
        results_log.finalize(tmp_path)


def test_interrupted_run_is_incomplete_even_when_all_passed():
    results = [{"nodeid": "t.py::a", "tier": "core", "status": "pass"}]
    decided = plugin_verdict.decide(results, collected=1, profile=None, declared=[], device_count=1,
                                    errors=[], interrupted="cancelled by SIGINT")
    assert decided == ("incomplete", ["run incomplete (cancelled by SIGINT): 1 of 1 collected "
                                      "test(s) finished"])
    flaky = [{"nodeid": "t.py::a", "tier": "core", "status": "flaky"}]
    assert plugin_verdict.decide(flaky, collected=1, profile=None, declared=[], device_count=1,
                                 errors=[])[0] == "not certified"


def test_preflight_reports_a_backend_that_cannot_start_in_one_line():
    """The xdist controller's check: a healthy client opens; a refused one is one line."""
    from conformance.processes import preflight
    from conformance.session import backend

    assert preflight.check(backend.BackendSpec(platform="cpu", cpu_devices=1)) is None
    problem = preflight.check(backend.BackendSpec(platform="cpu", cpu_devices=1,
                                                  expect_platform="cuda"))
    assert problem is not None and "reports platform 'cpu'" in problem and "\n" not in problem


_WAIVED = """
import os, pathlib, time, pytest
def test_a():
    pass
def test_b():
    pytest.skip("not on this backend")
def test_slow():
    pathlib.Path(os.environ["PJRT_TEST_PID_FILE"]).write_text(str(os.getpid()))
    time.sleep(300)
"""


def test_finalize_reads_the_runs_option_files_and_its_bundle_names_no_local_path(
        pytester, monkeypatch, capsys):
    """A run with --waivers and --known-failures files, killed, then finalized: exit 0,
    the waiver applied, a bundle that verifies, and its run.json without a local path.
    run.json was written redacted during the run, so finalize read '<redacted>' for
    both files (exit 2, or exit 5 'free space' for the waivers file)."""
    from conformance.certification import local_paths

    files = pytester.path / "opts"
    files.mkdir()
    (files / "w.toml").write_text(
        '[[waiver]]\ntest = "*test_b*"\nissue = "https://example.com/i/1"\n'
        'expires = 2099-01-01\nreason = "skipped here"\n')
    (files / "k.txt").write_text("*test_nothing* | * | https://example.com/i/2\n")
    monkeypatch.setenv("PJRT_TEST_PID_FILE", str(pytester.path / "pid"))
    pytester.makepyfile(test_slow=_WAIVED)
    out = pytester.path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *_ARGS, f"--report-dir={out}",
                             f"--waivers={files / 'w.toml'}",
                             f"--known-failures={files / 'k.txt'}"],
                            cwd=pytester.path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert _wait_for(lambda: (pytester.path / "pid").exists() and _teardowns(out) == 2)
        worker = int((pytester.path / "pid").read_text())
        proc.kill()
        proc.wait(60)
    finally:
        proc.kill()
    assert _wait_for(lambda: not _alive(worker), 30)
    during = (out / results_log.RUN_FILE).read_text()
    assert cli.main(["finalize", str(out)]) == 0, capsys.readouterr().err
    assert str(files / "w.toml") in during   # the run's working file: real paths
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    doc = json.loads((out / "report.json").read_text())
    assert _statuses(doc) == {"test_a": "pass", "test_b": "waived"}
    assert [w["test"] for w in doc["waivers"]] == ["*test_b*"]
    run = (out / results_log.RUN_FILE).read_text()
    assert local_paths.offenders(run) == [] and str(pytester.path) not in run
    opts = json.loads(run)["options"]
    assert opts["waivers"] == "<redacted>/w.toml" and opts["known_failures"] == ["<redacted>/k.txt"]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("run")) == [
        results_log.RUN_FILE]   # run.local.json removed once the bundle was written
