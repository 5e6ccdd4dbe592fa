"""The multi-host mode of ``pjrt-conformance run`` (docs/cluster.md): Open MPI's mpirun on
loopback with 2 and 4 processes, a process killed or hung mid-run, bad flags and
half-set launcher environments, the merge of per-process results, and a broken
cross-process all-reduce caught by the global checks.

The 4-process run and the rank killed under mpirun are ``slow`` (nightly, docs/ci.md);
the default run keeps the 2-process mpirun and the killed process without a launcher."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.processes import cluster, cluster_report, launcher, mp_checks
from conformance.session.validate import OptionError
from tests.bundle_helpers import clean

#: One quick per-process test: the runs here check the cluster, not the areas. The
#: loopback global-mesh tests are selected too: the cluster's global checks replace them,
#: so they never run per process and their ids are listed once (issue 27).
SELECTION = ["--", "-k", "test_pjrt_c_api_version_is_consistent or test_global_mesh"]
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
_LAUNCHER_VARS = [v for vs in cluster.LAUNCHER_ENV.values() for v in vs] + [
    "JAX_COORDINATOR_ADDRESS", "OMPI_COMM_WORLD_LOCAL_RANK"]


def _run_args(out, *extra):
    return [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
            "--cpu-devices", "2", "--profile", "none", "--output", str(out), *extra,
            *SELECTION]


@pytest.fixture
def no_launcher(monkeypatch):
    for var in _LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("flags, match", [
    (dict(coordinator_address="127.0.0.1:1234", process_id=2, process_count=2),
     "--process-id: 2 is not in 0..1"),
    (dict(coordinator_address="127.0.0.1:1234", process_id=0, process_count=0),
     "--process-count: expected an int >= 1"),
    (dict(coordinator_address="localhost", process_id=0, process_count=2),
     "--coordinator-address: 'localhost' is not HOST:PORT"),
    (dict(coordinator_address=None, process_id=1, process_count=None),
     "both are needed outside a launcher"),
    (dict(coordinator_address=None, process_id=0, process_count=2),
     "--coordinator-address: needed for 2 processes"),
])
def test_bad_flags_are_one_line_errors(no_launcher, flags, match):
    with pytest.raises(OptionError, match=match):
        cluster.resolve(**flags)


@pytest.mark.parametrize("env, missing", [
    ({"OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_MCA_orte_hnp_uri, OMPI_COMM_WORLD_RANK"),
    ({"SLURM_PROCID": "0", "SLURM_JOB_ID": "7"}, "SLURM_STEP_NODELIST, SLURM_NTASKS"),
])
def test_half_set_launcher_environment_is_a_usage_error(no_launcher, monkeypatch, capsys,
                                                        tmp_path, env, missing):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    rc = cli.main(["run", "--platform", "cpu", "--multihost", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert missing in err, err


def test_no_launcher_is_one_process(no_launcher):
    spec = cluster.resolve(coordinator_address=None, process_id=None, process_count=None)
    assert (spec.process_id, spec.process_count, spec.launcher) == (0, 1, "none")


def test_cli_rejects_inconsistent_flags(no_launcher, capsys, tmp_path):
    rc = cli.main(["run", "--platform", "cpu", "--coordinator-address", "127.0.0.1:9",
                   "--process-id", "5", "--process-count", "2", "--output", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.count("\n") == 0 and "--process-id: 5" in err, err


def _doc(statuses):
    return {"results": [{"nodeid": n, "area": "a", "tier": "core", "status": s,
                         "duration_s": 0.0} for n, s in statuses.items()],
            "failures": [{"nodeid": n, "message": f"{n} broke"} for n, s in statuses.items()
                         if s != "pass"], "not_supported": []}


def test_merge_keeps_the_worst_status_and_every_process_status():
    docs = {0: _doc({"t1": "pass", "t2": "pass"}), 1: _doc({"t1": "crash", "t2": "pass"}),
            2: None}
    merged, ranks = cluster_report.merge_local(docs)
    by_id = {r.nodeid: r for r in merged}
    assert by_id["t1"].status == "crash" and by_id["t1"].message == "[process 1] t1 broke"
    assert by_id["t2"].status == "pass"
    assert ranks["t1"] == ["pass", "crash", "missing"]


def test_global_check_of_a_lost_process_is_a_crash():
    ok = {"summary": {"process": 0, "status": "pass", "returncode": 0, "wall_s": 1.0,
                      "error": None}, "result": {}}
    results = cluster_report.global_results({"global_view": [ok, None]}, {},
                                            {1: "process 1 stopped"})
    assert [(r.status, r.processes[1]["error"]) for r in results] == [
        ("crash", "process 1 stopped")]


def test_broken_cross_process_all_reduce_is_caught(monkeypatch):
    monkeypatch.setenv("PJRT_CONFORMANCE_WORKER_PRELOAD", "tests.broken_global_collectives")
    check = mp_checks.BY_NAME["collectives"]
    params = check.params()
    runs = launcher.run_scenario(check.scenario, 2, params=params, timeout=120)
    assert all(r.result is not None for r in runs), [r.error for r in runs]
    problems = check.check([r.result for r in runs], params)
    assert any("all_reduce over proc" in p for p in problems), problems


def _verified(out, n):
    check = bundle_files.verify(out)
    assert check.valid, check.problems
    doc = json.loads((out / "report.json").read_text())
    c = doc["cluster"]
    assert c["process_count"] == n and c["devices_per_process"] == [2] * n, c
    ids = c["global_mesh"]["device_ids"]
    assert len(ids) == n and len({d for row in ids for d in row}) == 2 * n, ids
    assert [p["process"] for p in c["processes"]] == list(range(n))
    return doc


@pytest.mark.timeout(300)
@pytest.mark.parametrize("n", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_mpirun_gives_one_verified_bundle(tmp_path, no_launcher, n):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun (Debian openmpi-bin) is not installed; .ci/run installs it")
    out = tmp_path / "bundle"
    proc = subprocess.run([mpirun, "--oversubscribe", "-np", str(n),
                           *_run_args(out, "--multihost")],
                          env={**os.environ, **ROOT_OK}, capture_output=True, text=True,
                          timeout=280)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]   # no profile
    doc = _verified(out, n)
    assert doc["cluster"]["launcher"] == "ompi" and clean(doc)
    scopes = {r["nodeid"]: r["scope"] for r in doc["results"]}
    assert sorted(k for k, v in scopes.items() if v == "global") == sorted(
        cluster_report.GLOBAL_NODEID.format(c.name) for c in mp_checks.GLOBAL)


@pytest.mark.slow  # the same fault as the next test's, through mpirun's own teardown
@pytest.mark.timeout(240)
def test_mpirun_killing_a_rank_gives_an_incomplete_bundle(tmp_path, no_launcher):
    """Under mpirun (default settings) a rank that dies mid-run makes mpirun SIGTERM the
    others: process 0 writes what it gathered as an intact, incomplete bundle; no hang."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun (Debian openmpi-bin) is not installed; .ci/run installs it")
    out = tmp_path / "bundle"
    env = {**os.environ, **ROOT_OK, "PJRT_CONFORMANCE_MULTIHOST_FAULT": "kill:1:1"}
    proc = subprocess.run([mpirun, "--oversubscribe", "-np", "2",
                           "-x", "PJRT_CONFORMANCE_MULTIHOST_FAULT",
                           *_run_args(out, "--multihost")],
                          env=env, capture_output=True, text=True, timeout=200)
    assert proc.returncode != 0
    check = bundle_files.verify(out)
    assert check.valid, check.problems
    doc = json.loads((out / "report.json").read_text())
    assert doc["verdict"] == "incomplete" and doc["interrupted"], doc["interrupted"]
    assert doc["cluster"]["process_count"] == 2


@pytest.mark.timeout(240)
def test_killed_process_gives_an_incomplete_bundle_naming_it(tmp_path, no_launcher):
    out, n = tmp_path / "bundle", 2
    address = f"127.0.0.1:{launcher.free_port()}"
    env = {**os.environ, "PJRT_CONFORMANCE_MULTIHOST_FAULT": "kill:1:1"}
    procs = [subprocess.Popen(_run_args(out, "--coordinator-address", address,
                                        "--process-id", str(p), "--process-count", str(n),
                                        "--heartbeat-timeout", "3", "--global-timeout", "8"),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for p in range(n)]
    try:
        outputs = [p.communicate(timeout=200)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert procs[1].returncode == -9 and procs[0].returncode == 4, outputs[0][-3000:]
    doc = _verified(out, n)
    assert doc["verdict"] == "incomplete" and "process 1" in doc["interrupted"], doc

    assert doc["cluster"]["processes"][1]["state"].startswith("process 1 stopped")
    statuses = {r["nodeid"]: r["status"] for r in doc["results"]}
    assert statuses[cluster_report.GLOBAL_NODEID.format("global_view")] == "pass"
    assert statuses[cluster_report.GLOBAL_NODEID.format("collectives")] == "crash"
