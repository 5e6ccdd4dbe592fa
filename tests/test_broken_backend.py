"""The suite catches deliberately broken backends (and passes on a healthy one).

Every platform named here is a mutant of the catalog in ``tests/mutants`` (or its
``healthy-control``), registered in the child pytest by the ``suite_runs`` fixture; these
tests check *how* the suite fails on them (statuses, messages, reproductions), which the
mutation score (``python -m tests.mutants``) does not.

Each distinct child (platform and selection) runs once per session (``suite_runs``); the
tests read their parts of its result. A child on a broken backend only needs a failure:
it runs with ``first_failure`` (Hypothesis stops at the first failing example, unshrunk).
"""

import fnmatch
import os
import re
import shlex

import pytest

from tests.mutants.runner import CONFTEST, pytester_run
from tests.bundle_helpers import clean, flagged

#: xdist inside a child: none when this run is already spread over xdist workers (nested
#: workers would oversubscribe the cores), 2 otherwise.
CHILD_XDIST = ("-n", "0" if os.environ.get("PYTEST_XDIST_WORKER") else "2")
TRANSFER = ("-k", "test_round_trip_bit_exact and (int32 or float32)")
EXECUTE = ("-k", "test_elementwise and (add-int32 or multiply-float32)")


def _statuses(doc):
    return {k: v for k, v in doc["summary"]["by_status"].items() if v}


def _broken(suite_runs, platform: str, *select: str, **kwargs):
    """(result, report dict) of ``select`` on the broken ``platform``, stopping at the
    first failing example of each test."""
    run = suite_runs.run(platform, *select, first_failure=True, **kwargs)
    return run, run.doc


def _healthy(suite_runs, *select: str, **kwargs):
    """(result, report dict) of ``select`` on ``healthy-control`` (the ci profile)."""
    run = suite_runs.run("healthy-control", *select, **kwargs)
    return run, run.doc


def _assert_fails(suite_runs, platform: str, select: str, failing: str, status: str) -> None:
    """The selection run on ``platform`` is not certified, and every failure matching
    the ``failing`` glob has ``status``."""
    __tracebackhide__ = True
    result, doc = _broken(suite_runs, platform, "-k", select)
    assert flagged(doc), result.stdout.str()[-3000:]
    failed = {f["nodeid"].split("::")[-1]: f["status"] for f in doc["failures"]}
    hits = [n for n in failed if fnmatch.fnmatchcase(n, failing.replace("[", "[[]"))]
    assert hits, (failed, result.stdout.str()[-3000:])
    assert all(failed[n] == status for n in hits), failed


def test_healthy_control_passes_same_selection(suite_runs):
    result, doc = _healthy(suite_runs, "-k",
                           "(test_round_trip_bit_exact and (int32 or float32)) or "
                           "(test_elementwise and (add-int32 or multiply-float32))")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert clean(doc), doc["verdict_reasons"]
    assert doc["summary"]["collected"] == 8


@pytest.mark.parametrize("platform,select", [
    ("broken-flip", TRANSFER),
    ("broken-dtype", TRANSFER),
    ("broken-execute", EXECUTE),
])
def test_suite_fails_on_broken_backend(suite_runs, platform, select):
    result, doc = _broken(suite_runs, platform, *select)
    assert result.ret == 1, result.stdout.str()[-3000:]
    assert flagged(doc)
    statuses = _statuses(doc)
    assert statuses.get("fail_wrong_result", 0) >= 1, statuses
    assert all(f["status"] == "fail_wrong_result" for f in doc["failures"]), doc["failures"]
    failure = doc["failures"][0]
    assert "but should be" in failure["message"] or "differs from expected" in failure["message"]
    assert failure["command"].startswith("pytest --pyargs 'conformance.test_") and \
        f"--platform={platform}" in failure["command"]
    assert failure["falsifying_example"] and failure["hypothesis_blob"].startswith(
        "@reproduce_failure(")


def test_wrong_dtype_message_names_both_dtypes(suite_runs):
    result, doc = _broken(suite_runs, "broken-dtype", *TRANSFER)
    messages = " ".join(f["message"] for f in doc["failures"] if "int32" in f["nodeid"])
    assert "out.dtype=float32, but should be int32" in messages, messages


def _add_int32_failure(doc):
    failures = [f for f in doc["failures"] if "add-int32" in f["nodeid"]]
    assert failures, [f["nodeid"] for f in doc["failures"]]
    return failures[0]


def test_failure_command_reproduces_it(suite_runs, pytester):
    result, doc = _broken(suite_runs, "broken-execute", *EXECUTE)
    command = _add_int32_failure(doc)["command"]
    pytester.makeconftest(CONFTEST)  # registers the mutants
    again = pytester_run(pytester, *shlex.split(command)[1:])
    assert again.ret == pytest.ExitCode.TESTS_FAILED, again.stdout.str()[-2000:]
    again.stdout.fnmatch_lines(["*1 failed*"])


def test_execute_failure_carries_program_text(suite_runs):
    result, doc = _broken(suite_runs, "broken-execute", *EXECUTE)
    failure = _add_int32_failure(doc)
    repro = failure["reproduction"]
    assert "stablehlo.add" in repro and "Reproduction: execute(add, int32" in repro, repro
    assert failure["program_text"].startswith("module @") and "stablehlo.add" in \
        failure["program_text"]


REGISTRY = ("-k", "test_registry")


def test_registry_area_fails_on_wrong_process_index(suite_runs):
    result, doc = _broken(suite_runs, "broken-process-index", *REGISTRY)
    assert result.ret == 1 and flagged(doc), result.stdout.str()[-3000:]
    failed = {f["nodeid"].split("::")[-1] for f in doc["failures"]}
    assert "test_local_devices_partition_the_global_list" in failed, failed


def test_registry_area_passes_on_healthy_control(suite_runs):
    result, doc = _healthy(suite_runs, *REGISTRY)
    assert result.ret == 0 and clean(doc), result.stdout.str()[-3000:]
    assert doc["summary"]["collected"] == 5


def test_client_reporting_another_platform_stops_the_run(suite_runs):
    # A registry entry named like a platform that hands out a CPU client: the classic
    # silent fallback. Without --expect-platform=cpu the suite must refuse it.
    result, doc = _healthy(suite_runs, *REGISTRY, expect_platform=None)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and doc is None
    result.stderr.fnmatch_lines(["*--platform=healthy-control: the client obtained reports "
                                 "platform 'cpu'*refusing to certify healthy-control*"
                                 "--platform healthy-control --expect-platform cpu"])


@pytest.mark.parametrize("platform,select,failing", [
    ("broken-put", "test_batched_device_put_shards_hold_their_slices and int",
     "test_batched_device_put_shards_hold_their_slices[*]"),
    ("broken-reorder", "test_reorder_shards_preserves_data", "test_reorder_shards_preserves_data"),
    ("broken-always-copy", "test_always_copy_is_independent",
     "test_always_copy_is_independent[reorder_shards]"),
    ("broken-donate", "test_donate_input_deletes_the_input and reorder_shards",
     "test_donate_input_deletes_the_input[reorder_shards-is_deleted]"),
    ("broken-memory-kind", "test_copy_between_memory_kinds",
     "test_copy_between_memory_kinds[device-pinned_host]"),
    ("broken-all-reduce", "test_collective", "test_collective[all_reduce]"),
    ("broken-aliasing", "test_donation_through_input_output_aliasing",
     "test_donation_through_input_output_aliasing[aliased_is_deleted]"),
])
def test_copy_semantics_areas_fail_on_broken_backend(suite_runs, platform, select, failing):
    _assert_fails(suite_runs, platform, select, failing, "fail_wrong_result")


def test_a_crashing_donation_observation_hides_no_other(suite_runs):
    """Each donation observation runs in its own child: where ``is_deleted()`` or the use
    of the donated input crashes (jaxlib 0.10.2 to 0.12.0.1's CPU client), a copy that
    writes a wrong result is still a wrong result."""
    result, doc = _broken(suite_runs, "xfer-batched-copy-wrong-shard", "-k",
                          "test_donate_input_deletes_the_input and batched_copy")
    assert doc is not None, result.stdout.str()[-3000:]
    statuses = {r["test_id"].split("::")[-1]: r["status"] for r in doc["results"]}
    assert set(statuses) == {f"test_donate_input_deletes_the_input[batched_copy-{o}]"
                             for o in ("result", "use_raises", "is_deleted",
                                       "live_arrays")}, statuses
    assert statuses["test_donate_input_deletes_the_input[batched_copy-result]"] == \
        "fail_wrong_result", (statuses, result.stdout.str()[-3000:])


def test_copy_semantics_areas_pass_on_healthy_control(suite_runs):
    result, doc = _healthy(suite_runs, "-k", "test_reorder_shards_preserves_data or "
                           "test_always_copy_is_independent or test_reuse_input or "
                           "test_memory_kinds or test_collectives")
    assert clean(doc), (doc["verdict_reasons"], result.stdout.str()[-2000:])


@pytest.mark.parametrize("platform,select,failing,status", [
    ("broken-serialize", "test_serialize_deserialize_execute",
     "test_serialize_deserialize_execute_gives_the_same_result[*]", "fail_wrong_result"),
    ("broken-etype", "test_primitive_type_round_trip and float16",
     "test_primitive_type_round_trip[*-float16]", "fail_wrong_result"),
    ("broken-custom-calls", "test_registered_target_is_listed",
     "test_registered_target_is_listed_and_called[*]", "fail_wrong_result"),
    ("broken-live", "test_live_arrays", "test_live_arrays_and_buffers_grow_and_shrink[*]",
     "fail_wrong_result"),
    # one child for the eight: the executables area and test_client's live executables
    *[("broken-programs", "test_executables.py and not serialize or "
       "test_live_executables_grow_and_shrink", f"{test}[*]",
       "fail_wrong_result") for test in (
        "test_compile_gives_an_unloaded_executable_with_the_same_program",
        "test_hlo_modules_contain_the_program_ops",
        "test_compiled_memory_stats_match_the_arguments",
        "test_cost_analysis_counts_the_flops_of_a_dot",
        "test_output_memory_kinds_name_the_default_memory",
        "test_execute_sharded_with_tokens",
        "test_execution_stream_id_runs_programs_and_rejects_bad_ids",
        "test_live_executables_grow_and_shrink")],
    ("broken-fuzz", "test_fuzz_public_function and (custom_call or dtype_to_etype)",
     "test_fuzz_public_function[custom_call_targets]", "crash"),
    ("broken-fuzz", "test_fuzz_public_function and (custom_call or dtype_to_etype)",
     "test_fuzz_public_function[dtype_to_etype]", "fail_wrong_result"),
])
def test_jaxlib_api_areas_fail_on_broken_backend(suite_runs, platform, select, failing, status):
    _assert_fails(suite_runs, platform, select, failing, status)


def test_bad_input_test_fails_without_argument_checks(suite_runs):
    result, doc = _broken(suite_runs, "broken-validation", "-k",
                          "test_distributed_topology_and_block")
    assert flagged(doc), result.stdout.str()[-3000:]
    failed = {f["nodeid"].split("[")[-1].rstrip("]") for f in doc["failures"]}
    # jaxlib alone accepts or misreports each of these (the test's ids):
    assert {"service-no-port", "client-negative-node", "topology-not-device",
            "block-numpy"} <= failed, (failed, result.stdout.str()[-3000:])


def test_gloo_bad_input_test_fails_without_argument_checks(suite_runs):
    result, doc = _broken(suite_runs, "broken-validation", "-k",
                          "test_gloo_collectives_reject_bad_input")
    failed = {f["nodeid"].split("::")[-1]: f["status"] for f in doc["failures"]}
    assert failed.get("test_gloo_collectives_reject_bad_input") in ("fail_error",
                                                                      "fail_wrong_result"), (
        failed, result.stdout.str()[-3000:])


def test_jaxlib_api_areas_pass_on_healthy_control(suite_runs):
    result, doc = _healthy(suite_runs, "-k", "test_serialize_deserialize_execute or "
                           "(test_primitive_type_round_trip and float16) "
                           "or test_live_arrays or (test_fuzz_public_function and "
                           "(custom_call or dtype_to_etype)) or test_registered_target or "
                           "test_check_plugin_version or test_executables.py or "
                           "test_live_executables or test_distributed_topology_and_block")
    assert clean(doc), (doc["verdict_reasons"], result.stdout.str()[-2000:])


# -- kernels: every family fails on a backend whose kernel results are perturbed -----------

KERNEL_FAILURE_MODES = [  # the failure modes issue 6 names, each against its own check
    ("broken-lu-pivots", "test_kernels_linalg.py and test_lu and float64",
     "test_lu_with_partial_pivoting[float64]", "fail_wrong_result"),
    ("broken-fft-norm", "test_kernels_fft.py and (ifft-complex64 or round_trip)",
     "test_fft[ifft-complex64]", "fail_wrong_result"),
    ("broken-fft-norm", "test_kernels_fft.py and (ifft-complex64 or round_trip)",
     "test_fft_round_trip_is_identity[complex64]", "fail_wrong_result"),
    ("broken-prng", "test_kernels_prng.py and threefry", "test_threefry2x32_is_bit_exact",
     "fail_wrong_result"),
    ("broken-ffi-errors", "test_kernels_ffi.py and error",
     "test_ffi_handler_error_reaches_python*", "fail_error"),  # DID NOT RAISE
]


@pytest.mark.parametrize("platform,select,failing,status", KERNEL_FAILURE_MODES)
def test_kernel_failure_modes_are_caught(suite_runs, platform, select, failing, status):
    _assert_fails(suite_runs, platform, select, failing, status)


#: The kernel tests in two halves of ~300 (elementwise; the other families), so that the
#: two children run on both xdist workers rather than one 110 s child at the run's end.
KERNEL_HALVES = ["test_kernels_elementwise",
                 "test_kernels_ and not test_kernels_elementwise and not error_reaches_python"]
#: Every kernel test, for the representative below.
KERNEL_TESTS = "test_kernels_ and not error_reaches_python"


def _assert_every_one_fails(doc, at_least: int) -> None:
    __tracebackhide__ = True
    collected = {r["nodeid"] for r in doc["results"]}
    failed = {r["nodeid"] for r in doc["results"] if r["status"] == "fail_wrong_result"}
    assert len(collected) >= at_least, f"only {len(collected)} kernel tests ran"
    assert not collected - failed, sorted(collected - failed)


@pytest.mark.slow
@pytest.mark.parametrize("select", KERNEL_HALVES, ids=["elementwise", "other-families"])
def test_every_kernel_test_fails_on_a_broken_kernel_backend(suite_runs, select):
    """Each test of the kernel families fails when every kernel result is wrong
    (broken-kernel-results: floats scaled by 1+2^-9 and 64 ULP up, NaN dropped, the first
    bool flipped, then the first element of every numeric output +1, as
    broken-kernels-ulp and broken-execute together, in one child per half); the FFI error
    path is covered by broken-ffi-errors above. Nightly (about 130 s of children on the
    2-core CI machine); the default run has the representative below."""
    result, doc = _broken(suite_runs, "broken-kernel-results", "-k", select, *CHILD_XDIST)
    _assert_every_one_fails(doc, 250)


def _first_and_last_of_each_function(ids: list[str]) -> list[str]:
    """The first and the last parametrization of each test function, in order."""
    by_function: dict[str, list[str]] = {}
    for nodeid in ids:
        by_function.setdefault(nodeid.split("[")[0], []).append(nodeid)
    return [n for group in by_function.values() for n in dict.fromkeys((group[0], group[-1]))]


def test_first_and_last_of_each_function_keeps_every_function():
    ids = ["m.py::f[a]", "m.py::f[b]", "m.py::f[c]", "m.py::g", "n.py::f[x]"]
    assert _first_and_last_of_each_function(ids) == [
        "m.py::f[a]", "m.py::f[c]", "m.py::g", "n.py::f[x]"]


#: A kernel test's id in ``pytest --collect-only -q``'s listing (``test_kernels_x.py::...``).
_KERNEL_ID = re.compile(r"(test_kernels_\w+\.py::\S+)$")


def test_every_kernel_test_function_fails_on_a_broken_kernel_backend(suite_runs):
    """The default run's representative of the nightly test above: the first and the last
    parametrization of every kernel test function (about 100 of the ~650 kernel tests,
    every one of the ~50 functions) fail on broken-kernel-results."""
    listed = suite_runs.run("broken-kernel-results", "-k", KERNEL_TESTS, "--collect-only",
                            "-q", first_failure=True)
    ids = [m.group(1) for m in map(_KERNEL_ID.search, listed.stdout.lines) if m]
    functions = {n.split("[")[0] for n in ids}
    assert len(functions) >= 45, (sorted(functions), listed.stdout.str()[-3000:])
    chosen = _first_and_last_of_each_function(ids)
    result, doc = _broken(suite_runs, "broken-kernel-results", *CHILD_XDIST,
                          targets=[f"conformance.{n.replace('.py::', '::', 1)}" for n in chosen])
    assert {r["nodeid"].split("/")[-1].split("[")[0] for r in doc["results"]} == functions, \
        result.stdout.str()[-3000:]
    _assert_every_one_fails(doc, len(chosen))


def test_kernel_families_pass_on_healthy_control(suite_runs):
    select = " or ".join(s for _, s, _, _ in KERNEL_FAILURE_MODES) + (
        " or (test_kernels_ and float32 and not special and not subnormals)")
    result, doc = _healthy(suite_runs, "-k", select, *CHILD_XDIST)
    assert clean(doc), (doc["verdict_reasons"], result.stdout.str()[-2000:])


def test_multi_process_area_fails_on_a_broken_distributed_runtime(suite_runs):
    """Every multi_process test that uses the runtime fails on tests/broken_distributed.py
    (the two jaxlib defects fail anyway; Gloo's bad input is broken-validation's)."""
    result, doc = _broken(suite_runs, "healthy-control", "-k", "test_multi_process and not "
                          "callback_fires and not wrong_address and not gloo", *CHILD_XDIST,
                          env={"PJRT_CONFORMANCE_WORKER_PRELOAD": "tests.broken_distributed"})
    records = {r["nodeid"].split("::")[-1]: r for r in doc["results"]}
    assert len(records) == 7, sorted(records)
    # the status varies with process timing (a Hypothesis example group is fail_error)
    passed = [n for n, r in records.items()
              if r["status"] not in ("fail_wrong_result", "fail_error", "crash")]
    assert not passed, ({n: records[n]["status"] for n in passed}, result.stdout.str()[-3000:])
    # a test whose worker died (crash) has no per-process facts; the others name both
    with_processes = [r for r in records.values() if "processes" in r]
    assert with_processes, records
    assert all([p["process"] for p in r["processes"]] == [0, 1] for r in with_processes)


def test_multi_process_area_passes_on_healthy_control(suite_runs):
    result, doc = _healthy(suite_runs, "-k", "test_key_value_store_across_processes "
                           "or test_global_view or test_barriers")
    assert clean(doc), (doc["verdict_reasons"], result.stdout.str()[-2000:])
    assert doc["num_processes"] == 2
