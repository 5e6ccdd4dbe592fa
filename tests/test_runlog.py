"""The results log as a file (issue 28 part 5): a packed log reads back into the same
results and durations as the plain one; packing survives a cut-off last line and keeps
the log's time; a bundle's log compressed after signing keeps manifest and signature
valid, and a changed, cut-off or extra packed log fails verify."""

import copy
import json
import lzma
import os
import shutil
from pathlib import Path

import pytest

import conformance
from conformance.certification.bundle import bundle_files
from conformance.certification.results import runlog
from conformance.certification.bundle import shards
from conformance.certification.bundle import signing
from conformance.certification.results.records import Collector
from conformance.session import results_log
from tests.bundle_helpers import crafted, main

ROOT = Path(conformance.__file__).resolve().parents[1]
#: A committed bundle whose log holds failures of every kind (crash, wrong result, skip),
#: kept whole (re-rendered with ``pjrt-conformance rerender --keep-log``).
REAL = ROOT / "reports" / "cuda" / "20261123T105624Z"


def _collected(found):
    collector = Collector()
    for data in found:
        if isinstance(data, dict) and data.get("$report_type") == "TestReport":
            collector.add(pytest.TestReport._from_json(copy.deepcopy(data)))  # it mutates
    return ({n: (r.record(), r.failure()) for n, r in collector.results.items()},
            collector.finished)


def _report(nodeid, when="call", outcome="passed", **more):
    return {"$report_type": "TestReport", "nodeid": nodeid, "location": ["t.py", 1, "t"],
            "keywords": {"t": 1, "big": "x" * 100}, "outcome": outcome, "longrepr": None,
            "when": when, "user_properties": [], "sections": [["Captured stdout", "out"]],
            "duration": 0.5, "start": 1.0, "stop": 1.5, "worker_id": "gw0", **more}


@pytest.mark.skipif(not REAL.is_dir(), reason="not a source checkout")
def test_a_packed_real_log_gives_the_same_results_and_durations(tmp_path):
    committed = runlog.resolve(REAL)      # the whole log (compressed byte for byte)
    full = runlog.records(committed)
    packed = runlog.write_packed(full, tmp_path)
    slim = runlog.records(packed)
    assert len(slim) == len(full) and packed.stat().st_size < committed.stat().st_size
    results, finished = _collected(full)
    assert any(r[0]["status"] == "crash" for r in results.values())   # failures compared too
    assert _collected(slim) == (results, finished)
    lines = [json.dumps(r) for r in full]
    assert shards.durations_from_log(runlog.read_lines(packed)) == \
        shards.durations_from_log(lines)


def test_slim_keeps_what_readers_use_and_is_idempotent():
    failed = _report("t.py::b", outcome="failed", longrepr="boom")
    slim = [runlog.slim(r) for r in (_report("t.py::a"), failed)]
    assert slim[0] == {"$report_type": "TestReport", "nodeid": "t.py::a",
                       "location": ["t.py", 1, "t"], "when": "call", "outcome": "passed",
                       "longrepr": None, "duration": 0.5, "user_properties": [],
                       "keywords": {}}
    assert slim[1]["sections"] == failed["sections"] and slim[1]["longrepr"] == "boom"
    assert [runlog.slim(r) for r in slim] == slim
    other = {"$report_type": "SessionStart", "pytest_version": "9"}
    assert runlog.slim(other) == other


def test_pack_drops_a_cut_off_last_line_and_keeps_the_time(tmp_path):
    plain = tmp_path / runlog.LOG
    plain.write_text(json.dumps(_report("t.py::a")) + "\n" + '{"$report_type": "TestRep')
    os.utime(plain, ns=(10**18, 10**18))
    packed = runlog.pack(tmp_path)
    assert packed == tmp_path / runlog.PACKED and not plain.exists()
    assert packed.stat().st_mtime_ns == 10**18
    assert [r["nodeid"] for r in runlog.records(packed)] == ["t.py::a"]
    assert [r.nodeid for r in results_log.read_reports(packed)] == ["t.py::a"]
    assert runlog.pack(tmp_path) is None                      # nothing plain left
    assert sorted(p.name for p in tmp_path.iterdir()) == [runlog.PACKED]  # no temp file


def test_pack_refuses_a_broken_log_and_keeps_it(tmp_path):
    plain = tmp_path / runlog.LOG
    plain.write_text('{"x": 1\n{"$report_type": "SessionStart"}\n')
    with pytest.raises(ValueError, match="line 1: not JSON"):
        runlog.pack(tmp_path)
    assert plain.exists() and not (tmp_path / runlog.PACKED).exists()
    assert results_log.pack(tmp_path) is None and plain.exists()   # the run's bundle keeps it
    (tmp_path / runlog.PACKED).write_bytes(b"\xfd7zXZ\x00 not really")
    with pytest.raises(ValueError, match="unreadable results log"):
        runlog.read_lines(tmp_path / runlog.PACKED)


def test_resolve_finds_the_log_by_file_directory_or_old_name(tmp_path):
    with pytest.raises(FileNotFoundError, match="no results.jsonl"):
        runlog.resolve(tmp_path)
    (tmp_path / runlog.LOG).write_text(json.dumps(_report("t.py::a")) + "\n")
    assert runlog.resolve(tmp_path) == tmp_path / runlog.LOG
    runlog.pack(tmp_path)
    for given in (tmp_path, tmp_path / runlog.LOG, tmp_path / runlog.PACKED):
        assert runlog.resolve(given) == tmp_path / runlog.PACKED
    with pytest.raises(FileNotFoundError):
        runlog.resolve(tmp_path / "other.jsonl")


def test_durations_reads_a_packed_log(tmp_path, capsys):
    (tmp_path / runlog.LOG).write_text(json.dumps(_report("conformance/test_a.py::t")) + "\n")
    runlog.pack(tmp_path)
    for given in (tmp_path, tmp_path / runlog.LOG):
        proc = main(capsys, "durations", given)
        assert proc.returncode == 0 and json.loads(proc.stdout) == {
            "conformance/test_a.py::t": 0.5}, proc.stderr


def _with_plain_log(tmp_path):
    """A crafted bundle whose manifest lists a plain results.jsonl (as bundles did before
    packing)."""
    path = crafted(tmp_path)
    results = json.loads((path / "report.json").read_text())["results"]
    (path / runlog.LOG).write_text("".join(   # a report of each result (verify checks)
        json.dumps({**_report(r["nodeid"]), "location": [r["nodeid"].split("::")[0], 1, "t"]})
        + "\n" for r in results))
    with open(path / bundle_files.MANIFEST, "a") as manifest:
        manifest.write(f"{bundle_files.sha256_file(path / runlog.LOG)}  {runlog.LOG}\n")
    assert bundle_files.verify(path).valid
    return path


def test_an_old_log_compressed_keeps_the_manifest_valid(tmp_path):
    path = _with_plain_log(tmp_path)
    manifest = (path / bundle_files.MANIFEST).read_bytes()
    assert runlog.compress(path) == path / runlog.PACKED
    assert not (path / runlog.LOG).exists()
    assert (path / bundle_files.MANIFEST).read_bytes() == manifest
    assert bundle_files.verify(path).valid, bundle_files.verify(path).problems


@pytest.mark.parametrize("damage", ["changed", "cut off", "plain beside it"])
def test_a_damaged_compressed_log_fails_verify(tmp_path, damage):
    path = _with_plain_log(tmp_path)
    original = (path / runlog.LOG).read_bytes()
    runlog.compress(path)
    packed = path / runlog.PACKED
    if damage == "changed":
        packed.write_bytes(lzma.compress(original.replace(b"passed", b"failed")))
    elif damage == "cut off":
        packed.write_bytes(packed.read_bytes()[:-20])
    else:        # the plain log is checked; a packed file beside it is not vouched for
        (path / runlog.LOG).write_bytes(original)
    problems = bundle_files.verify(path).problems
    expected = f"{runlog.PACKED} is not listed" if damage == "plain beside it" else \
        f"{runlog.LOG} was modified"
    assert any(expected in p for p in problems), problems


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH")
@pytest.mark.skipif(not (ROOT / "reports" / "signers.pub").is_file(),
                    reason="not a source checkout")
def test_committed_signed_bundles_still_verify_with_their_key():
    signed = sorted(p.parent for p in (ROOT / "reports").glob(f"*/*/{signing.SIGNATURE}"))
    assert signed, "no signed bundle committed"
    for path in signed:
        check = bundle_files.verify(path, allowed_signers=ROOT / "reports" / "allowed_signers")
        assert check.valid and check.signature.state == "verified", (path, check.problems)


def test_sealed_run_json_keeps_the_real_paths_for_finalize(tmp_path, monkeypatch):
    """run.json is redacted only when the bundle is written (seal_run); until its manifest
    is written, run.local.json, and in this process its memory, give finalize the real
    paths of the run's option files; the mtime (finalize's end time) is kept."""
    facts = {"options": {"waivers": "/home/u/w.toml", "known_failures": ["/tmp/k.txt"]},
             "argv": ["x"]}
    path = tmp_path / results_log.RUN_FILE
    path.write_text(json.dumps(facts))
    os.utime(path, ns=(10**18, 10**18))
    monkeypatch.setattr(results_log, "_UNSEALED", {})
    results_log.seal_run(tmp_path)
    sealed = json.loads(path.read_text())
    assert sealed["options"] == {"waivers": "<redacted>/w.toml", "known_failures": ["<redacted>/k.txt"]}
    assert path.stat().st_mtime_ns == 10**18
    assert results_log._run_facts(tmp_path) == facts            # run.local.json
    (tmp_path / results_log.RUN_LOCAL).unlink()
    assert results_log._run_facts(tmp_path) == facts            # this process sealed it
    monkeypatch.setattr(results_log, "_UNSEALED", {})
    assert results_log._run_facts(tmp_path) == sealed           # another process
    results_log.seal_run(tmp_path)                              # nothing left to redact
    assert not (tmp_path / results_log.RUN_LOCAL).exists()
