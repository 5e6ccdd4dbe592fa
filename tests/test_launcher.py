"""The multi-process launcher always cleans up, and the multi_process area runs with 4
processes and records them in the report."""

import os
import time

import pytest

from conformance.processes import launcher
from tests.bundle_helpers import clean


@pytest.fixture
def misbehaving(monkeypatch):
    import tests.mp_test_scenarios  # noqa: F401 - registers hang/die in this process

    monkeypatch.setenv("PJRT_CONFORMANCE_WORKER_PRELOAD", "tests.mp_test_scenarios")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_hanging_workers_are_killed_at_the_timeout(misbehaving):
    t0 = time.monotonic()
    results = launcher.run_scenario("hang", 2, timeout=4)
    took = time.monotonic() - t0
    assert took < 10, f"the launcher returned {took:.1f} s after a 4 s timeout"
    for r in results:
        assert r.returncode is None and "hanging" in r.marks, r.summary()
        assert r.summary()["status"] == "timeout" and "killed after the 4 s timeout" in r.error
        assert _gone(r.os_pid), f"worker {r.process_id} (pid {r.os_pid}) outlived the launcher"


def test_a_dead_worker_is_reported_and_the_rest_finish(misbehaving):
    results = launcher.run_scenario("die", 2, timeout=30)
    assert results[0].result == {"alive": 0} and results[0].returncode == 0
    assert results[1].signal == "SIGKILL" and results[1].summary()["status"] == "error"
    assert all(_gone(r.os_pid) for r in results)


def test_free_port_is_bindable():
    import socket

    port = launcher.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


@pytest.mark.slow  # 19 s; the main job runs the area with 2 processes (docs/ci.md)
def test_area_runs_with_four_processes(run_suite):
    result, doc = run_suite("healthy-control", "-k", "test_key_value_store or test_global_view "
                            "or test_barriers or test_cross_process", "--num-processes=4")
    assert doc["num_processes"] == 4, doc.get("num_processes")
    assert clean(doc), (doc["verdict_reasons"], result.stdout.str()[-2000:])
    records = [r for r in doc["results"] if "processes" in r]
    assert len(records) == 4 and all(len(r["processes"]) == 4 for r in records), records


@pytest.mark.parametrize("kwargs,match", [
    (dict(scenario="key_value", num_processes=0), "argument 'num_processes' must be an int "
                                                  ">= 1, got 0"),
    (dict(scenario="key_value", num_processes=True), "got True"),
    (dict(scenario="nope", num_processes=2), "unknown scenario 'nope'"),
])
def test_launcher_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        launcher.run_scenario(**kwargs)


# -- the one child-process runner (isolation, launcher and the plugin probe use it) --------

def test_runner_names_signals_and_exits():
    from conformance.processes import runner

    crash = runner.run_python("import os, signal; print('up', flush=True); "
                              "os.kill(os.getpid(), signal.SIGABRT)", timeout=30)
    assert crash.signal == "SIGABRT" and crash.stdout == "up\n" and not crash.timed_out
    plain = runner.run_python("import sys; sys.stderr.write('e'); sys.exit(3)", timeout=30)
    assert (plain.returncode, plain.signal, plain.stderr) == (3, None, "e")
    assert runner.signal_name(-9) == "SIGKILL" and runner.signal_name(0) is None
    assert runner.signal_name(-200) == "signal 200"


def test_runner_kills_the_whole_process_group_at_the_timeout():
    from conformance.processes import runner

    code = ("import subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(p.pid, flush=True); time.sleep(60)")
    t0 = time.monotonic()
    child = runner.run_python(code, timeout=3)
    assert child.timed_out and child.returncode is None and time.monotonic() - t0 < 15
    grandchild = int(child.stdout.split()[0])
    deadline = time.monotonic() + 5
    while not (_gone(child.pid) and _dead(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(child.pid) and _dead(grandchild), "a process of the group outlived the timeout"


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for a parent that is not the runner to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_runner_environment_puts_the_project_first():
    from conformance.processes import runner

    child = runner.run_python("import os; print(os.environ['PYTHONPATH']); "
                              "print(os.environ['MARK'])", timeout=30,
                              env=runner.child_env({"MARK": "x"}))
    path, mark = child.stdout.split("\n")[:2]
    assert path.split(os.pathsep)[0] == runner.ROOT and mark == "x"


@pytest.mark.parametrize("timeout", [0, -1, True, "3"])
def test_runner_rejects_bad_timeouts(timeout):
    from conformance.processes import runner

    with pytest.raises(ValueError, match="argument 'timeout' must be a positive number"):
        runner.run_python("pass", timeout=timeout)
