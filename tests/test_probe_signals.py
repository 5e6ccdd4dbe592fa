"""Defects a prober found in cancelling, finalizing, timeouts, signing and packing (issue
34 item 4 and the defects reported with it); each test failed on the code before the fix.

1. ``run`` under SIGTERM at any moment exits 4: during the imports (it exited 143: the
   handler came with the session), once the run claimed its directory, while the session
   writes its bundle and while ``--sign-key`` signs it (both a traceback or 143 before).
2. ``finalize`` keeps every good line of a results log with a corrupt line in the middle
   (it gave up), and names the dropped line in its output and the report.
3. A test past ``--timeout`` inside Hypothesis (whose FlakyFailure hid pytest-timeout's
   failure, so it was re-run and became ``flaky`` with no failure text) is ``timeout``.
4. A ``--sign-key`` with a passphrase is a usage error before the first test.
5. An expired allowed_signers entry is reported as expired, with its date.
6. Packing the results log under ``ulimit -v`` (xz preset 9e wants ~700 MB): streamed,
   a smaller preset when memory is short, one line instead of a MemoryError traceback.
"""

import json
import lzma
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.certification.bundle import signing
from conformance.certification.results import runlog
from conformance.session import results_log
from tests.bundle_helpers import crafted, main
from tests.test_run_survival import _ARGS
from tests.mutants.runner import pytester_run

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                      reason="ssh-keygen (OpenSSH) is not installed")
_SELECT = ["--", "-k", "test_registry"]   # 5 tests


def _run_args(out, *extra):
    return ["run", "--cpu-devices", "1", "-n", "0", "--profile", "none", "--output",
            str(out), *extra, *_SELECT]


def _start(cwd, out, *extra, code=None):
    """``python -m conformance.cli run ...`` (or the child ``code`` given the same
    arguments) in a new process, its output piped."""
    argv = ["-c", code, *_run_args(out, *extra)] if code else \
        ["-m", "conformance.cli", *_run_args(out, *extra)]
    return subprocess.Popen([sys.executable, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _wait_for(predicate, seconds=240.0, every=0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def _catches_sigterm(pid):
    """The process ``pid`` has a handler for SIGTERM (/proc/PID/status SigCgt)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt"))
    except (OSError, StopIteration):
        return False
    return bool(mask >> (signal.SIGTERM - 1) & 1)


def _finish(proc, timeout=240):
    try:
        return proc.communicate(timeout=timeout)[0]
    finally:
        proc.kill()


def _incomplete(out):
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished run of the 5 registry tests (its bundle directory)."""
    tmp = tmp_path_factory.mktemp("finished")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli",
                           *_run_args(tmp / "out")], cwd=tmp, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]   # no profile
    return tmp / "out"


def _as_killed(bundle_dir, target):
    """A copy of the bundle ``bundle_dir`` as its run left it when killed before writing
    its report: run.json and a plain results.jsonl; returns the copy's path."""
    shutil.copytree(bundle_dir, target)
    packed = target / runlog.PACKED
    (target / runlog.LOG).write_bytes(lzma.decompress(packed.read_bytes()))
    for name in (*bundle_files.FILES, bundle_files.MANIFEST, signing.SIGNATURE, runlog.PACKED):
        (target / name).unlink(missing_ok=True)
    shutil.rmtree(target / "repro", ignore_errors=True)
    return target


# -- 1. SIGTERM at any moment ---------------------------------------------------------

def test_sigterm_during_the_imports_exits_4_and_writes_nothing(tmp_path):
    """SIGTERM as soon as the process handles it, long before the suite is imported: it
    exited 143 (no handler until the session configured); now 4, with one line."""
    out = tmp_path / "out"
    proc = _start(tmp_path, out)
    try:
        assert _wait_for(lambda: _catches_sigterm(proc.pid) or proc.poll() is not None, 60,
                         every=0.005)
        proc.send_signal(signal.SIGTERM)
    finally:
        output = _finish(proc)
    assert proc.returncode == 4, output[-3000:]
    assert "cancelled by SIGTERM before the run began: nothing written" in output, output
    assert "Traceback" not in output and not out.exists()


def test_sigterm_once_the_run_claimed_its_directory_leaves_an_incomplete_bundle(tmp_path):
    """SIGTERM the moment run.json exists (every check passed; the session starts): exit
    4 and an incomplete bundle that verifies, whatever the session had reached."""
    out = tmp_path / "out"
    proc = _start(tmp_path, out)
    try:
        assert _wait_for(lambda: (out / results_log.RUN_FILE).exists()
                         or proc.poll() is not None, every=0.01)
        proc.send_signal(signal.SIGTERM)
    finally:
        output = _finish(proc)
    assert proc.returncode == 4, output[-3000:]
    assert "verdict INCOMPLETE" in output and "Traceback" not in output, output[-3000:]
    _incomplete(out)


_SIGTERM_IN = """
import os, signal, sys
sys.argv = ["pjrt-conformance", *sys.argv[1:]]
from conformance import cli
from conformance.certification.bundle import bundle_files, signing
module = {"write": bundle_files, "sign": signing}[os.environ["PJRT_TEST_SIGTERM_IN"]]
name = os.environ["PJRT_TEST_SIGTERM_IN"]
real, calls = getattr(module, name), []
def patched(*args, **kwargs):
    if not calls:   # the first call only: SIGTERM from outside, at this moment
        calls.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
setattr(module, name, patched)
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("moment", ["write", "sign"])
def test_sigterm_while_the_bundle_is_written_or_signed_exits_4(tmp_path, monkeypatch,
                                                                moment):
    """SIGTERM while the session writes the bundle (a KeyboardInterrupt out of
    pytest.main: a traceback before) or while --sign-key signs it (exit 143 before):
    exit 4, the bundle rebuilt as incomplete from the results log, and signed."""
    key = tmp_path / "key"
    extra = []
    if moment == "sign":
        if shutil.which("ssh-keygen") is None:
            pytest.skip("ssh-keygen (OpenSSH) is not installed")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True, timeout=60)
        extra = ["--sign-key", str(key)]
    monkeypatch.setenv("PJRT_TEST_SIGTERM_IN", moment)
    out = tmp_path / "out"
    proc = _start(tmp_path, out, *extra, code=_SIGTERM_IN)
    output = _finish(proc)
    assert proc.returncode == 4, output[-3000:]
    assert "run cancelled by SIGTERM -- verdict INCOMPLETE" in output, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    doc = _incomplete(out)
    assert doc["summary"]["reported"] == 5 and doc["interrupted"] == "cancelled by SIGTERM"
    if moment == "sign":
        check = bundle_files.verify(out, key=Path(f"{key}.pub"))
        assert check.valid and check.signature.state == "verified", check.problems


# -- 2. finalize keeps the good lines -------------------------------------------------

def test_finalize_drops_a_corrupt_middle_line_and_keeps_the_rest(finished_run, tmp_path,
                                                                 capsys):
    run = _as_killed(finished_run, tmp_path / "run")
    log = run / runlog.LOG
    lines = log.read_bytes().split(b"\n")
    setup = next(n for n, line in enumerate(lines) if b'"when":"setup"' in line
                 or b'"when": "setup"' in line)
    lines[setup] = b'{"$report_type": "TestReport", "nodeid": "conformance/te\x00\xff'
    log.write_bytes(b"\n".join(lines))
    assert cli.main(["finalize", str(run)]) == 0
    printed = capsys.readouterr().out
    assert f"(line {setup + 1})" in printed and "every other result kept" in printed
    doc = _incomplete(run)
    assert doc["summary"]["reported"] == 5   # a setup line lost: the test still finished
    assert any(f"line {setup + 1}" in e for e in doc["report_errors"]), doc["report_errors"]
    assert f"line {setup + 1}" in (run / "report.md").read_text()
    assert (run / runlog.PACKED).is_file() and not log.exists()


def test_finalize_does_not_count_a_test_whose_call_line_was_dropped(finished_run, tmp_path,
                                                                    capsys):
    run = _as_killed(finished_run, tmp_path / "run")
    log = run / runlog.LOG
    lines = log.read_bytes().split(b"\n")
    call = next(n for n, line in enumerate(lines) if b'"when":"call"' in line
                or b'"when": "call"' in line)
    lines[call] = b"{not json"
    log.write_bytes(b"\n".join(lines))
    assert cli.main(["finalize", str(run)]) == 0
    assert f"(line {call + 1})" in capsys.readouterr().out
    doc = _incomplete(run)
    assert doc["summary"]["reported"] == 4 and doc["summary"]["collected"] == 5
    assert "without their call report" in doc["report_errors"][0]


# -- 3. a timeout is never flaky ------------------------------------------------------

def test_a_timeout_inside_hypothesis_is_a_timeout_with_its_limit(pytester, monkeypatch):
    """The example times out once; Hypothesis replays it, it passes, and Hypothesis raises
    FlakyFailure around pytest-timeout's failure: it was fail_error, re-run (the
    re-run exception did not see 'Timeout'), then ``flaky`` without failure text."""
    monkeypatch.setenv("PJRT_TEST_MARK", str(pytester.path / "mark"))
    pytester.makepyfile(test_stuck="""
        import os, pathlib, time
        from hypothesis import given, settings, strategies as st
        @settings(deadline=None, max_examples=3)
        @given(st.integers())
        def test_stuck_once(x):
            mark = pathlib.Path(os.environ["PJRT_TEST_MARK"])
            if not mark.exists():
                mark.write_text("stuck once")
                time.sleep(30)   # past --timeout (a worker stopped, then let go)
    """)
    out = pytester.path / "out"
    result = pytester_run(pytester, *_ARGS, *cli._RERUN, "--timeout=2",
                          f"--report-dir={out}")
    doc = json.loads((out / "report.json").read_text())
    assert [(r["nodeid"].split("::")[-1], r["status"]) for r in doc["results"]] == [
        ("test_stuck_once", "timeout")], result.stdout.str()[-3000:]
    (failure,) = doc["failures"]
    assert "Timeout (>2.0s) from pytest-timeout" in failure["message"], failure["message"]
    assert failure["nodeid"].endswith("test_stuck.py::test_stuck_once")
    assert bundle_files.verify(out).valid


# -- 4. a key with a passphrase is refused before the first test ----------------------

@needs_ssh_keygen
def test_a_sign_key_with_a_passphrase_is_a_usage_error_before_the_run(tmp_path):
    key = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f",
                    str(key)], check=True, timeout=60)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli",
                           *_run_args(out, "--sign-key", str(key))], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                          start_new_session=True)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "--sign-key" in proc.stderr and "passphrase" in proc.stderr, proc.stderr
    assert "passed" not in proc.stdout and not out.exists()   # no test ran, nothing written
    with pytest.raises(signing.SigningError, match="passphrase"):
        signing.check_key(Path(f"{key}.pub"))


# -- 5. an expired allowed_signers entry says so --------------------------------------

@needs_ssh_keygen
@pytest.mark.parametrize("option, said", [
    ('valid-before="20200101"', "expired on 2020-01-01"),
    ('valid-after="20990101Z"', "is not valid before 2099-01-01 00:00:00 UTC")])
def test_an_out_of_date_allowed_signers_entry_is_named_with_its_date(tmp_path, capsys,
                                                                     option, said):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(tmp_path / "lab")], check=True, timeout=60)
    path = crafted(tmp_path)
    signing.sign(path, tmp_path / "lab")
    kind, b64 = (tmp_path / "lab.pub").read_text().split()[:2]
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'lab@example {option},namespaces="pjrt-conformance" {kind} {b64}\n')
    for identity in ([], ["--identity", "lab@example"]):
        proc = main(capsys, "verify", str(path), "--allowed-signers", str(allowed), *identity)
        text = proc.stdout + proc.stderr
        assert proc.returncode == 3, text
        assert said in text and "lab@example" in text and "line 1" in text, text
        assert "not in" not in text, text


# -- 6. packing in bounded memory -----------------------------------------------------

def _finalize_child(run, limit_bytes=None):
    def limit():
        if limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    code = ("import sys, atexit\n"
            "from conformance import cli\n"
            "def peak():\n"
            "    print(next(l for l in open('/proc/self/status') if l.startswith('VmPeak')),"
            " file=sys.stderr, flush=True)\n"
            "atexit.register(peak)\n"
            "sys.exit(cli.main(['finalize', sys.argv[1]]))\n")
    return subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True,
                          text=True, timeout=600, preexec_fn=limit)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, RLIMIT_AS")
def test_finalize_under_a_memory_limit_packs_with_a_smaller_preset(finished_run, tmp_path):
    """Under a limit that leaves a finalize ~300 MB more than it needs without xz,
    preset 9e (~700 MB) is refused: a MemoryError traceback before; now preset 6."""
    probe = _as_killed(finished_run, tmp_path / "probe")
    lowest = _finalize_child(probe)
    assert lowest.returncode == 0, lowest.stderr[-3000:]
    peak_kb = int(lowest.stderr.strip().splitlines()[-1].split()[1])   # with preset 9e
    run = _as_killed(finished_run, tmp_path / "run")
    proc = _finalize_child(run, (peak_kb - 700 * 1024 + 300 * 1024) * 1024)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    _incomplete(run)
    assert (run / runlog.PACKED).is_file() and not (run / runlog.LOG).exists()


def test_pack_streams_the_log_and_keeps_it_when_no_preset_finds_memory(tmp_path,
                                                                       monkeypatch, capsys):
    line = json.dumps({"$report_type": "TestReport", "nodeid": "t.py::a", "when": "call",
                       "outcome": "passed", "keywords": {"a": 1}, "x": "y" * 100}) + "\n"
    (tmp_path / runlog.LOG).write_text('{"$report_type": "SessionStart"}\n' + line * 50)
    real = Path.read_bytes

    def no_whole_log(path):   # the plain log is read line by line, never whole
        assert path.name != runlog.LOG, "the whole log was read into memory"
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", no_whole_log)
    monkeypatch.setattr(Path, "read_text", lambda p, *a, **k: pytest.fail("read whole"))
    packed = runlog.pack(tmp_path)
    monkeypatch.undo()
    assert len(runlog.records(packed)) == 51 and not (tmp_path / runlog.LOG).exists()

    (tmp_path / runlog.LOG).write_text(line * 3)
    packed.unlink()

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(lzma, "LZMACompressor", no_memory)
    assert results_log.pack(tmp_path) is None
    assert "kept unpacked: not enough memory" in capsys.readouterr().err
    assert (tmp_path / runlog.LOG).read_text() == line * 3
    assert not list(tmp_path.glob("*.tmp")) and not packed.exists()


def test_finalize_that_cannot_write_for_memory_exits_5(finished_run, tmp_path,
                                                       monkeypatch, capsys):
    run = _as_killed(finished_run, tmp_path / "run")

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(bundle_files, "write", no_memory)
    assert cli.main(["finalize", str(run)]) == 5
    err = capsys.readouterr().err
    assert "cannot write the bundle" in err and "run finalize again" in err, err
    monkeypatch.undo()
    assert cli.main(["finalize", str(run)]) == 0
    _incomplete(run)
