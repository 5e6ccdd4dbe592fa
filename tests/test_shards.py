"""The shard plan: every test in exactly one shard, balanced by the recorded durations,
the same plan on every machine; --shard values checked; durations from a results.jsonl."""

import json
import random

import pytest

from bundle_helpers import main
from conformance.certification.bundle import shards
from conformance.session import sharding
from conformance.session import validate


def _ids_and_durations(n=60, seed=7):
    rng = random.Random(seed)
    ids = [f"conformance/test_area{i % 5}.py::test_{i}" for i in range(n)]
    return ids, {t: round(rng.expovariate(1.0), 3) for t in ids}


def _check_partition(ids, groups):
    flat = [t for g in groups for t in g.ids]
    assert sorted(flat) == sorted(ids) and len(flat) == len(set(flat))


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_plan_is_a_partition_balanced_within_one_test(count):
    ids, durations = _ids_and_durations()
    groups = shards.plan(ids, count, durations)
    assert len(groups) == count
    _check_partition(ids, groups)
    for g in groups:   # the seconds it reports are the recorded ones of its tests
        assert g.seconds == pytest.approx(sum(durations[t] for t in g.ids), abs=1e-6)
    seconds = [g.seconds for g in groups]
    # greedy longest-first: no shard exceeds another by more than the longest test
    assert max(seconds) - min(seconds) <= max(durations.values()) + 1e-9


def test_plan_follows_the_durations_not_the_test_count():
    ids, durations = _ids_and_durations(n=20)
    durations[ids[0]] = sum(durations.values())  # one test as long as all others together
    groups = shards.plan(ids, 2, durations)
    alone = next(g for g in groups if ids[0] in g.ids)
    assert alone.ids == (ids[0],)


def test_plan_is_deterministic_and_independent_of_the_collection_order():
    ids, durations = _ids_and_durations()
    first = shards.plan(ids, 3, durations)
    assert shards.plan(list(ids), 3, dict(durations)) == first
    shuffled = list(ids)
    random.Random(1).shuffle(shuffled)
    assert [set(g.ids) for g in shards.plan(shuffled, 3, durations)] == \
        [set(g.ids) for g in first]


def test_tests_missing_from_the_durations_are_still_assigned_deterministically():
    ids, durations = _ids_and_durations()
    known = {t: durations[t] for t in ids[:30]}            # half the tests are new
    groups = shards.plan(ids, 3, known)
    _check_partition(ids, groups)
    assert shards.plan(ids, 3, known) == groups
    assert shards.plan(ids, 4, {}) == shards.plan(ids, 4, {})   # no durations at all


def test_the_shipped_durations_balance_the_whole_cpu_profile():
    durations = shards.load_durations(shards.durations_path())
    ids = sorted(durations)
    groups = shards.plan(ids, 3, durations)
    _check_partition(ids, groups)
    seconds = [g.seconds for g in groups]
    assert max(seconds) - min(seconds) <= max(durations.values())


def test_plan_rejects_bad_arguments():
    with pytest.raises(ValueError, match="count"):
        shards.plan(["a"], 0, {})
    with pytest.raises(ValueError, match="algorithm"):
        shards.plan(["a"], 1, {}, algorithm="round_robin")
    with pytest.raises(ValueError, match="repeat"):
        shards.plan(["a", "a"], 1, {})


def test_selection_hash_ignores_order_and_sees_every_id():
    assert shards.selection_sha256(["b", "a"]) == shards.selection_sha256(["a", "b"])
    assert shards.selection_sha256(["a", "b"]) != shards.selection_sha256(["a", "b", "c"])


@pytest.mark.parametrize("value", ["0/3", "4/3", "a/b", "1/0", "3", "-1/3", ""])
def test_bad_shard_values_are_one_line_errors(value):
    with pytest.raises(ValueError, match="--shard") as err:
        shards.parse(value)
    assert "\n" not in str(err.value)
    with pytest.raises(validate.OptionError, match="--shard"):
        sharding.check_options(value, None)


def test_good_shard_values():
    assert shards.parse("2/3") == shards.Shard(2, 3) and str(shards.parse(" 1 / 1 ")) == "1/1"


@pytest.mark.parametrize("value", ["0/3", "4/3", "a/b", "1/0"])
def test_run_with_a_bad_shard_exits_2_before_anything_is_written(capsys, tmp_path, value):
    proc = main(capsys, "run", "--platform", "cpu", "--output", tmp_path / "out",
                "--shard", value)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--shard" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_shard_durations_file_is_checked(tmp_path):
    bad = tmp_path / "d.json"
    for text in ("[1, 2]", '{"t": -1}', '{"t": "x"}', "{"):
        bad.write_text(text)
        with pytest.raises(validate.OptionError, match="--shard-durations"):
            sharding.check_options("1/2", str(bad))
    with pytest.raises(validate.OptionError, match="no such file"):
        sharding.check_options("1/2", "nonexistent-name")
    with pytest.raises(validate.OptionError, match="needs --shard"):
        sharding.check_options(None, str(bad))


def _report(nodeid, when, duration, location=None):
    return json.dumps({"$report_type": "TestReport", "nodeid": nodeid, "when": when,
                       "duration": duration, "location": [location or nodeid.split("::")[0],
                                                          1, "x"]})


def test_durations_from_a_results_log_sum_the_phases_by_package_id(tmp_path, capsys):
    lines = [json.dumps({"$report_type": "SessionStart"}),
             _report("../venv/site-packages/conformance/test_a.py::t[x]", "setup", 0.25),
             _report("../venv/site-packages/conformance/test_a.py::t[x]", "call", 1.5),
             _report("../venv/site-packages/conformance/test_a.py::t[x]", "teardown", 0.25),
             _report("conformance/test_b.py::u", "call", 2.0)]
    found = shards.durations_from_log(lines)
    assert found == {"conformance/test_a.py::t[x]": 2.0, "conformance/test_b.py::u": 2.0}
    with pytest.raises(ValueError, match="line 2"):
        shards.durations_from_log(["{}", "{not json"])
    log = tmp_path / "results.jsonl"
    log.write_text("\n".join(lines) + "\n")
    proc = main(capsys, "durations", log, "--output", tmp_path / "d.json")
    assert proc.returncode == 0
    assert shards.load_durations(tmp_path / "d.json") == found
    log.write_text(json.dumps({"$report_type": "SessionStart"}) + "\n")
    assert main(capsys, "durations", log).returncode == 2
    assert main(capsys, "durations", tmp_path / "missing.jsonl").returncode == 2
