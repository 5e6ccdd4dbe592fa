"""Every bundle the tool writes verifies (issue 27 item 2), drawn by Hypothesis.

The writer (a run, a cancelled run, ``finalize`` after a death, shards and ``merge``),
the selection and the moment of death are drawn; ``verify`` must find what was written
intact. Child runs are shared to stay fast on 2 cores: the two shards of a small
selection (module fixture; each a complete run too); a death after any number of log
bytes is replayed from a run's own ``results.jsonl`` and ``run.json`` (what a killed
controller leaves); four examples kill or cancel a real ``pjrt-conformance run``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.certification.results import runlog
from conformance.session import results_log

#: Small areas with passes, skips and known defects (as tests/test_shards_merge.py).
SELECT = "test_registry or test_memory_kinds"
#: Selections of the real deaths: each a few seconds of tests.
SELECTIONS = ("test_registry", "test_memory_kinds",
              "test_types and bool")
#: The default profile (v7) on 2 CPU devices: expected counts depend on the device count.
_BASE = ["--platform", "cpu", "--cpu-devices", "2"]
_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[hypothesis.HealthCheck.too_slow])


def _cli(out, *extra, select=SELECT):
    return subprocess.Popen([sys.executable, "-m", "conformance.cli", "run", *_BASE,
                             "--output", str(out), *extra, "--", "-k", select],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _verified(path: Path, *verdicts: str) -> dict:
    check = bundle_files.verify(path)
    assert check.valid, (path, check.problems)
    doc = json.loads((path / "report.json").read_text())
    assert not verdicts or doc["verdict"] in verdicts, doc["verdict"]
    return doc


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The two shards of one selection, run side by side: each a complete run too."""
    root = tmp_path_factory.mktemp("integrity")
    procs = {name: _cli(root / name, "--shard", f"{k}/2") for k, name in ((1, "s1"), (2, "s2"))}
    for name, proc in procs.items():
        output = proc.communicate(timeout=600)[0]
        assert proc.returncode in (0, 1), output[-3000:]
    return root


def test_complete_runs_verify(written):
    for name in ("s1", "s2"):
        _verified(written / name, "certified", "not certified")


def _teardowns(out: Path) -> int:
    """Teardown reports in the results log of ``out`` (plain, or packed by a finished
    bundle)."""
    log = runlog.locate(out)
    return 0 if log is None else sum(
        1 for r in runlog.records(log) if isinstance(r, dict) and r.get("when") == "teardown")


@hypothesis.settings(max_examples=14, **_SETTINGS)
@hypothesis.given(cut=st.floats(0, 1), facts=st.sampled_from(["as written", "no platform",
                                                               "not collected yet"]),
                  partial=st.sampled_from([(), ("report.json",),
                                           ("report.json", "report.md", "junit.xml")]))
def test_finalize_after_a_death_at_any_byte_verifies(written, tmp_path_factory, cut, facts,
                                                     partial):
    """A controller killed (SIGKILL, OOM, a full disk) after any byte of its log, before or
    while writing its bundle, from a run.json as written, of an older run (no platform
    facts) or of a run killed before its collection: ``finalize`` builds a bundle that
    verifies, verdict incomplete."""
    out = tmp_path_factory.mktemp("death") / "out"
    out.mkdir()
    run = written / "s1"
    # the finished shard's log is packed (results.jsonl.xz): its lines, as the plain log
    # of a run in progress held them
    log = "".join(f"{line}\n" for line in runlog.read_lines(runlog.locate(run))).encode()
    (out / results_log.LOG_FILE).write_bytes(log[:int(cut * len(log))])
    state = json.loads((run / results_log.RUN_FILE).read_text())
    if facts != "as written":
        state.pop("platform_info", None)
    if facts == "not collected yet":
        state.update(collected=None, hypothesis=None)
    (out / results_log.RUN_FILE).write_text(json.dumps(state))
    for name in partial:              # the dying controller began its bundle
        text = (run / name).read_text()
        (out / name).write_text(text[:len(text) // 2])
    assert cli.main(["finalize", str(out)]) == 0
    doc = _verified(out, "incomplete")
    assert doc["summary"]["reported"] <= _teardowns(out)
    assert cli.main(["finalize", str(out)]) == 2          # a finished bundle: refused


@hypothesis.settings(max_examples=2, **_SETTINGS)
@hypothesis.given(writer=st.sampled_from(["cancel", "kill"]), select=st.sampled_from(SELECTIONS),
                  moment=st.integers(0, 8), workers=st.sampled_from(["0", "2"]))
@hypothesis.example(writer="kill", select=SELECTIONS[1], moment=5, workers="2")
@hypothesis.example(writer="cancel", select=SELECTIONS[2], moment=3, workers="0")
def test_a_real_run_cancelled_or_killed_at_a_drawn_moment_verifies(tmp_path_factory, writer,
                                                                   select, moment, workers):
    """``pjrt-conformance run`` SIGTERMed (cancel: its own incomplete bundle) or SIGKILLed
    (then ``finalize``) once it began (run.json) and ``moment`` tests finished (or it
    ended): what is written verifies."""
    out = tmp_path_factory.mktemp("real") / "out"
    proc = _cli(out, "-n", workers, select=select)
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline and not (
                (out / results_log.RUN_FILE).exists() and _teardowns(out) >= moment):
            time.sleep(0.05)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM if writer == "cancel" else signal.SIGKILL)
        output = proc.communicate(timeout=240)[0]
    finally:
        proc.kill()
    if not (out / bundle_files.MANIFEST).exists():   # no bundle (yet): finalize builds it
        code = cli.main(["finalize", str(out)])
        if not (out / results_log.RUN_FILE).exists():   # died before it began
            assert code == 2 and not (out / bundle_files.MANIFEST).exists(), output[-2000:]
            return
        assert code == 0, output[-2000:]
    _verified(out)


@hypothesis.settings(max_examples=10, **_SETTINGS)
@hypothesis.given(order=st.permutations([0, 1]), force=st.booleans(),
                  where=st.sampled_from(["new", "part", "inside part", "holds the parts"]))
def test_merge_writes_a_verified_bundle_or_nothing(written, tmp_path_factory, order, force,
                                                   where):
    """``merge`` of the shards in any order, to an --output drawn among a new directory,
    a part, a directory inside a part and one that holds the parts: a bundle that
    verifies, or exit 2 with every part as it was."""
    root = tmp_path_factory.mktemp("merge")
    parts = []
    for name in ("s1", "s2"):
        parts.append(Path(shutil.copytree(written / name, root / name)))
    before = [(p / bundle_files.MANIFEST).read_bytes() for p in parts]
    out = {"new": root / "merged", "part": parts[order[0]],
           "inside part": parts[order[1]] / "nested", "holds the parts": root}[where]
    code = cli.main(["merge", *(str(parts[i]) for i in order), "--output", str(out),
                     *(["--force"] if force else [])])
    assert code == (0 if where == "new" else 2)
    if code == 0:
        _verified(out, "certified", "not certified")
    for part, manifest in zip(parts, before):
        assert (part / bundle_files.MANIFEST).read_bytes() == manifest
        _verified(part)
    assert where == "new" or not (parts[order[1]] / "nested").exists()


def test_finalize_on_a_full_disk_is_one_line_and_a_second_finalize_completes(
        written, tmp_path, capsys, monkeypatch):
    """ENOSPC while finalize writes: exit 5 (the bundle could not be written), one line;
    the half-written bundle (no manifest) is rebuilt by the next finalize once there is
    space."""
    out = tmp_path / "out"
    out.mkdir()
    log = runlog.locate(written / "s1")  # packed by the finished shard
    shutil.copyfile(log, out / log.name)
    shutil.copyfile(written / "s1" / results_log.RUN_FILE, out / results_log.RUN_FILE)
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name == "report.html":
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    capsys.readouterr()
    assert cli.main(["finalize", str(out)]) == 5
    err = capsys.readouterr().err
    assert "No space left on device" in err and len(err.splitlines()) == 1, err
    monkeypatch.setattr(Path, "write_text", real)
    assert cli.main(["finalize", str(out)]) == 0
    _verified(out, "incomplete")
