"""Standalone reproductions run on the reader's machine: the plugin library is found
in the documented order, the exit status follows its contract with one line and no
traceback, float values are shown with their bits, and a partitioned program is
reproduced partitioned."""

import importlib.util
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from conformance.certification.rendering import repro

PROGRAM = ("module @m {\n  func.func public @main(%a: tensor<f32>) -> tensor<f32> {\n"
           "    return %a : tensor<f32>\n  }\n}\n")
ONE = {"dtype": "float32", "shape": [], "base64": "AACAPw=="}  # 1.0


def _doc(library="/x/site-packages/fake_plugin_pkg/libfake.so"):
    return {"platform": {"name": "cpu", "loaded": {
        "how": "PJRT C API plugin", "source": "--plugin-library", "options": {},
        "library_path": library}}, "cpu_devices": 8, "environment": {"jax": "0.10.2"}}


def _record(program=PROGRAM, sharding=None):
    arrays = {"inputs": [ONE], "expected": ONE, "assertion": "assert_bitwise_equal",
              "options": {}}
    if sharding:
        arrays["sharding"] = sharding
    return {"nodeid": "conformance/test_x.py::test_y", "status": "fail_wrong_result",
            "program_text": program, "arrays": arrays}


@pytest.fixture
def shared(tmp_path):
    (tmp_path / repro.SHARED).write_text(repro.shared())
    spec = importlib.util.spec_from_file_location("pjrt_repro_under_test",
                                                  tmp_path / repro.SHARED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.DATA = {"library": {"package": "fake_plugin_pkg", "file": "libfake.so"}}
    return module


def test_argument_beats_environment_beats_package(shared, tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "fake_plugin_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name in ("libfake.so", "arg.so", "env.so"):
        (pkg / name).write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    env = {shared.ENV: str(pkg / "env.so")}
    argv = ["--plugin-library", str(pkg / "arg.so")]
    assert shared.find_library(argv, env) == (str(pkg / "arg.so"), "--plugin-library argument")
    assert shared.find_library([f"--plugin-library={pkg / 'arg.so'}"], env)[0] == \
        str(pkg / "arg.so")
    assert shared.find_library([], env) == (str(pkg / "env.so"),
                                            f"environment variable {shared.ENV}")
    assert shared.find_library([], {}) == (str(pkg / "libfake.so"),
                                           "installed package fake_plugin_pkg")
    with pytest.raises(shared.CannotRun, match="not a file"):
        shared.find_library(["--plugin-library", str(tmp_path / "missing.so")], env)


def test_no_library_found_is_exit_2_with_one_line(tmp_path):
    repro.write({"failures": [_record()], **_doc()}, tmp_path)
    script = tmp_path / "repro" / "test_x.test_y.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd="/", timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "no plugin library" in done.stderr and "fake_plugin_pkg" in done.stderr


def test_exit_codes_are_documented_and_kept(shared, tmp_path):
    text = repro.script(_record(), _doc())
    for line in ("0  fixed", "1  present", "2  cannot run", "PJRT_CONFORMANCE_PLUGIN_LIBRARY",
                 "--plugin-library"):
        assert line in text
    assert "/x/site-packages" not in text
    shared.DATA = {"check": "lifetime"}

    def boom():
        raise RuntimeError("while setting up\nsecond line")
    shared.main = lambda argv: boom()
    assert shared.run({"check": "x"}, []) == 2
    shared.main = lambda argv: 1
    assert shared.run({"check": "x"}, []) == 1
    readme = (repro.write({"failures": [_record()], **_doc()}, tmp_path) and
              (tmp_path / "repro" / "README.md").read_text())
    assert all(f"- {k}: " in readme for k in (0, 1, 2))


def test_checked_computation_error_is_cannot_run(shared):
    with pytest.raises(shared.CannotRun, match="RuntimeError while compiling"):
        shared.checked(lambda: (_ for _ in ()).throw(RuntimeError("x")), "compiling")


def test_floats_show_their_bits(shared, capsys):
    nan = np.array([np.nan], ml_dtypes.bfloat16)
    assert shared.bits(nan, (0,)) == "0x7fc0"
    want = np.array([0x7F800001], np.uint32).view(np.float32)
    out = np.array([0x7FC00001], np.uint32).view(np.float32)
    assert shared.compare("here", [want], out, want, "assert_bitwise_equal", {})
    printed = capsys.readouterr().out
    assert "expected np.float32(nan) (0x7f800001) observed np.float32(nan) (0x7fc00001)" \
        in printed
    f8 = np.array([0x7F], np.uint8).view(ml_dtypes.float8_e4m3fn)
    assert shared.bits(f8, (0,)) == "0x7f"


def test_partitioned_program_is_reproduced_partitioned():
    sharding = {"mesh_shape": [2, 4], "axis_names": ["x", "y"],
                "device_ids": [3, 1, 0, 2, 7, 6, 5, 4], "partitions": 8,
                "in_specs": [["x", None]], "out_spec": []}
    program = PROGRAM.replace("module @m {", "module @m attributes "
                              "{mhlo.num_partitions = 8 : i32} {")
    text = repro.script(_record(program, sharding), _doc(None))
    assert '"partitions": 8' in text and '"device_ids": [' in text
    assert "8 partitions over devices" in text
    assert repro.script(_record(program), _doc(None)) is None  # placement not recorded
    assert "run_partitioned" in repro.shared() and \
        "opts.num_partitions = 1, len(order)" in repro.shared()
