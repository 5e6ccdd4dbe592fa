"""The below-the-framework check (``conformance.capi``) and the standalone
reproductions of a bundle (``conformance.certification.rendering.repro``) on a real PJRT plugin.

Failure records come from real failing runs: XLA's CPU kernels are wrong at
subnormals on the plugin itself (atan2 of two subnormals is NaN, cbrt of a positive
subnormal is negative), so the check must say "plugin"; a mutant that corrupts
outputs in the Python layer above a healthy client (``broken-execute``) makes a
failure the plugin does not have, so the check must say "framework".
"""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conformance import capi
from conformance.certification.bundle import bundle_files
from conformance.certification.rendering import repro
from conformance.helpers import reproduction
from conformance.processes import runner
from tests.test_real_plugin import LIBRARY

pytestmark = pytest.mark.skipif(LIBRARY is None, reason="no real PJRT plugin library")
SPECIAL = "test_float_special_values and (atan2-float32 or cbrt-float32)"


def plugin_run(tmp_path, select: str) -> dict:
    """``pjrt-conformance run`` of ``select`` through the plugin (2 devices); the report."""
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--plugin-library", LIBRARY, "--plugin-options", '{"cpu_device_count": 2}',
         "--output", "out", "--profile", "none", "--", "-k", select],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, env=runner.child_env())
    assert (tmp_path / "out" / "report.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((tmp_path / "out" / "report.json").read_text())


@pytest.fixture(scope="module")
def special_values_run(tmp_path_factory):
    """A real run on the plugin whose atan2 and cbrt special-value tests fail."""
    path = tmp_path_factory.mktemp("capi-plugin-run")
    return path, plugin_run(path, SPECIAL)


def _header() -> dict:
    return {"platform": {"loaded": {"how": "PJRT C API plugin", "library_path": LIBRARY,
                                    "options": {"cpu_device_count": 2}}}}


def test_wrong_kernel_below_the_framework_is_the_plugins(special_values_run):
    _, doc = special_values_run
    failures = {f["nodeid"].split("[")[-1]: f for f in doc["failures"]}
    assert set(failures) == {"atan2-float32]", "cbrt-float32]"}, failures.keys()
    check = capi.hook(doc)  # the attribution module's Callable[[record], ...]
    for record in failures.values():
        assert record["arrays"]["assertion"] == "assert_ulp_close"
        found = check(record)
        assert found is not None and found["answer"] == "plugin", found
        assert found["outcome"] == "wrong" and "[0, 1]" in found["detail"], found


def test_the_run_records_the_c_api_re_run_as_data(special_values_run):
    """The run's own ``capi`` evidence items (conformance.session.evidence.capi_source):
    the check, its outcome and detail as facts, worded only by the renderers."""
    from conformance.certification.rendering import failure_view

    _, doc = special_values_run
    assert doc["schema_version"] == 3 and doc["failures"]
    for f in doc["failures"]:
        (item,) = [e for e in f["evidence"] if e["source"] == "capi"]
        assert (item["answer"], item["check"], item["outcome"]) == ("plugin", "execute", "wrong")
        assert f["attribution"] == "plugin", f["evidence"]
        assert any(line.startswith("capi: wrong through the PJRT C API too: ")
                   for line in failure_view.evidence_lines(f))


MUTANTS = [  # (mutant of tests/mutants, -k selection, the check the record gets)
    ("broken-execute", "test_elementwise and add-int32", "execute"),  # +1 on outputs
    ("broken-flip", "test_round_trip_bit_exact and float32", "transfer"),  # put flips a bit
]


@pytest.mark.parametrize("mutant,select,check", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_failure_made_above_the_c_api_is_the_frameworks(run_suite, pytester, mutant, select,
                                                         check):
    """The mutants break the suite's Python client layer over a healthy CPU client; the
    same failure re-run on a healthy plugin's C API is correct. The plain-jax repro
    of the bundle passes too: jax itself has no such defect."""
    _, doc = run_suite(mutant, "-k", select)
    assert doc is not None and doc["failures"], doc
    record = doc["failures"][0]
    assert record["status"] == "fail_wrong_result" and record["arrays"]["inputs"]
    assert capi.plan(record, doc) is None  # the mutant run has no C API plugin
    assert capi.plan(record, _header())["check"] == check
    found = capi.evidence(record, _header())  # the same failure on a healthy plugin
    assert found is not None and found["answer"] == "framework", found
    assert found["outcome"] == "correct" and found["check"] == check, found
    script = pytester.path / "report" / repro.DIR / repro.file_name(record["nodeid"])
    proc = _fresh_run(script, pytester.path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("name,call", [
    ("test_use_after_delete_raises[is_ready]", "ReadyEvent reports an error"),
    ("test_use_after_delete_raises[clone]", "CopyToDevice reports an error"),
    ("test_use_after_delete_raises[asarray]", "ToHostBuffer reports an error"),
    ("test_double_delete_is_harmless", "a second PJRT_Buffer_Delete")])
def test_a_lifetime_failure_checks_delete_below_the_framework(name, call):
    """jaxlib 0.10.2 crashes in is_ready()/clone() on a deleted array; the plugin's
    own C API reports an error for the same use of a deleted buffer."""
    record = {"nodeid": f"conformance/test_lifecycle.py::{name}", "area": "lifecycle",
              "status": "crash"}
    found = capi.evidence(record, _header())
    assert found is not None and found["answer"] == "framework", found
    assert call in found["detail"]


def test_a_lifetime_operation_without_a_c_api_error_is_undecided():
    for name in ("test_use_after_delete_raises[on_device_size_in_bytes]",
                 "test_use_after_delete_raises[execute]", "test_clone_is_independent"):
        record = {"nodeid": f"conformance/test_lifecycle.py::{name}", "status": "crash"}
        assert capi.plan(record, _header()) is None


def test_a_crash_in_the_child_is_the_plugins(monkeypatch):
    crashed = runner.ChildResult(-11, "", "", 0.1, 1.0, 1)
    monkeypatch.setattr(runner, "run_python", lambda *a, **k: crashed)
    assert capi.run({"check": "lifetime"}) == (
        "wrong", "the plugin killed the process (SIGSEGV) in the lifetime check")
    hung = runner.ChildResult(None, "", "", 5.0, None, 1)
    monkeypatch.setattr(runner, "run_python", lambda *a, **k: hung)
    assert capi.run({"check": "lifetime"}, timeout=5)[0] == "undecided"


def test_undecidable_records_give_none(special_values_run):
    _, doc = special_values_run
    record = doc["failures"][0]
    builtin = {"platform": {"loaded": {"how": "built-in factory", "source": None}}}
    assert capi.evidence(record, builtin) is None  # no C API to call
    missing = {"platform": {"loaded": {**_header()["platform"]["loaded"],
                                       "library_path": "/nonexistent/libpjrt.so"}}}
    assert capi.evidence(record, missing) is None
    assert capi.evidence({**record, "program_text": None, "arrays": None}, doc) is None
    unknown = {**record, "arrays": {**record["arrays"], "assertion": "assert_within_bound"}}
    assert capi.evidence(unknown, doc) is None  # a comparison the check does not redo
    with pytest.raises(TypeError, match="argument 'record'"):
        capi.evidence("test_x", doc)
    with pytest.raises(TypeError, match="argument 'header'"):
        capi.evidence(record, None)
    with pytest.raises(TypeError, match="argument 'header'"):
        capi.hook("report.json")


# --- standalone reproductions of the same run (conformance.certification.rendering.repro) ---

def _fresh_run(script_path, cwd):
    """``python -I script`` from ``cwd`` with no PYTHONPATH: nothing of this project."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([sys.executable, "-I", str(script_path)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _passing(record: dict) -> dict:
    """``record`` with every element the backend got wrong replaced by one it got right
    (inputs and expected value together; the programs are elementwise)."""
    arrays = record["arrays"]
    observed = reproduction.decode_array(arrays["observed"])
    expected = reproduction.decode_array(arrays["expected"])
    width = f"u{observed.dtype.itemsize}"
    with np.errstate(invalid="ignore"):
        nan = np.isnan(observed.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    right = (observed.view(width) == expected.view(width)) | nan
    good = int(np.flatnonzero(right & ~np.isnan(expected.astype(np.float64)))[0])
    inputs = [reproduction.decode_array(a) for a in arrays["inputs"]]
    for a in inputs + [expected]:
        a[~right] = a.flat[good]
    return {**record, "arrays": {**arrays, "expected": reproduction.encode_array(expected),
                                 "inputs": [reproduction.encode_array(a) for a in inputs]}}


def test_bundle_repros_reproduce_in_a_fresh_process(special_values_run, tmp_path):
    path, doc = special_values_run
    out = path / "out"
    listed = (out / bundle_files.MANIFEST).read_text()
    scripts = sorted(p for p in (out / repro.DIR).glob("*.py") if p.name != repro.SHARED)
    assert len(scripts) == len(doc["failures"]) == 2
    assert (out / repro.DIR / repro.SHARED).is_file()   # the checks, written once
    assert all(f"{repro.DIR}/{p.name}" in listed for p in scripts)
    assert bundle_files.verify(out).problems == []
    copy = tmp_path / "tampered"
    shutil.copytree(out, copy)
    with open(copy / repro.DIR / scripts[0].name, "a") as f:
        f.write("sys.exit(0)\n")  # a rewritten reproduction no longer matches its hash
    (copy / repro.DIR / "extra.py").write_text("")
    problems = bundle_files.verify(copy).problems
    assert f"{repro.DIR}/{scripts[0].name} was modified: its sha256 differs from " \
           f"{bundle_files.MANIFEST}" in problems
    assert f"{repro.DIR}/extra.py is not listed in {bundle_files.MANIFEST}" in problems
    for script in scripts + [out / repro.DIR / repro.SHARED]:
        text = script.read_text()
        assert not re.search(r"^\s*(import|from)\s+(conformance|runtime|tests|pytest)\b",
                             text, re.M)
    for script in scripts:
        proc = _fresh_run(script, tmp_path)
        assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "defect present" in proc.stdout and "expected" in proc.stdout


def test_a_passing_input_makes_the_repro_exit_0(special_values_run, tmp_path):
    _, doc = special_values_run
    (tmp_path / repro.SHARED).write_text(repro.shared())
    for record in doc["failures"]:
        script = tmp_path / repro.file_name(record["nodeid"])
        script.write_text(repro.script(_passing(record), doc))
        proc = _fresh_run(script, tmp_path)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert proc.stdout.rstrip().endswith("correct")


def test_jax_repro_on_the_built_in_client(special_values_run, tmp_path):
    """The same records as plain-jax scripts (a run of jaxlib's built-in client)."""
    _, doc = special_values_run
    builtin = {**doc, "platform": {**doc["platform"], "loaded": {"how": "built-in factory"}}}
    (tmp_path / repro.SHARED).write_text(repro.shared())
    for record in doc["failures"]:
        text = repro.script(_passing(record), builtin)
        assert "pypjrt" not in text.split("DATA = ")[1]
        script = tmp_path / repro.file_name(record["nodeid"])
        script.write_text(text)
        proc = _fresh_run(script, tmp_path)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "cpu:1" in proc.stdout  # every device of --cpu-devices


def test_repro_names_and_bad_input(tmp_path):
    assert repro.file_name("conformance/test_x.py::test_y[a/b c]") == "test_x.test_y-a_b_c.py"
    long = repro.file_name("conformance/test_x.py::test_y[" + "a" * 300 + "]")
    assert len(long) == 103 and long != repro.file_name("conformance/test_x.py::test_y["
                                                        + "a" * 299 + "b]")
    for bad in ("", None):
        with pytest.raises(ValueError, match="argument 'nodeid'"):
            repro.file_name(bad)
    with pytest.raises(TypeError, match="'record'"):
        repro.script("test_x", {})
    quoted = {"nodeid": 'conformance/test_x.py::test_y["""\\N]', "status": "fail_wrong_result",
              "program_text": "module { ''' \\\\ }", "arrays": {
                  "inputs": [reproduction.encode_array(np.zeros(2))],
                  "expected": reproduction.encode_array(np.zeros(2)),
                  "assertion": "assert_exact"}}
    namespace: dict = {}
    text = repro.script(quoted, {})
    exec(compile(text.split("\ndef decode")[0], "repro", "exec"), namespace)  # header + DATA
    assert namespace["DATA"]["program"] == quoted["program_text"]
    crash = {"nodeid": "conformance/test_multi_process.py::test_z", "status": "crash",
             "area": "multi_process", "command": "pytest ..."}
    assert repro.kind(crash) is None and repro.script(crash, {}) is None
    written = repro.write({"failures": [crash]}, tmp_path)
    assert written == ["repro/README.md"]
    assert "none: no program" in (tmp_path / "repro" / "README.md").read_text()
    assert repro.write({"failures": []}, tmp_path / "empty") == []


def test_healthy_round_trips_are_correct_through_the_c_api():
    """No false positive: 0-d, empty, 2-D, bool, bfloat16, complex and int4 inputs come
    back bit exact from a healthy plugin."""
    import ml_dtypes
    arrays = [np.float32(2.5), np.zeros((2, 0), np.int8), np.arange(6.0).reshape(2, 3),
              np.array([True, False]), np.array([1.5, -0.0], ml_dtypes.bfloat16),
              np.array([1 + 2j], np.complex64), np.array([-8, 7], ml_dtypes.int4)]
    plan = {"check": "transfer", "library_path": LIBRARY, "options": {"cpu_device_count": 2},
            "arrays": {"inputs": [reproduction.encode_array(a) for a in arrays]}}
    verdict, detail = capi.run(plan)
    assert verdict == "correct", detail


def test_a_result_converted_by_the_test_is_compared_in_the_converted_dtype():
    """argmax's program returns int64 and the test asserts on int32: the C API re-run
    applies the same conversion, or says it cannot compare (never a dtype 'wrong')."""
    from conformance.capi import child

    out = np.array(7, np.int64)
    same, why = child._as_recorded(out, reproduction.encode_array(np.int32(7)))
    assert why is None and same.dtype == np.int32 and same == 7
    kept, why = child._as_recorded(out, reproduction.encode_array(np.int64(7)))
    assert why is None and kept is out
    _, why = child._as_recorded(out, reproduction.encode_array(np.float32(7)))
    assert why is not None and "float32" in why and "int64" in why
    kept, why = child._as_recorded(out, None)
    assert why is None and kept is out
