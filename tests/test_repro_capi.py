"""Standalone reproductions of a C API plugin's failures run on that plugin: a
partitioned program partitioned through pypjrt (not on jaxlib's client), a program of
several outputs compared at the output the test compared, every device id encoded as a
varint, and an import failure of numpy/ml_dtypes is exit 2 with one line."""

import base64
import os
import subprocess
import sys

import numpy as np
import pytest

from conformance.helpers import partitioned
from conformance.certification.rendering import repro
from conformance.helpers import assertions
from conformance.helpers.reproduction import encode_array, of, reproduction

try:
    import fastatomstruct_xla_cpu
    LIBRARY = fastatomstruct_xla_cpu.library_path()
except Exception:  # noqa: BLE001 - any failure: no real plugin here
    LIBRARY = None
needs_plugin = pytest.mark.skipif(LIBRARY is None or not os.path.isfile(LIBRARY),
                                  reason="fastatomstruct-xla-cpu (a real PJRT plugin) missing")

#: 2 x + 1 over a mesh of 2 devices, input and output split along "x" (jax's lowering).
SHARDED = """module @jit__lambda attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.add %1, %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
"""
PLACEMENT = {"mesh_shape": [2], "axis_names": ["x"], "device_ids": [0, 1], "partitions": 2,
             "in_specs": [["x"]], "out_spec": ["x"]}
#: (x + 1, x): two outputs of the same dtype and shape.
TWO_OUTPUTS = """module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<2xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2xf32>
    return %1, %arg0 : tensor<2xf32>, tensor<2xf32>
  }
}
"""


def _doc(library=LIBRARY):
    return {"platform": {"name": "cpu", "loaded": {
        "how": "PJRT C API plugin", "source": "--plugin-library",
        "options": {"cpu_device_count": 2}, "library_path": library}},
        "cpu_devices": 2, "environment": {"jax": "0.10.2"}}


def _record(program, x, expected, sharding=None, output_index=None):
    arrays = {"inputs": [encode_array(x)], "expected": encode_array(expected),
              "observed": encode_array(expected), "assertion": "assert_bitwise_equal",
              "options": {}}
    if sharding:
        arrays["sharding"] = sharding
    if output_index is not None:
        arrays["output_index"] = output_index
    return {"nodeid": "conformance/test_x.py::test_y", "status": "fail_wrong_result",
            "program_text": program, "arrays": arrays}


def _run_script(tmp_path, record, *args, env=None):
    """Write the bundle's reproduction of ``record`` and run it from another folder,
    isolated from this project (``python -I``)."""
    repro.write({"failures": [record], **_doc()}, tmp_path)
    script = tmp_path / "repro" / repro.file_name(record["nodeid"])
    env = env or {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([sys.executable, *([] if "PYTHONPATH" in env else ["-I"]),
                           str(script), *args], cwd="/", env=env, capture_output=True,
                          text=True, timeout=300)


@needs_plugin
def test_a_capi_partitioned_failure_is_reproduced_on_the_plugin(tmp_path):
    x = np.arange(4, dtype=np.float32)
    done = _run_script(tmp_path, _record(SHARDED, x, 2 * x + 1, PLACEMENT),
                       "--plugin-library", LIBRARY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"plugin library: {LIBRARY} (from --plugin-library argument)" in done.stdout
    assert "through its C API partitioned: num_partitions=2" in done.stdout, done.stdout
    assert "jax" not in done.stdout, done.stdout
    # the plugin's result against an expected value it does not give: present
    wrong = _run_script(tmp_path, _record(SHARDED, x, 2 * x + 2, PLACEMENT))
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert f"plugin library: {LIBRARY} (from installed package " in wrong.stdout, wrong.stdout
    assert "4 of 4 elements wrong" in wrong.stdout, wrong.stdout


@needs_plugin
def test_the_compared_output_of_several_is_the_recorded_one(tmp_path):
    """(x + 1, x) where the test compared output 0 with x: output 1 equals x, yet the
    defect is present. Without the recorded index: cannot decide (exit 2)."""
    x = np.array([1.0, 2.0], np.float32)
    present = _run_script(tmp_path, _record(TWO_OUTPUTS, x, x, output_index=0))
    assert present.returncode == 1, present.stdout + present.stderr
    assert "output 0: 2 of 2 elements wrong" in present.stdout, present.stdout
    fixed = _run_script(tmp_path, _record(TWO_OUTPUTS, x, x + 1, output_index=0))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    unknown = _run_script(tmp_path, _record(TWO_OUTPUTS, x, x))
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    ours = [line for line in unknown.stderr.splitlines()  # not the plugin's own log
            if line.startswith("cannot run this reproduction: ")]
    assert len(ours) == 1 and "Traceback" not in unknown.stderr, unknown.stderr
    assert "cannot decide which output the test compared" in ours[0]


def test_recording_keeps_the_compared_output_index():
    x = np.array([1.0, 2.0], np.float32)
    with pytest.raises(AssertionError) as caught:
        with reproduction("two outputs", program=TWO_OUTPUTS, inputs=[x], output=1):
            assertions.assert_bitwise_equal(x, x + 1, call="out[1]")
    arrays = of(caught.value).arrays()
    assert arrays["output_index"] == 1
    text = repro.script(_record(TWO_OUTPUTS, x, x, output_index=1), _doc("/x/lib.so"))
    assert '"output_index": 1' in text


def test_device_ids_are_varints_from_one_encoder(tmp_path):
    """A device id >= 128 is one varint (2 bytes), as the suite's encoder writes it: the
    script's run_capi uses the copied encoder, not bytes([id])."""
    (tmp_path / repro.SHARED).write_text(repro.shared())
    import importlib.util
    spec = importlib.util.spec_from_file_location("pjrt_repro_da", tmp_path / repro.SHARED)
    shared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shared)
    assert shared.device_assignment([200, 1]) == partitioned.device_assignment([200, 1])
    seen = []

    class Opts:
        def __init__(self, device_assignment):
            seen.append(device_assignment)

    class Devices(list):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Dev:
        id = 200

    class Client:
        def devices(self):
            return Devices([Dev()])

        def compile(self, program, options):
            raise RuntimeError("stop here")

    fake = type("pypjrt", (), {"CompileOptions": Opts})
    shared.capi_client = lambda argv: (fake, None, Client())
    shared.DATA = {}
    with pytest.raises(shared.CannotRun, match="stop here"):
        next(shared.run_capi("program", [], []))
    assert seen == [partitioned.device_assignment([200])]
    assert seen[0].endswith(b"\x1a\x03\x08\xc8\x01")


def test_a_broken_numpy_import_is_exit_2_with_one_line(tmp_path):
    """numpy or ml_dtypes raising AttributeError on import (a binary mismatch) is not the
    defect: exit 2, one line, no traceback."""
    fake = tmp_path / "site"
    (fake / "ml_dtypes").mkdir(parents=True)
    (fake / "ml_dtypes" / "__init__.py").write_text(  # as a mismatched extension does
        "import sys\nprint('Traceback (most recent call last): ...', file=sys.stderr)\n"
        "raise AttributeError('_ARRAY_API not found')\n")
    x = np.array([1.0], np.float32)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(fake)}
    done = _run_script(tmp_path, _record(TWO_OUTPUTS, x, x), env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "AttributeError: _ARRAY_API not found" in done.stderr, done.stderr


def test_a_jax_partitioned_failure_still_runs_on_jax(tmp_path):
    """Without a C API plugin the partitioned program runs on jax's client, assembled by
    the copied :func:`conformance.helpers.partitioned.assemble`."""
    x = np.arange(4, dtype=np.float32)
    doc = {"platform": {"name": "cpu"}, "cpu_devices": 2, "environment": {"jax": "0.10.2"}}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    for expected, status in ((2 * x + 1, 0), (2 * x + 2, 1)):
        record = _record(SHARDED, x, expected, PLACEMENT)
        repro.write({"failures": [record], **doc}, tmp_path)
        done = subprocess.run([sys.executable, "-I", str(tmp_path / "repro" / repro.file_name(
            record["nodeid"]))], cwd="/", env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == status, done.stdout + done.stderr
        assert "cpu client partitioned: num_partitions=2" in done.stdout, done.stdout
