"""A second Ctrl-C while a cancelled run writes its bundle (issue 27 item 8): it gave
tracebacks and no bundle; now it prints one line and the bundle is written and verifies."""

import json
import signal
import time

import pytest

from conformance.certification.bundle import bundle_files
from conformance.processes import lifetime
from tests.test_run_survival import _start_slow_run, _statuses


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_second_cancel_still_leaves_a_verifiable_bundle(pytester, monkeypatch, second):
    proc, out = _start_slow_run(pytester, monkeypatch)
    try:
        proc.send_signal(signal.SIGINT)
        for _ in range(20):                 # keep cancelling while the bundle is written
            time.sleep(0.05)
            if proc.poll() is not None:
                break
            proc.send_signal(second)
        output = proc.communicate(timeout=120)[0]
    finally:
        proc.kill()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert "Traceback" not in output and "KeyboardInterrupt\n" not in output, output[-3000:]
    assert output.count(lifetime.ALREADY_CANCELLING) <= 1, output[-3000:]
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems
    doc = json.loads((out / "report.json").read_text())
    assert _statuses(doc) == {"test_a": "pass", "test_b": "pass"}
    assert doc["interrupted"] == "cancelled by SIGINT"
