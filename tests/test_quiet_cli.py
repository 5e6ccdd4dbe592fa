"""`pjrt-conformance run` is quiet: one verdict line, no pytest-xdist "bringing up nodes"
line per worker, no assert-rewrite warnings, and the area table's total agrees with the
verdict line's counts."""

import re
import subprocess
import sys


def test_a_run_prints_one_verdict_and_no_noise(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
                           "-n", "2", "--profile", "none", "--output", str(tmp_path / "b"),
                           "--", "-k", "test_registry"],
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]   # --profile none: not a certification
    assert "bringing up nodes" not in out, out
    assert "PytestAssertRewriteWarning" not in out and "warnings summary" not in out, out
    assert out.count("NOT A CERTIFICATION") == 1, out
    assert "pjrt-conformance verdict:" not in out, out
    total = re.search(r"^total\s+(\d+)/(\d+)\s+pass (\d+)", out, re.M)
    verdict = re.search(r"\((\d+) collected, (\d+) pass\)", out)
    assert total and verdict, out
    assert total.group(2) == verdict.group(1) and total.group(3) == verdict.group(2), out
