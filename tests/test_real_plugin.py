"""A real PJRT plugin loaded from its shared library, end to end.

The library is XLA's CPU PJRT plugin as built by zml/pjrt-artifacts, shipped
unmodified in the ``fastatomstruct-xla-cpu`` wheel (the ``test`` extra), or any
plugin library named by ``PJRT_CONFORMANCE_TEST_PLUGIN`` (a CPU plugin whose
client reports platform ``cpu``).
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from runtime import xla_bridge, xla_client
from runtime._plugins import loaded_library  # private: the header the loader probed
from tests.bundle_helpers import clean


def _library():
    path = os.environ.get("PJRT_CONFORMANCE_TEST_PLUGIN")
    if path:
        return path
    if importlib.util.find_spec("fastatomstruct_xla_cpu") is None:
        return None
    import fastatomstruct_xla_cpu

    return fastatomstruct_xla_cpu.library_path()


LIBRARY = _library()
pytestmark = pytest.mark.skipif(
    LIBRARY is None, reason="no real PJRT plugin library: pip install -e '.[test]' (installs "
                            "fastatomstruct-xla-cpu) or set PJRT_CONFORMANCE_TEST_PLUGIN")


def test_load_by_path_create_client_and_round_trip():
    name = f"real-{uuid.uuid4().hex[:8]}"
    xla_client.load_pjrt_plugin_dynamically(name, LIBRARY)
    client = xla_client.make_c_api_client(name, {"cpu_device_count": 3})
    assert client.platform == "cpu"
    assert client.local_device_count() == 3               # the create option took effect
    assert xla_bridge.using_pjrt_c_api(client)
    lib = loaded_library(name)
    assert xla_bridge.backend_pjrt_c_api_version(client) == lib.api_version
    for device in client.local_devices():
        host = np.arange(12, dtype=np.float32).reshape(3, 4) * (device.id + 1)
        out = np.asarray(client.buffer_from_pyval(host, device))
        np.testing.assert_array_equal(out, host)


def test_cli_certifies_a_selection_through_the_plugin(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--plugin-library", LIBRARY, "--plugin-options", '{"cpu_device_count": 2}',
         "--output", "out", "--profile", "none", "--", "-k",
         "test_registry or test_device_ids_unique or (test_round_trip_bit_exact and float32)"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]   # no profile
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert clean(doc) and doc["summary"]["collected"] >= 8
    p = doc["platform"]
    with open(LIBRARY, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    assert p["loaded"]["how"] == "PJRT C API plugin"
    assert p["loaded"]["source"] == "--plugin-library"
    assert p["loaded"]["library_sha256"] == digest
    assert p["loaded"]["options"] == {"cpu_device_count": 2}
    assert p["local_device_count"] == 2 and p["using_pjrt_c_api"] is True
    assert len(p["pjrt_c_api_version"]) == 2 and len(p["framework_pjrt_c_api_version"]) == 2
    md = (tmp_path / "out" / "report.md").read_text()
    assert f"sha256 `{digest}`" in md and "- PJRT C API: plugin 0." in md
    owner = _owner()
    if owner is not None:  # the title names the plugin's package and version
        assert p["plugin_package"] == {"distribution": owner.metadata["Name"],
                                       "version": owner.version, "compatible": None}
        html = (tmp_path / "out" / "report.html").read_text()
        assert f"{owner.metadata['Name']}</b> {owner.version}" in html
        assert "version not recorded" not in html


def _owner():
    """The installed distribution that ships LIBRARY (None for a library of
    PJRT_CONFORMANCE_TEST_PLUGIN outside any), found the slow way: every file it lists."""
    import importlib.metadata

    for dist in importlib.metadata.distributions():
        if any(os.path.realpath(dist.locate_file(f)) == os.path.realpath(LIBRARY)
               for f in dist.files or ()):
            return dist
    return None


def test_plugin_reporting_another_platform_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--plugin-library", LIBRARY, "--expect-platform", "cuda", "--output", "out"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "reports platform 'cpu'" in proc.stdout + proc.stderr


def test_plugin_path_spelled_with_dot_dot(tmp_path):
    # The guard compares the library it loaded with --plugin-library: a path with
    # "..", or relative to the working directory, names the same library.
    folder = os.path.dirname(LIBRARY)
    roundabout = os.path.join(folder, "..", os.path.basename(folder), os.path.basename(LIBRARY))
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--plugin-library", roundabout, "--output", "out", "--profile", "none", "--",
         "-k", "test_registry"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]   # no profile
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    # the bundle names the library by its package, as it names every local file
    from conformance.certification import local_paths
    assert doc["platform"]["loaded"]["library_path"] == \
        local_paths.describe_library(os.path.abspath(roundabout))
