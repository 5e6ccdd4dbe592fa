"""No file of a bundle holds an absolute path of the recording machine.

The committed bundles under reports/ are scanned (compressed ``*.xz`` members
decompressed); a freshly written bundle whose report names local paths everywhere
(plugin library, command line, traceback, results log) must come out without them;
the scan itself must catch a planted path.
"""

import json
import lzma
import os
from pathlib import Path

import pytest

from conformance.certification.bundle import bundle_files
from conformance.certification import local_paths
from tests.bundle_helpers import crafted

REPORTS = Path(__file__).resolve().parents[1] / "reports"
LIB = "/work/main/.venv/lib/python3.11/site-packages/fastatomstruct_xla_cpu/libpjrt_cpu.so"


def scan(folder: Path) -> list[str]:
    """``file: line`` for every line of every file under ``folder`` (``*.xz``
    decompressed) that holds a local path (:func:`local_paths.offenders`)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        if path.suffix == ".xz":
            raw = lzma.decompress(raw)
        text = raw.decode("utf-8", errors="replace")
        found += [f"{path.relative_to(folder)}: {line}"
                  for line in local_paths.offenders(text)]
    return found


def _bundles():
    """Every committed bundle (git-tracked; every one on disk outside a checkout): README
    command 1's new bundle in a clone is the user's, checked by the fresh-bundle test."""
    from conformance import docsgen

    tracked = docsgen.committed_folders(REPORTS.parent)
    return sorted(p.parent for p in REPORTS.rglob(bundle_files.MANIFEST)
                  if tracked is None or p.parent.relative_to(REPORTS).as_posix() in tracked)


@pytest.mark.parametrize("folder", _bundles(), ids=lambda p: str(p.relative_to(REPORTS)))
def test_committed_bundle_holds_no_local_path(folder):
    found = scan(folder)
    assert not found, f"{len(found)} lines with a local path in {folder}:\n" + \
        "\n".join(found[:20])


def test_scan_catches_a_planted_path(tmp_path):
    (tmp_path / "repro").mkdir()
    (tmp_path / "repro" / "x.py").write_text("ok\nLIB = '/opt/x/lib.so'\n")
    (tmp_path / "log.xz").write_bytes(lzma.compress(b'{"path": "/home/me/a.py"}\n'))
    (tmp_path / "clean.md").write_text("package fastatomstruct_xla_cpu, libpjrt_cpu.so\n")
    assert [f.split(":")[0] for f in scan(tmp_path)] == ["log.xz", "repro/x.py"]


def _with_local_paths(doc):
    doc["command"] = f"cli.py run --output /tmp/cert/x --plugin-library {LIB}"
    doc["platform"]["loaded"] = {"how": "PJRT C API plugin", "source": "--plugin-library",
                                 "options": {}, "library_path": LIB,
                                 "library_sha256": "0" * 64}
    doc["environment"]["executable"] = "/root/venv/bin/python"
    doc["failures"] = [{
        "nodeid": "conformance/test_x.py::test_y[a]", "test_id": "test_x.py::test_y[a]",
        "area": "x", "tier": "core", "status": "fail_wrong_result", "duration_s": 0.1,
        "message": "AssertionError at /work/main/conformance/test_x.py:3",
        "traceback": 'File "/work/main/.venv/lib/python3.11/site-packages/jax/a.py"',
        "reproduction": "xc=<module 'runtime.xla_client' from '/work/main/runtime/x.py'>",
        "command": f"pytest --pyargs x --plugin-library={LIB}", "known_failure": None,
        "capability": None,
        "program_text": "module @m {\n  func.func public @main(%a: tensor<f32>) -> "
                        "tensor<f32> {\n    return %a : tensor<f32>\n  }\n}\n",
        "arrays": {"inputs": [{"dtype": "float32", "shape": [], "base64": "AACAPw=="}],
                   "expected": {"dtype": "float32", "shape": [], "base64": "AACAPw=="},
                   "assertion": "assert_bitwise_equal", "options": {}}}]
    return doc


def test_fresh_bundle_holds_no_local_path(tmp_path):
    doc = json.loads((crafted(tmp_path) / "report.json").read_text())
    out = tmp_path / "fresh"
    bundle_files.write(_with_local_paths(doc), out)
    assert (out / "repro" / "test_x.test_y-a.py").is_file()
    assert scan(out) == []
    loaded = json.loads((out / "report.json").read_text())["platform"]["loaded"]
    assert loaded["library_path"] == "package fastatomstruct_xla_cpu, libpjrt_cpu.so"
    assert loaded["library_locator"] == {"package": "fastatomstruct_xla_cpu",
                                         "file": "libpjrt_cpu.so"}
    script = (out / "repro" / "test_x.test_y-a.py").read_text()
    assert '"package": "fastatomstruct_xla_cpu"' in script


def test_redact_keeps_package_and_repository_relative_paths():
    text = local_paths.redact(f'File "{LIB}" from "/work/x/conformance/a.py" out /tmp/q')
    assert "fastatomstruct_xla_cpu/libpjrt_cpu.so" in text and "<redacted>" in text
    assert local_paths.redact(text) == text
    assert local_paths.offenders(text) == []


# -- a results log kept plain (not packed) ----------------------------------------------

def _log_with_a_corrupt_middle_line(folder: Path, nodeids: tuple[str, ...] = ()) -> bytes:
    """A log whose third line is not UTF-8 (and holds local paths), then a test report
    of each of ``nodeids`` (the results of the report it goes with: verify checks)."""
    failed = {"$report_type": "TestReport", "nodeid": "conformance/test_x.py::test_y",
              "location": ["conformance/test_x.py", 1, "test_y"], "keywords": {},
              "outcome": "failed", "when": "call", "user_properties": [], "duration": 0.1,
              "longrepr": 'File "/home/u/proj/conformance/test_x.py", line 3\nboom /opt/x',
              "sections": [["Captured stderr call", "loaded /root/venv/lib/libx.so"]]}
    clean = {"$report_type": "SessionStart", "pytest_version": "9"}
    lines = [json.dumps(clean), json.dumps(failed),
             '{"$report_type": "TestReport", "longrepr": "/home/u/secret.py cut \udcff',  # not UTF-8
             json.dumps(clean)]
    lines += [json.dumps({**failed, "nodeid": n, "outcome": "passed", "longrepr": None,
                          "sections": [], "location": [n.split("::")[0], 1, "t"]})
              for n in nodeids]
    raw = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    (folder / "results.jsonl").write_bytes(raw)
    return raw


def test_a_log_that_cannot_be_packed_is_kept_without_local_paths(tmp_path, capsys):
    """A corrupt line in the middle stops packing: the plain log stays in the bundle,
    listed in its manifest, so it is rewritten line by line (the corrupt line's text
    redacted too), every line kept in order, its mtime kept. It was kept as it was:
    tracebacks and absolute paths in a bundle."""
    from conformance.certification.results import runlog
    from conformance.session import results_log

    doc = json.loads((crafted(tmp_path / "c") / "report.json").read_text())
    out = tmp_path / "run"
    out.mkdir()
    raw = _log_with_a_corrupt_middle_line(out, tuple(r["nodeid"] for r in doc["results"]))
    assert local_paths.offenders(raw.decode("utf-8", "replace"))
    os.utime(out / runlog.LOG, ns=(10**18, 10**18))
    assert results_log.pack(out) is None
    bundle_files.write(doc, out, extra=results_log.EXTRA)
    assert "kept unpacked" in capsys.readouterr().err
    assert not (out / runlog.PACKED).exists() and (out / runlog.LOG).is_file()
    check = bundle_files.verify(out)
    assert check.valid, check.problems
    assert scan(out) == []
    kept = (out / runlog.LOG).read_bytes()
    assert (out / runlog.LOG).stat().st_mtime_ns == 10**18
    lines, old = kept.split(b"\n"), raw.split(b"\n")
    assert len(lines) == len(old) and lines[0] == old[0] and lines[3] == old[3]
    assert lines[2] == b'{"$report_type": "TestReport", "longrepr": "<redacted>/secret.py cut \xff'
    failed = json.loads(lines[1])
    assert failed["longrepr"].startswith('File "<redacted>/test_x.py", line 3')
    assert results_log.read_reports(out / runlog.LOG, dropped := [])[0].nodeid.endswith(
        "test_y") and dropped == [3]


def test_a_log_neither_packed_nor_redacted_is_no_bundle(tmp_path, monkeypatch):
    """When even the rewrite fails (no space for its copy), no bundle holds the log:
    an OSError (exit 5 of run and finalize), the log as it was."""
    from conformance.certification.results import runlog
    from conformance.session import results_log

    raw = _log_with_a_corrupt_middle_line(tmp_path)
    real = runlog.os.replace

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runlog.os, "replace", full)
    with pytest.raises(runlog.NotRedacted, match="No space left"):
        results_log.pack(tmp_path)
    monkeypatch.setattr(runlog.os, "replace", real)
    assert (tmp_path / runlog.LOG).read_bytes() == raw
    assert sorted(p.name for p in tmp_path.iterdir()) == [runlog.LOG]   # no temp file


# -- redact's edge cases (review of the path redaction) ------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def test_a_site_packages_path_with_a_space_becomes_its_package_path():
    text = 'File "/Users/John Smith/venv/lib/python3.11/site-packages/jax/_src/array.py"'
    assert local_paths.redact(text) == 'File "jax/_src/array.py"'
    assert local_paths.redact("/home/John Smith/venv/bin/python x") == "<redacted> x"


def test_the_repository_prefix_is_replaced_at_a_path_boundary_only():
    repo = local_paths._repository()
    assert local_paths.redact(f"/data{repo}x") == f"/data{repo}x"   # not "/datax"
    assert local_paths.redact(f"at {repo}conformance/x.py:3") == "at conformance/x.py:3"


def test_a_redacted_file_keeps_its_name_and_node_ids_are_never_rewritten():
    assert local_paths.redact("known: upstream bug 1 (/tmp/pytest-0/t0/known.txt:1)") == \
        "known: upstream bug 1 (<redacted>/known.txt:1)"
    assert local_paths.redact("/home/john.smith") == "<redacted>"   # a user's name: never
    command = "pytest conformance/test_x.py::test_y[/tmp] --deselect /tmp/a/t.py::t[/home/x]"
    assert local_paths.redact(command) == \
        "pytest conformance/test_x.py::test_y[/tmp] --deselect <redacted>/t.py::t[/home/x]"
    doc = {"results": [{"nodeid": "conformance/t.py::a[/work/x]", "message": "/work/x/y"}],
           "failures": [{"nodeid": "/tmp/odd", "test_id": "t.py::a[/opt/z]"}]}
    assert local_paths.redact_tree(doc) == {
        "results": [{"nodeid": "conformance/t.py::a[/work/x]", "message": "<redacted>"}],
        "failures": [{"nodeid": "/tmp/odd", "test_id": "t.py::a[/opt/z]"}]}
    assert local_paths.offenders(command.replace("/tmp/a/", "")) == []


_LOCAL_ROOTS = ("/work/", "/tmp/", "/root/", "/home/", "/opt/")
_NAME = st.text(st.sampled_from("abcXY019._-~ "), min_size=1, max_size=8).filter(
    lambda n: n.strip() == n and n not in (".", "..") and n.count(" ") <= 1)
_SPACED = st.text(st.sampled_from("abcX19._- "), min_size=1, max_size=12).filter(
    lambda n: n.strip() == n and n not in (".", ".."))   # many spaces: before site-packages
_ROOT = st.sampled_from([r.rstrip("/") for r in _LOCAL_ROOTS] + ["/Users", "/mnt"])
_PATHS = st.one_of(
    st.builds(lambda root, dirs, name: "/".join([root] + dirs + [name]),
              _ROOT, st.lists(_NAME, max_size=4), _NAME),
    st.builds(lambda root, dirs, name: "/".join([root] + dirs + ["lib", "site-packages",
                                                                  name]),
              _ROOT, st.lists(_SPACED, max_size=4), _NAME))
_TEXTS = st.lists(st.tuples(st.sampled_from(
    [" ", "\n", '"', "'", ":", ", ", " (", ")", "=", "file://", " x ", "<redacted> ", ">",
     "at ", "--opt=", "\t"]), _PATHS), min_size=1, max_size=4).map(
    lambda parts: "".join(a + b for a, b in parts))


@settings(max_examples=200, deadline=None)
@given(_TEXTS)
def test_redact_is_idempotent_and_leaves_no_local_root(text):
    once = local_paths.redact(text)
    assert local_paths.redact(once) == once
    assert local_paths.offenders(once) == []
    assert not any(r in once for r in _LOCAL_ROOTS), once
    assert "site-packages" not in once


def test_a_traceback_cut_inside_an_installed_packages_path_is_redacted():
    """A traceback kept to its last characters can start inside a path: the 0.8.0 bundle
    of 2026-11-28 held ``3.11/site-packages/jax/_src/array.py``."""
    cut = '3.11/site-packages/jax/_src/array.py", line 659, in _value'
    assert local_paths.redact(cut) == 'jax/_src/array.py", line 659, in _value'
    assert local_paths.offenders(local_paths.redact(cut)) == []
    assert local_paths.redact("lib/python3.11/dist-packages/a.py") == "a.py"


def test_a_relative_path_into_an_installed_package_is_redacted():
    """pytest prints a file under its rootdir relatively: a `pip install .` venv inside the
    checkout gave `.venv/lib/python3.11/site-packages/conformance/x.py` in CI's bundle."""
    text = 'x\n.venv/lib/python3.11/site-packages/conformance/test_x.py:142: in f\n'
    assert local_paths.redact(text) == "x\nconformance/test_x.py:142: in f\n"
    assert local_paths.redact('at "venv/lib/site-packages/a.py"') == 'at "a.py"'
