"""Crash isolation and known-failure files behave as documented."""

import pytest

from conformance.session import backend
from conformance.processes import isolation
from conformance.certification.catalog import known_failures
from conformance.helpers.assertions import BackendCrash


def _run(snippet, **kw):
    return isolation.run_snippet(snippet, spec=backend.BackendSpec("cpu", cpu_devices=1),
                                 device_index=0, call="snippet", **kw)


def test_crash_is_reported_not_fatal():
    with pytest.raises(BackendCrash, match="SIGSEGV"):
        _run("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")


def test_hang_is_reported():
    with pytest.raises(isolation.BackendHang, match="no result within 3 s"):
        _run("import time; time.sleep(60)", timeout=3)


def test_error_exit_carries_stderr():
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        _run("1/0")


def test_snippet_output_is_returned():
    assert "cpu" in _run("print(device.platform)")


def test_known_failures_parse_and_match(tmp_path):
    f = tmp_path / "k.txt"
    f.write_text("# comment\nconformance/test_x.py::test_a[is_ready] | jaxlib>=0 | bug 1\n"
                 "conformance/test_x.py::test_b* | * | bug 2\n")
    a, b = known_failures.parse(f)
    assert a.matches("conformance/test_x.py::test_a[is_ready]")
    assert not a.matches("conformance/test_x.py::test_a[i]")  # brackets are literal
    assert b.matches("conformance/test_x.py::test_b[cpu:0-x]") and a.applies() and b.applies()


def test_known_failures_platform_condition(tmp_path):
    f = tmp_path / "k.txt"
    f.write_text("conformance/test_x.py::t | jaxlib>=0 and platform=cpu | FTZ on cpu\n")
    (entry,) = known_failures.parse(f)
    assert entry.applies("cpu") and not entry.applies("cuda") and not entry.applies(None)


@pytest.mark.parametrize("line,fragment", [
    ("just a test id", "expected '<test id glob> | <requirement> | <reason>'"),
    ("t | jaxlib>=0 and platform= | r", "bad requirement"),
    ("t | jaxlib[extra]>=1 | r", "must be a name and a version specifier"),
    ("t | jaxlib>>1 | r", "bad requirement"),
])
def test_known_failures_reject_malformed(tmp_path, line, fragment):
    f = tmp_path / "k.txt"
    f.write_text(line + "\n")
    with pytest.raises(ValueError, match=f"k.txt:1: .*{fragment[:20]}"):
        known_failures.parse(f)


@pytest.mark.parametrize("nodeid, path", [
    ("conformance/test_x.py::test_y[a]", "/src/conformance/test_x.py"),
    ("test_x.py::test_y[a]", "/venv/lib/site-packages/conformance/test_x.py"),
    ("../venv/lib/site-packages/conformance/test_x.py::test_y[a]",
     "/venv/lib/site-packages/conformance/test_x.py"),
])
def test_known_failures_apply_whatever_the_rootdir(nodeid, path):
    """``pytest --pyargs conformance`` from another directory gives ids without the
    package's directory: the entry (a package-relative id) still marks the test xfail."""
    class Item:
        def __init__(self):
            self.nodeid, self.path, self.markers = nodeid, path, []

        def add_marker(self, marker):
            self.markers.append(marker)

    entry = known_failures.Entry("conformance/test_x.py::test_y[*]", "*", "r", "s")
    item, other = Item(), Item()
    other.nodeid = nodeid.replace("test_y", "test_z")
    known_failures.apply([item, other], [entry])
    assert [m.name for m in item.markers] == ["xfail"] and other.markers == []
