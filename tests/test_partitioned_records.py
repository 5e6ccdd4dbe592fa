"""Failures of partitioned programs carry their placement, and the below-the-framework
check never re-runs them on one device as if that were the failing configuration.

A mutant that adds 1 to the first element of every output above a healthy CPU client
(``broken-execute``, 2 devices) makes SPMD tests of the collectives and stablehlo_ops
areas fail. Each failure record must carry ``arrays.sharding``
(:func:`conformance.helpers.reproduction.placement`) with 2 partitions; its bundle
script must compile with ``num_partitions=2`` and, run on jax's healthy client, exit
0 (the defect is the mutant's, above the client). The C API re-run on a real plugin
must run the program over the same 2 partitions (and find it correct: the
framework's failure), and decline a partitioned program recorded without its
placement, which then is no evidence.
"""

import copy
import json
import os
import subprocess
import sys

import pytest

from conformance import capi
from conformance.certification.attribution import attribution_sources
from conformance.certification.rendering import repro
from tests.test_real_plugin import LIBRARY

HEADER = {"platform": {"loaded": {"how": "PJRT C API plugin", "library_path": LIBRARY,
                                  "options": {"cpu_device_count": 2}}}}

#: (-k selection, test function) of SPMD tests that fail under broken-execute.
SELECT = ("test_sharded_elementwise or (test_collective and all_reduce) "
          "or test_partition_and_replica_id or test_zero_size_output_shards")
FUNCTIONS = ("test_sharded_elementwise", "test_collective", "test_partition_and_replica_id")


def _fresh_run(script_path, cwd):
    """``python -I script`` from ``cwd`` with no PYTHONPATH: nothing of this project."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([sys.executable, "-I", str(script_path)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    """The report of ``broken-execute`` over :data:`SELECT` on 2 CPU devices."""
    from tests.mutants.runner import run_child

    path = tmp_path_factory.mktemp("partitioned-records")
    out = path / "report"
    proc = run_child(
        ["--pyargs", "conformance", "--platform=broken-execute", "--cpu-devices=2",
         "--expect-platform=cpu", "--profile=none", f"--report-dir={out}",
         "--force-report-dir", "-p", "no:cacheprovider", "-k", SELECT],
        home=path, timeout=900)
    assert (out / "report.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return path, json.loads((out / "report.json").read_text())


def test_partitioned_failures_carry_their_placement(mutant_run):
    path, doc = mutant_run
    failures = [f for f in doc["failures"] if f["status"] == "fail_wrong_result"
                and f.get("arrays")]
    seen = {f["nodeid"].split("::")[1].split("[")[0] for f in failures}
    assert set(FUNCTIONS) <= seen, seen
    for record in failures:
        sharding = (record.get("arrays") or {}).get("sharding")
        assert sharding is not None, f"{record['nodeid']} recorded no placement"
        assert sharding["partitions"] == 2 == len(sharding["device_ids"]), sharding
        if record["arrays"].get("expected"):  # else a shard-shape problem: no value to check
            assert repro.kind(record) == "execute", record["nodeid"]


def test_their_scripts_run_partitioned(mutant_run):
    """The bundle's script of each failure compiles with num_partitions=2 on jax's CPU
    client, which has no such defect: exit 0."""
    path, doc = mutant_run
    for record in _partitioned_records(doc):
        script = path / "report" / repro.DIR / repro.file_name(record["nodeid"])
        assert script.is_file(), script
        proc = _fresh_run(script, path)
        assert "partitioned: num_partitions=2" in proc.stdout, proc.stdout + proc.stderr
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def _partitioned_records(doc) -> list[dict]:
    return [f for f in doc["failures"] if (f.get("arrays") or {}).get("sharding")
            and f["arrays"].get("expected") and f["status"] == "fail_wrong_result"]


@pytest.mark.skipif(LIBRARY is None, reason="no real PJRT plugin library")
def test_the_c_api_re_run_is_partitioned(mutant_run):
    """A re-run on one device would say "device(s) [0, 1]"; the partitioned one names
    the 2 partitions and the mesh."""
    _, doc = mutant_run
    records = _partitioned_records(doc)
    assert records
    for record in records:
        check = capi.plan(record, HEADER)
        assert check["check"] == "execute" and "declined" not in check
        found = capi.evidence(record, HEADER)
        assert found is not None, record["nodeid"]
        assert (found["answer"], found["outcome"]) == ("framework", "correct"), found
        assert "over 2 partitions (mesh " in found["detail"], found
        assert "device(s)" not in found["detail"], found


@pytest.mark.skipif(LIBRARY is None, reason="no real PJRT plugin library")
def test_a_wrong_partitioned_result_is_the_plugins(mutant_run):
    """The partitioned re-run judges: an expected value the plugin does not give (the
    mutant's observed one) makes it ``wrong``."""
    _, doc = mutant_run
    record = copy.deepcopy(_partitioned_records(doc)[0])
    record["arrays"]["expected"] = record["arrays"]["observed"]
    found = capi.evidence(record, HEADER)
    assert found is not None and found["outcome"] == "wrong", found
    assert "over 2 partitions" in found["detail"], found


def test_a_partitioned_program_without_its_placement_is_declined(mutant_run):
    """Without ``arrays.sharding`` a program of 2 partitions is not re-run (no child
    process) and gives no evidence; rendering and verify see nothing to check."""
    _, doc = mutant_run
    records = [r for r in _partitioned_records(doc) if repro.partitions(r) > 1]
    assert records
    for record in records:
        record = copy.deepcopy(record)
        del record["arrays"]["sharding"]
        header = {"platform": {"loaded": {"how": "PJRT C API plugin",
                                          "library_path": sys.executable, "options": {}}}}
        check = capi.plan(record, header)
        assert check["declined"].startswith("not run: partitioned program (2 partitions)")
        assert capi.run(check) == (capi.DECLINED, check["declined"])
        assert capi.evidence(record, header) is None
        assert attribution_sources.capi_facts("execute", capi.DECLINED, check["declined"]) is None


def test_the_child_declines_too():
    """Even handed a plan without ``declined``, the child never runs a program of
    several partitions on one device."""
    from conformance.capi import child

    plan = {"check": "execute", "program": "module @m attributes "
            "{mhlo.num_partitions = 4 : i32} {}",
            "arrays": {"inputs": [], "expected": None, "assertion": "assert_exact"}}
    verdict, detail = child.check_execute(None, None, [], plan)
    assert verdict == "declined" and "(4 partitions)" in detail


_JAX_BLOCKS = """
import json, sys
import jax
jax.config.update("jax_num_cpu_devices", 8)
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from conformance.helpers.reproduction import placement
d = {x.id: x for x in jax.devices()}
mesh = Mesh(np.array([d[i] for i in (3, 1, 0, 2, 7, 6, 5, 4)]).reshape(2, 4), ("x", "y"))
out = []
for spec in (P("x", "y"), P(("y", "x")), P(None, "x", "y"), P(), P("y", None, "x")):
    s = NamedSharding(mesh, spec)
    index = s.devices_indices_map((8, 8, 4))
    blocks = [[[w.start or 0, 8 if w.stop is None and k < 2 else w.stop or 4]
               for k, w in enumerate(index[dev])] for dev in mesh.devices.flat]
    out.append([placement([s], s), blocks])
print(json.dumps(out))
"""


def test_block_index_matches_jax():
    """The C API re-run cuts and assembles arrays as jax's NamedSharding does (jax's
    ``devices_indices_map`` over 8 CPU devices in a shuffled 2x4 mesh)."""
    import numpy as np

    from conformance.helpers import partitioned

    proc = subprocess.run([sys.executable, "-c", _JAX_BLOCKS], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    x = np.arange(8 * 8 * 4).reshape(8, 8, 4)
    for sharding, want in json.loads(proc.stdout.splitlines()[-1]):
        got = [[[w.start, w.stop] for w in partitioned.block_index(
            sharding, sharding["out_spec"], p, x.shape)] for p in range(8)]
        assert got == want, sharding
        out, problem = partitioned.assemble(
            sharding, [x[partitioned.block_index(sharding, sharding["out_spec"], p, x.shape)]
                       for p in range(8)])
        assert problem == "" and (out == x).all()
