"""The transfer, sharding, placement and memory-kind checks fail on backends broken
the way they guard against, and pass on the healthy control."""

import fnmatch
import shutil

import pytest
from tests.bundle_helpers import clean, flagged


@pytest.fixture
def run_broken(run_suite):
    """``run_suite``: the mutants of ``tests/mutants/host_paths.py`` are in the catalog."""
    return run_suite


def _failures(run, platform: str, select: str) -> dict[str, str]:
    result, doc = run(platform, "-k", select)
    assert doc is not None, result.stdout.str()[-3000:]
    return {f["nodeid"].split("::")[-1]: f["status"] for f in doc["failures"]}, result, doc


CASES = [
    ("host-alias-copying-puts", "test_put_then_overwrite or test_force_copy_detaches or "
                          "test_batched_device_put_then_overwrite",
     ["test_put_then_overwrite_the_host_array[IMMUTABLE_ONLY_DURING_CALL-no-force-copy-"
      "aligned64-1MiB]",
      "test_put_then_overwrite_the_host_array[ZERO_COPY-force_copy-aligned64-one]",
      "test_force_copy_detaches_from_the_host_array",
      "test_batched_device_put_then_overwrite_the_host_array[IMMUTABLE_UNTIL_TRANSFER_"
      "COMPLETES-no-force-copy]"],
     ["test_put_then_overwrite_the_host_array[ZERO_COPY-no-force-copy-*]",
      "test_put_then_overwrite_the_host_array[*-empty]"]),
    ("d2h-writable-view", "test_device_to_host_result_is_detached",
     ["test_device_to_host_result_is_detached[asarray-one]",
      "test_device_to_host_result_is_detached[array-1MiB]"],
     ["test_device_to_host_result_is_detached[*-empty]"]),
    ("mem-shards-in-device-memory", "test_each_shard_lives or test_put_into_memory_kind",
     ["test_each_shard_lives_in_the_named_memory[pinned_host]"],
     ["test_each_shard_lives_in_the_named_memory[device]", "test_put_into_memory_kind[*]"]),
    ("shard-multi-axis-misplaced", "test_every_mesh_and_partition_spec",
     ["test_every_mesh_and_partition_spec[2d-meshes]",
      "test_every_mesh_and_partition_spec[3d-meshes]"],
     ["test_every_mesh_and_partition_spec[1d-meshes]"]),
]


@pytest.mark.parametrize("platform,select,failing,passing", CASES,
                         ids=[c[0] for c in CASES])
def test_checks_fail_on_broken_backend(run_broken, platform, select, failing, passing):
    """The named tests fail with fail_wrong_result; the ``passing`` globs (where the
    breakage cannot show, or the older checks that missed it) do not fail."""
    failed, result, doc = _failures(run_broken, platform, select)
    assert flagged(doc), result.stdout.str()[-3000:]
    for name in failing:
        assert failed.get(name) == "fail_wrong_result", (name, failed,
                                                         result.stdout.str()[-3000:])
    missed = [n for n in failed for g in passing if fnmatch.fnmatchcase(n, g.replace("[", "[[]"))]
    assert not missed, (missed, failed)


@pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                    reason="no C++ compiler for the FFI placement probe")
def test_placement_probe_fails_when_programs_run_elsewhere(run_broken):
    failed, result, doc = _failures(run_broken, "place-runs-on-next-device",
                                    "test_single_device_program_runs_on_its_device or "
                                    "test_ffi_handler_matches_numpy")
    assert failed == {"test_single_device_program_runs_on_its_device[cpu:0]":
                      "fail_wrong_result",
                      "test_single_device_program_runs_on_its_device[cpu:1]":
                      "fail_wrong_result"}, (failed, result.stdout.str()[-3000:])
    assert "the handler ran on device ordinal 1, but should run on 0" in " ".join(
        f["message"] for f in doc["failures"])


def test_new_checks_pass_on_healthy_control(run_broken):
    result, doc = run_broken("healthy-control", "-k", " or ".join([
        "test_put_then_overwrite", "test_force_copy_detaches",
        "test_batched_device_put_then_overwrite", "test_device_to_host_result_is_detached",
        "test_each_shard_lives", "test_memory_stats_account", "test_every_mesh_and_partition",
        "test_one_mib_shards", "test_single_device_program_runs", "test_spmd_program_runs"]))
    assert result.ret == 0 and clean(doc), (
        doc["verdict_reasons"], result.stdout.str()[-3000:])
