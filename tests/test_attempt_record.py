"""reports/<backend>/attempt.json is committed beside the bundles: it names no local path."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.certification import local_paths
from conformance.certification.results import attempt


def test_attempt_record_redacts_library_command_and_error(tmp_path):
    site = Path(sys.prefix) / "lib" / "python3" / "site-packages"
    library = str(site / "fastatomstruct_xla_cpu" / "libpjrt_cpu.so")
    doc = attempt.record(backend="cpu-pjrt-plugin", exit_code=2, seconds=3.0,
                         library=library,
                         command=f"pjrt-conformance run --plugin-library {library} "
                                 f"--output {tmp_path}/out",
                         error_text=f"OSError: {tmp_path}/x.so: cannot open\n")
    assert doc["library"] == "fastatomstruct_xla_cpu/libpjrt_cpu.so"
    assert "fastatomstruct_xla_cpu/libpjrt_cpu.so" in doc["command"]
    for field in ("library", "command", "error"):
        assert not local_paths.FOUND.search(doc[field]), (field, doc[field])
    assert doc["error"].startswith("OSError: <redacted>")


def test_committed_attempt_records_name_no_local_path():
    reports = Path(__file__).resolve().parent.parent / "reports"
    for path in sorted(reports.glob("*/attempt.json")):
        text = path.read_text()
        assert not local_paths.FOUND.search(text), f"{path}: {local_paths.FOUND.search(text)}"
