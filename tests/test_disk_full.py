"""A full disk during a run (issue 27 item 8): it gave tracebacks and exit 1 (read as
"not certified"); now one line, exit 5 (``disk_full.EXIT_WRITE_FAILED``), and the results
written so far stay finalizable. ENOSPC is simulated (a tmpfs needs root): a plugin
makes pytest-reportlog's writes fail after some lines, and the bundle's writes fail."""

import json
import os
import subprocess
import sys

import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.session import disk_full

FULL_DISK = """
import errno, os
from pytest_reportlog import plugin as _reportlog
from conformance.certification.bundle import bundle_files

_written = [0]
_original = _reportlog.ReportLogPlugin._write_json_data


def _write(self, data):
    _written[0] += 1
    if _written[0] > int(os.environ["FULL_DISK_AFTER_LINES"]):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self._log_path))
    return _original(self, data)


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "report.json")


_reportlog.ReportLogPlugin._write_json_data = _write
bundle_files.write = _no_space
"""


@pytest.mark.parametrize("after", [25, 10**6], ids=["mid-run", "at-the-bundle"])
def test_a_full_disk_is_one_line_exit_5_and_finalizable(tmp_path, capsys, after):
    (tmp_path / "full_disk_plugin.py").write_text(FULL_DISK)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]), FULL_DISK_AFTER_LINES=str(after))
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu", "--cpu-devices",
         "1", "--profile", "none", "--output", str(out), "--", "-k",
             "test_registry or test_primitive_type_round_trip",
         "-p", "full_disk_plugin"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600)
    text = proc.stdout + proc.stderr
    assert proc.returncode == disk_full.EXIT_WRITE_FAILED == 5, text[-3000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    assert "No space left on device" in text and f"pjrt-conformance finalize {out}" in text
    assert not (out / bundle_files.MANIFEST).exists()
    # the space is free again (no plugin in this process): the kept results are a bundle
    assert cli.main(["finalize", str(out)]) == 0
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    doc = json.loads((out / "report.json").read_text())
    assert 0 < doc["summary"]["reported"] <= doc["summary"]["collected"]
    if after < 10**6:   # stopped mid-run: fewer results than tests
        assert doc["summary"]["reported"] < doc["summary"]["collected"]
