"""Split and merge on real runs: --shard 1/3, 2/3 and 3/3 of a small selection, merged,
verify and equal the unsharded run test by test; wrong sets of parts are refused with
an error naming the part; a merged bundle edited afterwards fails verify."""

import json
import shutil
import subprocess
import sys

import pytest

from bundle_helpers import main, rewrite
from conformance.certification.bundle import bundle_files
from conformance.certification.bundle import merge_check
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog

#: Small areas with passes, skips and wrong results (known defects), < 1 s of tests:
#: cbrt's subnormal defect is present on every supported jaxlib (the zero-size shard
#: shapes are fixed from 0.11.2 on).
SELECT = ("test_registry or test_memory_kinds or "
          "test_zero_size_output_shards or test_float_special_values and cbrt-float32")
COUNT = 3


def _run(out, *extra):
    return subprocess.Popen([sys.executable, "-m", "conformance.cli", "run", "--platform",
                             "cpu", "--output", str(out), *extra, "--", "-k", SELECT],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The bundles of the three shards and of the unsharded run (two runs at a time)."""
    root = tmp_path_factory.mktemp("shards")
    jobs = [(f"s{i}", ("--shard", f"{i}/{COUNT}")) for i in range(1, COUNT + 1)]
    jobs.append(("full", ()))
    paths = {}
    for batch in (jobs[:2], jobs[2:]):
        procs = [(name, _run(root / name, *extra)) for name, extra in batch]
        for name, proc in procs:
            output = proc.communicate(timeout=600)[0]
            assert proc.returncode in (0, 1), output[-3000:]
            paths[name] = root / name
    paths["root"] = root
    return paths


@pytest.fixture(scope="module")
def merged(runs):
    out = runs["root"] / "merged"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "merge",
                           *(str(runs[f"s{i}"]) for i in range(1, COUNT + 1)),
                           "--output", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out


def _statuses(path):
    return {r["nodeid"]: r["status"] for r in reportfile.load(path)["results"]}


def _parts(runs):
    return [runs[f"s{i}"] for i in range(1, COUNT + 1)]


def test_shards_are_recorded_and_cover_the_selection_once(runs):
    docs = [reportfile.load(p) for p in _parts(runs)]
    full = reportfile.load(runs["full"])
    assert [d["shard"]["index"] for d in docs] == [1, 2, 3]
    ids = [r["nodeid"] for d in docs for r in d["results"]]
    assert sorted(ids) == sorted(r["nodeid"] for r in full["results"])
    assert len(ids) == len(set(ids)) and all(d["results"] for d in docs)
    assert {d["shard"]["selection_count"] for d in docs} == {len(full["results"])}
    assert all(d["shard"]["profile"]["sha256"] == full["profile"]["sha256"] for d in docs)


def test_merged_bundle_verifies_and_equals_the_unsharded_run(capsys, runs, merged):
    proc = main(capsys, "verify", merged)
    assert proc.returncode in (0, 1) and "intact" in proc.stdout, proc.stdout
    assert _statuses(merged) == _statuses(runs["full"])
    doc, full = reportfile.load(merged), reportfile.load(runs["full"])
    for key in ("summary", "areas", "tiers", "verdict"):
        assert doc[key] == full[key], key
    assert any(r["status"] == "fail_wrong_result" for r in doc["results"])
    # the reasons name the same tests; the merge lists them by id, a run as they ran
    assert [r.split(": ")[0] for r in doc["verdict_reasons"]] == \
        [r.split(": ")[0] for r in full["verdict_reasons"]]
    assert [p["index"] for p in doc["merge"]["parts"]] == [1, 2, 3]
    assert (merged / "parts" / "2" / "report.json").read_bytes() == \
        (runs["s2"] / "report.json").read_bytes()
    assert (merged / "repro" / "README.md").is_file()
    # the parts' logs, one after the other, packed
    parts = [r for p in _parts(runs) for r in runlog.records(runlog.resolve(p))]
    assert runlog.records(merged / runlog.PACKED) == [runlog.slim(r) for r in parts]
    assert not (merged / runlog.LOG).exists()


def _merge(capsys, tmp_path, *parts):
    return main(capsys, "merge", *parts, "--output", tmp_path / "out")


def _one_line(proc):
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_overlapping_missing_and_too_few_parts_are_refused(capsys, tmp_path, runs):
    s1, s2, s3 = _parts(runs)
    proc = _merge(capsys, tmp_path, s1, s2, s1)
    assert proc.returncode == 2
    assert "part 3 (shard 1/3): shard 1/3 is also part 1" in _one_line(proc)
    proc = _merge(capsys, tmp_path, s1, s3)
    assert proc.returncode == 2 and "shard 2/3 missing" in _one_line(proc)
    proc = _merge(capsys, tmp_path, s1)
    assert proc.returncode == 2 and "at least 2 parts" in _one_line(proc)
    proc = _merge(capsys, tmp_path, s1, tmp_path / "nothing-here")
    assert proc.returncode == 2 and "part 2" in _one_line(proc)
    (tmp_path / "empty").mkdir()
    proc = _merge(capsys, tmp_path, s1, tmp_path / "empty", s3)
    assert proc.returncode == 3 and "part 2" in _one_line(proc) and "not a report bundle" \
        in proc.stderr
    assert not (tmp_path / "out").exists()      # nothing written for a refused merge
    proc = _merge(capsys, tmp_path, s1, runs["full"], s3)
    assert proc.returncode == 2 and "part 2 (shard ?/?): not a shard run" in _one_line(proc)


@pytest.mark.parametrize("where", ["part", "inside", "nested-new", "parent"])
def test_merge_never_writes_into_or_over_its_inputs(capsys, tmp_path, runs, where):
    """Issue 27: ``--output A --force`` deleted part A, then failed; ``--output B/nested``
    corrupted B. An output that is a part, lies inside one or holds one is refused (2),
    one line, and every part stays intact."""
    parts = [tmp_path / f"s{i}" for i in range(1, COUNT + 1)]
    for src, copy in zip(_parts(runs), parts):
        shutil.copytree(src, copy)
    out = {"part": parts[0], "inside": parts[1] / "repro", "nested-new": parts[1] / "nested",
           "parent": tmp_path}[where]
    proc = main(capsys, "merge", *parts, "--output", out, "--force")
    assert proc.returncode == 2 and "merge never writes" in _one_line(proc)
    assert not (parts[1] / "nested").exists()
    for part in parts:
        check = bundle_files.verify(part)
        assert check.valid, (part, check.problems)


def _edited(tmp_path, src, fn, name="edited"):
    copy = tmp_path / name
    shutil.copytree(src, copy)
    rewrite(copy, fn)
    return copy


@pytest.mark.parametrize("what, edit, expected", [
    ("suite version", lambda d: d["suite"].update(version="9.9.9"),
     "part 2 (shard 2/3): suite version 9.9.9 != "),
    ("jaxlib", lambda d: d["environment"].update(jaxlib="0.10.1"),
     "part 2 (shard 2/3): jaxlib 0.10.1 != "),
    ("platform", lambda d: d.update(requested_platform="cuda"),
     "part 2 (shard 2/3): platform cuda != cpu in part 1"),
    ("device count", lambda d: d["platform"].update(device_kinds=["TPU v9"]),
     "part 2 (shard 2/3): device kinds"),
])
def test_parts_that_disagree_are_refused_naming_the_part(capsys, tmp_path, runs, what, edit,
                                                         expected):
    s1, s2, s3 = _parts(runs)
    bad = _edited(tmp_path, s2, edit)
    proc = _merge(capsys, tmp_path, s1, bad, s3)
    assert proc.returncode == 2 and expected in _one_line(proc), proc.stderr


def test_a_part_not_intact_is_refused_before_its_contents_are_compared(capsys, tmp_path, runs):
    s1, s2, s3 = _parts(runs)
    other_profile = _edited(tmp_path, s2, lambda d: d["profile"].update(sha256="0" * 64))
    proc = _merge(capsys, tmp_path, s1, other_profile, s3)
    assert proc.returncode == 3 and "part 2" in _one_line(proc) and "not intact" in proc.stderr
    damaged = tmp_path / "damaged"
    shutil.copytree(s3, damaged)
    (damaged / "report.md").write_text("edited\n")
    proc = _merge(capsys, tmp_path, s1, s2, damaged)
    assert proc.returncode == 3 and "part 3" in _one_line(proc) and "modified" in proc.stderr


def test_an_incomplete_part_is_refused(capsys, tmp_path, runs):
    s1, s2, s3 = _parts(runs)

    def drop_one(d):
        d["results"] = d["results"][1:]
        d["interrupted"] = "cancelled by SIGTERM"
    found = merge_check.problems([reportfile.load(s1), _doc_edited(s2, drop_one),
                                  reportfile.load(s3)])
    assert found and found[0].startswith("part 2 (shard 2/3): the run is incomplete")

    def lose_one(d):
        d["results"] = d["results"][1:]
    found = merge_check.problems([reportfile.load(s1), _doc_edited(s2, lose_one),
                                  reportfile.load(s3)])
    assert any(p.startswith("part 2 (shard 2/3): ") and "assigned" in p for p in found)


def _doc_edited(path, fn):
    doc = json.loads((path / "report.json").read_text())
    fn(doc)
    return doc


def test_a_merged_bundle_edited_after_the_merge_fails_verify(capsys, tmp_path, runs, merged):
    parts = [reportfile.load(p) for p in _parts(runs)]
    victim = next(r for r in parts[1]["results"] if r["status"] == "pass")
    victim["status"] = "skipped"     # a consistent forgery: counts and verdict recomputed
    forged_doc = merge_check.combine(parts, reportfile.load(merged)["merge"]["parts"], "x")
    forged = _edited(tmp_path, merged, lambda d: (d.clear(), d.update(forged_doc)))
    found = bundle_files.verify(forged).problems
    assert "report.json results differs from the merge of its parts" in found
    # report.json alone was edited: its report.md no longer matches (rendering_check)
    found = [p for p in found if not p.startswith("report.md is not rendered")]
    assert all(p.startswith("report.json ") and p.endswith(" differs from the merge of its "
                                                           "parts") for p in found), found
    proc = main(capsys, "verify", forged)
    assert proc.returncode == 3 and "NOT INTACT" in proc.stdout
    swapped = _edited(tmp_path, merged, lambda d: None, name="swapped")
    shutil.copyfile(runs["s3"] / "report.json", swapped / "parts" / "2" / "report.json")
    rewrite(swapped, lambda d: None)     # the outer manifest re-hashed, the part's not
    assert any(p.startswith("part 2 (shard 2/3): its report.json is not the one")
               for p in bundle_files.verify(swapped).problems)
