"""Usage errors of ``pjrt-conformance run`` (issue 27 item 8): each is one line naming
the option, exit 2, and leaves nothing in --output, so the corrected command runs."""

import subprocess
import sys

import pytest

from conformance.certification.catalog import defect_catalog
from conformance.session import results_log


def _run(out, *extra, pytest_args=("-k", "test_registry")):
    return subprocess.run([sys.executable, "-m", "conformance.cli", "run", *extra,
                           "--output", str(out), "--", *pytest_args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("extra, pytest_args, message", [
    (("--platform", "bogus"), (), "--platform=bogus"),
    (("--platform", "cpu", "--defects", "EMPTY"), (), "no .toml catalog file"),
    (("--platform", "cpu"), ("--hypothesis-profile", "bogus"),
     "--hypothesis-profile=bogus: no such Hypothesis profile"),
])
def test_a_usage_error_is_one_line_and_leaves_no_run_behind(tmp_path, extra, pytest_args,
                                                            message):
    (tmp_path / "empty").mkdir()
    extra = tuple(str(tmp_path / "empty") if a == "EMPTY" else a for a in extra)
    out = tmp_path / "out"
    proc = _run(out, *extra, pytest_args=("-k", "test_registry", *pytest_args))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = proc.stdout + proc.stderr
    assert message in text and "INTERNALERROR" not in text and "Traceback" not in text, text
    assert not out.exists(), sorted(p.name for p in out.iterdir())   # re-running is allowed
    (tmp_path / "given").mkdir()                  # a directory the user made stays, empty
    assert _run(tmp_path / "given", *extra, pytest_args=("-k", "test_registry",
                                                         *pytest_args)).returncode == 2
    assert (tmp_path / "given").is_dir() and not any((tmp_path / "given").iterdir())


def test_defects_of_a_directory_without_a_catalog_is_an_error(tmp_path):
    """It silently turned the catalog off; 'none' is the way to ask for that."""
    with pytest.raises(ValueError, match="no .toml catalog file in this directory"):
        defect_catalog.load([str(tmp_path)])
    assert defect_catalog.load(["none"]) == []
    assert defect_catalog.load([str(defect_catalog.shipped_dir())])   # the shipped dir loads


def test_discard_keeps_a_run_that_has_results(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / results_log.RUN_FILE).write_text("{}")
    (out / results_log.LOG_FILE).write_text(
        '{"$report_type": "TestReport", "nodeid": "t.py::a", "location": ["t.py", 0, "a"], '
        '"keywords": {}, "outcome": "passed", "longrepr": null, "when": "setup", '
        '"user_properties": [], "sections": [], "duration": 0.1}\n')
    assert not results_log.discard_unstarted(out, remove_dir=True)   # finalize needs it
    assert (out / results_log.RUN_FILE).exists()
    (out / results_log.LOG_FILE).write_text("")
    assert results_log.discard_unstarted(out, remove_dir=True) and not out.exists()
