"""Self-tests of the project (not of a backend)."""

import json
from pathlib import Path

import pytest

BROKEN_BACKENDS = Path(__file__).with_name("broken_backends.py")


@pytest.fixture
def run_suite(pytester):
    """Run the installed conformance suite in a child pytest against a registered backend.

    Returns (RunResult, report dict).
    """
    pytester.makeconftest(BROKEN_BACKENDS.read_text())

    def run(platform: str, *select: str):
        out = pytester.path / "report"
        result = pytester.runpytest_subprocess(
            "--pyargs", "conformance", f"--platform={platform}", "--cpu-devices=2",
            "--expect-platform=cpu",
            f"--report-dir={out}", "-p", "no:cacheprovider", *select)
        doc = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() \
            else None
        return result, doc
    return run
