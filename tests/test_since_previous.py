"""report.json ``since_previous``: a run beside an earlier bundle of the same backend says
what changed since it (conformance/certification/compare/since_previous.py), and the
report renders it; the first run of a backend has none, and a tampered earlier bundle is
never compared with."""

import json
import subprocess
import sys

from conformance.certification.compare import since_previous


def _run(out, *select):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
                           "-n", "0", "--cpu-devices", "2", "--profile", "none",
                           "--output", str(out), "--", "-k", " or ".join(select)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((out / "report.json").read_text())


def test_the_second_run_says_what_changed_since_the_first(tmp_path):
    reports = tmp_path / "reports" / "cpu"
    first = _run(reports / "20990101T000000Z", "test_device_ids_unique")
    assert first.get("since_previous") is None
    second = _run(reports / "20990102T000000Z", "test_device_ids_unique",
                  "test_local_devices_partition_the_global_list")
    prev = second["since_previous"]
    assert prev["bundle"] == "20990101T000000Z" and prev["verdict"] == first["verdict"]
    assert prev["added"] == second["summary"]["reported"] - first["summary"]["reported"] > 0
    assert prev["new_failure_count"] == 0 and prev["removed"] == 0
    md = (reports / "20990102T000000Z" / "report.md").read_text()
    assert "## Changes since the previous bundle of this backend" in md
    assert "Against `20990101T000000Z`" in md and str(tmp_path) not in md
    html = (reports / "20990102T000000Z" / "report.html").read_text()
    assert 'id="since-previous"' in html
    check = subprocess.run([sys.executable, "-m", "conformance.cli", "verify",
                            str(reports / "20990102T000000Z")], capture_output=True, text=True,
                           timeout=300)
    assert check.returncode in (0, 1), check.stdout + check.stderr
    # a tampered earlier bundle is not a previous bundle
    (reports / "20990101T000000Z" / "report.md").write_text("tampered\n")
    assert since_previous.previous(reports / "20990102T000000Z", second) is None
