"""Area multi_process: PJRT's distributed runtime with real processes (the distributed
runtime: ``get_distributed_runtime_service``/``_client``; ``make_cpu_client`` with Gloo
collectives, as jax's backend registry makes it).

Each test runs one scenario of :mod:`conformance.processes.mp_worker` in ``--num-processes``
processes on loopback (:mod:`conformance.processes.launcher`): process 0 hosts the
coordination service, every process joins with its own
``DistributedRuntimeClient``. The launcher kills every worker by its timeout, so
no test can hang; each worker's outcome is recorded in the report
(``results[].processes``). A worker ended by a signal the scenario did not ask
for is a ``crash``. Times are seconds; ``SLACK_S`` is the allowance for process
scheduling and RPC round trips on a loaded 2-core machine.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.processes import launcher, mp_checks
from conformance.programs import sharded_programs
from conformance.helpers.assertions import BackendCrash
from conformance.certification.verdict.report import PROCESSES_PROPERTY
from runtime.xla_bridge import client_platform

pytestmark = pytest.mark.capability("multi_process")
SLACK_S = 2.0


def _cluster(request, scenario: str, n: int, *, params=None, timeout: float = 90.0,
             expect_exit: dict[int, int] | None = None) -> list[launcher.WorkerResult]:
    """Run ``scenario`` in ``n`` processes, record their outcomes, and raise
    BackendCrash for a worker killed by a signal (``expect_exit``: process -> the
    exit code the scenario itself chose for it)."""
    results = launcher.run_scenario(scenario, n, params=params, timeout=timeout)
    request.node.user_properties.append((PROCESSES_PROPERTY, [r.summary() for r in results]))
    for r in results:
        if r.returncode is None:
            raise AssertionError(f"process {r.process_id} of {scenario} did not finish within "
                                 f"{timeout:g} s (killed)\n{r.output[-1500:]}")
        if r.signal and r.returncode != (expect_exit or {}).get(r.process_id):
            raise BackendCrash(f"process {r.process_id} of {scenario} was killed by {r.signal} "
                               f"instead of raising a Python error\n{r.output[-1500:]}")
    return results


def _ok(results: list[launcher.WorkerResult], skip: set[int] = frozenset()) -> list[dict]:
    """The scenario results of every process not in ``skip``; AssertionError with the
    worker's error otherwise."""
    out = []
    for r in results:
        if r.process_id in skip:
            continue
        assert r.result is not None and r.returncode == 0, (
            f"process {r.process_id} failed: {r.error}")
        out.append(r.result)
    return out


@pytest.fixture
def processes(num_processes: int) -> int:
    if num_processes < 2:
        pytest.skip("needs --num-processes >= 2")
    return num_processes


@pytest.fixture
def cpu_only(client, backend_spec) -> None:
    """The workers build jaxlib CPU clients (Gloo collectives); other platforms would
    need one accelerator a process."""
    if client_platform(client) != "cpu" or backend_spec.plugin_library is not None:
        pytest.skip(f"multi-process clients are CPU clients with Gloo; {client.platform} "
                    "needs one device per process")


def test_key_value_store_across_processes(request, processes):
    results = _ok(_cluster(request, "key_value", processes,
                           params={"large_bytes": 1 << 20, "missing_timeout_ms": 1000}))
    for pid, r in enumerate(results):
        where = f"process {pid} of {processes}"
        assert r["digests"] == r["expected_digests"], (
            f"values read back differ (ascii, unicode, 1 MiB): {r['digests']} [{where}]")
        assert r["duplicate_set_error"] and "ALREADY_EXISTS" in r["duplicate_set_error"], (
            f"key_value_set of an existing key without allow_overwrite gave "
            f"{r['duplicate_set_error']!r}, should be ALREADY_EXISTS [{where}]")
        assert r["peers"] == [f"third-{j}" for j in range(processes)], (
            f"allow_overwrite=True values seen: {r['peers']} [{where}]")
        assert r["missing_error"] and "DEADLINE_EXCEEDED" in r["missing_error"], (
            f"a get of a missing key gave {r['missing_error']!r} [{where}]")
        assert r["missing_timeout_s"] <= r["missing_elapsed_s"] <= \
            r["missing_timeout_s"] + SLACK_S, (
            f"a get with a {r['missing_timeout_s']} s timeout failed after "
            f"{r['missing_elapsed_s']:.2f} s [{where}]")


def test_barriers(request, processes):
    results = _ok(_cluster(request, "barriers", processes, params={"timeout_ms": 1000}))
    repeats = {r["repeat_error"] is None for r in results}
    assert len(repeats) == 1, f"a repeated barrier id passed in some processes only: {results}"
    for pid, r in enumerate(results):
        where = f"process {pid} of {processes}"
        assert r["all_error"] is None, f"barrier of all processes failed: {r['all_error']} " \
                                       f"[{where}]"
        if pid in r["subset"]:
            assert r["subset_error"] is None, (
                f"barrier of process_ids={r['subset']} failed: {r['subset_error']} [{where}]")
    lonely = results[0]
    assert lonely["lonely_error"] and "DEADLINE_EXCEEDED" in lonely["lonely_error"], (
        f"a barrier whose other process never arrives gave {lonely['lonely_error']!r}")
    assert lonely["lonely_elapsed_s"] <= lonely["timeout_s"] + SLACK_S, (
        f"a barrier with a {lonely['timeout_s']} s timeout failed after "
        f"{lonely['lonely_elapsed_s']:.2f} s")


def test_global_view(request, processes, cpu_only):
    results = _ok(_cluster(request, "global_view", processes))
    problems = mp_checks.global_view(results, per_process=2)
    assert not problems, "\n".join(problems)


@st.composite
def collective_cases(draw):
    return [{"collective": name,
             "axis": "proc" if name == "all_to_all" else draw(st.sampled_from(("proc", "local"))),
             "k0": draw(st.integers(1, 2)), "k1": draw(st.integers(1, 2)),
             "dtype": draw(st.sampled_from(("float32", "int32"))),
             "seed": draw(st.integers(0, 2**16))}
            for name in sharded_programs.COLLECTIVES]


@settings(max_examples=2, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=collective_cases())
def test_cross_process_collectives(request, processes, cpu_only, cases):
    """Every collective over the cross-process mesh axis (or the in-process one) through
    execute_sharded with Gloo; each process checks its local shards against NumPy, and
    shards of one index agree across processes."""
    results = _ok(_cluster(request, "collectives", processes, params={"cases": cases}))
    problems = mp_checks.collectives(results, cases, per_process=2)
    assert not problems, "\n".join(problems)


def test_dead_peer_fails_barriers_and_gets_within_their_timeout(request, processes):
    last = processes - 1
    results = _cluster(request, "dead_peer", processes, params={"timeout_ms": 2000},
                       expect_exit={last: 17})
    assert results[last].returncode == 17 and "dead" in results[last].marks, (
        f"the process meant to die exited with {results[last].returncode}")
    for pid, r in enumerate(_ok(results, skip={last})):
        where = f"process {pid}, process {last} dead"
        for call in ("barrier", "get"):
            assert r[f"{call}_error"], f"{call} with a dead peer succeeded [{where}]"
            assert r[f"{call}_elapsed_s"] <= r["timeout_s"] + SLACK_S, (
                f"{call} with a {r['timeout_s']} s timeout failed after "
                f"{r[f'{call}_elapsed_s']:.2f} s [{where}]")


def _detection(results, last: int) -> list[float]:
    dead_at = results[last].marks["dead"]
    return [r.ended_at - dead_at for r in results if r.process_id != last]


#: jaxlib's fatal log line when the coordination service reports a dead peer.
_TERMINATED = "Terminating process because the JAX distributed service detected fatal errors"


def test_dead_peer_is_detected_by_heartbeats(request, processes):
    """With a 2 s heartbeat timeout and no callback, the service declares the dead
    process and jaxlib ends the others (by design: a fatal error, SIGABRT) within
    three heartbeat periods: the time to detect a dead peer, recorded below."""
    last, hb = processes - 1, 2
    bound = 3 * hb + SLACK_S  # survivors need not wait longer; 20 s more for start-up
    results = _cluster(request, "heartbeat_detection", processes,
                       params={"heartbeat_timeout_s": hb, "wait_s": bound}, timeout=bound + 20,
                       expect_exit={**{p: -6 for p in range(last)}, last: 17})
    detected = _detection(results, last)
    request.node.user_properties.append(("dead_peer_detected_s", [round(t, 2)
                                                                  for t in detected]))
    for pid, t in enumerate(detected):
        r = results[pid]
        # jaxlib 0.10+ ends a survivor with LOG(FATAL) (SIGABRT); 0.7/0.8 with LOG(QFATAL),
        # exit status 1 after the same "Terminating process because ..." line
        ended = r.returncode == -6 or (r.returncode == 1 and _TERMINATED in r.output)
        assert ended or (r.result and r.result["missed_heartbeats"]), (
            f"process {pid} neither ended nor saw a missed heartbeat: {r.summary()}")
        assert t <= bound, (
            f"process {pid} noticed the dead peer after {t:.2f} s (heartbeat {hb} s)")


def test_missed_heartbeat_callback_fires(request, processes):
    """A survivor with a missed_heartbeat_callback gets a call, not a process abort."""
    last, hb = processes - 1, 2
    results = _cluster(request, "heartbeat_detection", processes,
                       params={"heartbeat_timeout_s": hb, "callback": True}, timeout=60,
                       expect_exit={last: 17})
    for r in _ok(results, skip={last}):
        assert r["missed_heartbeats"], f"the callback never fired within {10 * hb} s"


def test_service_shuts_down_with_clients_attached(request, processes):
    """service.shutdown() returns within its shutdown timeout while every client is
    attached; a client call afterwards fails with an error instead of hanging (the host's
    own client then ends its process: jaxlib treats a lost service as fatal)."""
    results = _cluster(request, "service_shutdown", processes, timeout=60,
                       expect_exit={0: -6})
    host = results[0]
    assert "shutdown_returned" in host.marks, (
        f"service.shutdown() never returned: {host.summary()}")
    took = host.marks["shutdown_returned"] - host.marks["shutdown_start"]
    assert took <= 5 + SLACK_S, f"service.shutdown() took {took:.2f} s (shutdown_timeout 5 s)"
    for pid, r in enumerate(_ok(results, skip={0}), start=1):
        assert r["get_error"], f"a get after the service shut down succeeded [process {pid}]"
        assert r["get_elapsed_s"] <= r["timeout_s"] + SLACK_S, (
            f"a get after shutdown failed after {r['get_elapsed_s']:.2f} s [process {pid}]")


def test_wrong_address_fails_within_init_timeout(request):
    """connect() to a port where no service listens raises within init_timeout (+ slack);
    a process ended by the runtime instead is a crash."""
    init = 1
    results = _cluster(request, "wrong_address", 1, params={"init_timeout_s": init},
                       timeout=60)
    r = results[0]
    took = (r.ended_at if r.result is None else r.marks["connect_start"] +
            r.result["connect_elapsed_s"]) - r.marks["connect_start"]
    request.node.user_properties.append(("connect_failed_after_s", round(took, 2)))
    assert took <= init + SLACK_S, (
        f"connect() with init_timeout={init} s failed after {took:.2f} s")
    assert r.result is not None and r.result["connect_error"], (
        f"connect() to a wrong address ended the process ({r.signal}) instead of raising")


def test_gloo_collectives_reject_bad_input(xc):
    with pytest.raises(TypeError, match="argument 'distributed_client' must be a "
                                        "DistributedRuntimeClient"):
        xc.make_gloo_tcp_collectives("localhost:1234")
