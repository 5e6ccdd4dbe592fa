"""``pjrt-conformance`` exit codes, ``--platform`` errors and the backend registry."""

import json
import subprocess
import sys

import pytest

from conformance import cli
from runtime import xla_bridge
from tests.bundle_helpers import clean
from tests.mutants.runner import pytester_run


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_cli_certifies_a_passing_selection(tmp_path):
    proc = _cli("run", "--platform", "cpu", "--cpu-devices", "2", "--output", "out", "--profile", "none", "--",
                "-k", "test_device_counts or test_device_ids_unique", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]   # no profile
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert clean(doc) and doc["summary"]["collected"] == 2
    assert doc["platform"]["device_count"] == 2
    assert "NOT A CERTIFICATION" in proc.stdout and "report bundle:" in proc.stdout


def test_cli_random_seed_job_prints_and_records_its_seed(tmp_path):
    """The scheduled random-seed job: nightly profile, a fresh seed printed before and
    after the run and recorded in the report, so a failure is reproducible from it."""
    proc = _cli("run", "--random-seed", "--platform", "cpu", "--cpu-devices", "2", "--output",
                "out", "--profile", "none", "--", "-k",
                "test_reorder_shards_preserves_data", cwd=tmp_path)
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    seed = doc["hypothesis"]["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**32, doc["hypothesis"]
    assert doc["hypothesis"]["profile"] == "nightly" and not doc["hypothesis"]["derandomize"]
    assert f"--hypothesis-seed={seed}" in proc.stdout, proc.stdout[-2000:]
    assert proc.returncode == 1 and doc["summary"]["collected"] == 1, proc.stdout[-2000:]
    clash = _cli("run", "--random-seed", "--cpu-devices", "1", "--", "--hypothesis-seed=3",
                 cwd=tmp_path)
    assert clash.returncode == 2 and "exclude each other" in clash.stderr


def test_cli_default_output_dir(tmp_path):
    proc = _cli("run", "--cpu-devices", "1", "--profile", "none", "--", "-k",
                "test_device_ids_unique", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:]   # no profile: not a certification
    (report,) = (tmp_path / "reports" / "cpu").glob("*/report.json")
    assert clean(json.loads(report.read_text()))


def test_cli_not_certified_exit_1(tmp_path):
    proc = _cli("run", "--cpu-devices", "1", "--output", "o", "--", "-k", "no_such_test_xyz",
                cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "no test was collected" in proc.stdout


@pytest.mark.parametrize("args,fragment", [
    (["run", "--platform", "nope"], "Unknown platform 'nope'. Available: ['cpu']"),
    (["run", "--platform", "cuda"], "no cuda PJRT plugin is installed. Available: ['cpu']"),
    (["run", "--platform", "cuda"], "Install jax-cuda13-pjrt"),
    (["run", "--cpu-devices", "0"], "--cpu-devices=0: accepted: an int from 1 to 1024"),
    (["frobnicate"], "invalid choice"),
    (["run", "--platform", "nope"], "load its plugin with --plugin-library=PATH, or pass "
                                    "--platform=cpu"),
])
def test_cli_usage_errors_exit_2(tmp_path, args, fragment):
    proc = _cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-1000:], proc.stderr[-1000:])
    assert fragment in proc.stdout + proc.stderr


def test_pytest_unknown_platform_fails_clearly(pytester):
    pytester.makepyfile(test_a="def test_a(client):\n    pass\n")
    result = pytester_run(pytester, "--platform=cuda", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--platform=cuda: no cuda PJRT plugin is installed. "
                                 "Available: ?'cpu'?. Install jax-cuda13-pjrt*"])


def test_registry_validation_and_errors(registry):
    with pytest.raises(TypeError, match="argument 'factory'"):
        xla_bridge.register_backend_factory("x-bad", 42)
    with pytest.raises(TypeError, match="argument 'name'"):
        xla_bridge.register_backend_factory("", lambda: None)
    with pytest.raises(RuntimeError, match=r"Unknown platform 'nope'\. Available: \["):
        xla_bridge.get_backend("nope")


def test_registry_factory_failure_and_reregistration(registry):
    def boom():
        raise OSError("no device node")
    xla_bridge.register_backend_factory("x-boom", boom, fail_quietly=True, priority=-100)
    with pytest.raises(RuntimeError, match="Backend 'x-boom' failed to initialize: OSError: "
                                           "no device node"):
        xla_bridge.get_backend("x-boom")
    assert "no device node" in xla_bridge.backend_errors()["x-boom"]
    live = xla_bridge.backends()  # a quiet failure does not stop the others
    assert "x-boom" not in live and "cpu" in live
    with pytest.raises(RuntimeError, match="already initialized"):
        xla_bridge.register_backend_factory("cpu", lambda: None)


def test_a_plugin_bundle_goes_under_the_plugin_name(tmp_path):
    lib = tmp_path / "fastatomstruct_xla_cpu" / "libpjrt_cpu.so"
    out = cli.default_output("cpu", str(lib))
    assert out.parts[:2] == ("reports", "cpu-fastatomstruct-xla-cpu"), out
    assert cli.default_output("cpu").parts[:2] == ("reports", "cpu")
