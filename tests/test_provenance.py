"""Suite identity in the report header and in ``verify`` (issue 17 part 6), and test ids
independent of the install location and of pytest's rootdir (issue 19 part 3)."""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import conformance
from conformance.certification import provenance
from tests.bundle_helpers import crafted, main, rewrite


@pytest.mark.parametrize("nodeid, path, expected", [
    ("conformance/test_x.py::t[a-b]", None, "conformance/test_x.py::t[a-b]"),
    ("../venv/lib/python3.11/site-packages/conformance/test_x.py::t[a]", None,
     "conformance/test_x.py::t[a]"),
    ("/abs/site-packages/conformance/test_x.py::C::t", None, "conformance/test_x.py::C::t"),
    ("::t[a]", "../../venv/site-packages/conformance/test_x.py", "conformance/test_x.py::t[a]"),
    ("::t[a]", None, "::t[a]"),                                   # nothing to go by
    ("tests/test_y.py::t", "tests/test_y.py", "tests/test_y.py::t"),   # not the suite's
    ("x/myconformance/test_x.py::t", None, "x/myconformance/test_x.py::t"),
    ("conformance/test_x.py::t[conformance/test_y.py]", None,
     "conformance/test_x.py::t[conformance/test_y.py]"),
])
def test_package_nodeid(nodeid, path, expected):
    assert provenance.package_nodeid(nodeid, path) == expected


def test_package_nodeid_rejects_non_strings():
    with pytest.raises(TypeError, match="nodeid must be a str"):
        provenance.package_nodeid(None)


def test_run_from_another_directory_has_package_ids_and_a_signed_bundle(tmp_path, capsys):
    """``pjrt-conformance run`` from outside the checkout (pytest's rootdir is that
    directory, the test files lie outside it): the ids are the checkout's, the tier comes
    from the profile, and ``--sign-key`` signs the bundle."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen (OpenSSH) is not installed")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")],
                   check=True, timeout=60)
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--cpu-devices", "1", "--sign-key", str(tmp_path / "k"), "--output",
         str(tmp_path / "out"), "--", "-k", "test_device_ids_unique"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # profile: partial
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(r["nodeid"], r["test_id"], r["tier"]) for r in doc["results"]] == [
        ("conformance/test_client.py::test_device_ids_unique",
         "test_client.py::test_device_ids_unique", "core")]
    proc = main(capsys, "verify", str(tmp_path / "out"), "--key", str(tmp_path / "k.pub"))
    assert proc.returncode == 1 and "signature: verified" in proc.stdout, proc.stdout


def test_suite_identity_of_this_checkout():
    ident = provenance.suite_identity()
    assert ident["version"] == conformance.__version__
    root = Path(conformance.__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True)
    if head.returncode != 0 or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    assert ident["source"] == "git" and ident["git_sha"] == head.stdout.strip()
    assert isinstance(ident["dirty"], bool)


def _git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True, timeout=60)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_identity_sees_a_modified_suite(tmp_path):
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "test_a.py").write_text("x = 1\n")
    (tmp_path / "reports").mkdir()
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "c")
    clean = provenance._git_identity(tmp_path)
    assert clean["dirty"] is False and len(clean["git_sha"]) == 40
    (tmp_path / "reports" / "new.json").write_text("{}")      # a report: not the suite
    assert provenance._git_identity(tmp_path)["dirty"] is False
    (tmp_path / "conformance" / "test_b.py").write_text("y = 2\n")   # a new test file
    assert provenance._git_identity(tmp_path)["dirty"] is True
    # A package directory inside another repository is not a checkout of the suite.
    (tmp_path / "venv" / "site").mkdir(parents=True)
    assert provenance._git_identity(tmp_path / "venv" / "site") is None


def _fake_wheel(tmp_path, editable=False):
    """An installed distribution: conformance/__init__.py and its RECORD."""
    site = tmp_path / "site"
    (site / "conformance").mkdir(parents=True)
    data = b"__version__ = '0.1.0'\n"
    (site / "conformance" / "__init__.py").write_bytes(data)
    info = site / "pjrt_conformance-0.1.0.dist-info"
    info.mkdir()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_bytes(f"conformance/__init__.py,sha256={digest},{len(data)}\r\n"
                                  "pjrt_conformance-0.1.0.dist-info/RECORD,,\r\n".encode())
    (info / "METADATA").write_text("Name: pjrt-conformance\nVersion: 0.1.0\n")
    if editable:
        (info / "direct_url.json").write_text(json.dumps(
            {"url": "file:///x", "dir_info": {"editable": True}}))
    return site, info


def test_wheel_identity_hashes_record_and_sees_modified_files(tmp_path, monkeypatch):
    site, info = _fake_wheel(tmp_path)
    monkeypatch.setattr(provenance.metadata, "distribution",
                        lambda name: metadata.PathDistribution(info))
    ident = provenance._wheel_identity()
    assert ident == {"record_sha256": hashlib.sha256((info / "RECORD").read_bytes())
                     .hexdigest(), "dirty": False}
    (site / "conformance" / "__init__.py").write_text("__version__ = '9'\n")
    assert provenance._wheel_identity()["dirty"] is True


def test_editable_install_has_no_wheel_identity(tmp_path, monkeypatch):
    _, info = _fake_wheel(tmp_path, editable=True)
    monkeypatch.setattr(provenance.metadata, "distribution",
                        lambda name: metadata.PathDistribution(info))
    assert provenance._wheel_identity() is None


@pytest.mark.parametrize("stated, fragment", [
    ({"version": "0.0.9"}, "bundle was made by suite 0.0.9; this verifier is suite"),
    ({"git_sha": "a" * 40, "source": "git"}, "at git commit aaaaaaaaaaaa; this verifier runs"),
    ({"record_sha256": "b" * 64, "source": "wheel"}, "wheel RECORD sha256 bbbbbbbbbbbb"),
    ({"git_sha": "c" * 40, "source": "git", "dirty": True}, "made by a modified suite"),
    ({"source": "unknown", "git_sha": None, "record_sha256": None}, "does not say which code of the suite made it"),
])
def test_compare_identity_names_each_difference(stated, fragment):
    running = {"version": "0.1.0", "source": "git", "git_sha": "c" * 40,
               "record_sha256": "d" * 64, "dirty": False}
    notes = provenance.compare_identity({**running, **stated}, running)
    assert len(notes) == 1 and fragment in notes[0], notes
    assert provenance.compare_identity(running, running) == []


def test_verify_notes_another_suite_version_and_strict_fails(tmp_path, capsys):
    path = crafted(tmp_path)
    rewrite(path, lambda d: d["suite"].update(version="0.0.9"))
    proc = main(capsys, "verify", str(path))
    assert proc.returncode == 0, proc.stdout          # reported, not fatal
    assert "note: bundle was made by suite 0.0.9" in proc.stdout
    proc = main(capsys, "verify", str(path), "--strict")
    assert proc.returncode == 3 and "--strict: bundle was made by suite 0.0.9" in proc.stdout


def test_report_header_records_the_suite_identity():
    from conformance.certification.verdict import report
    import datetime
    head = report.header(platform="cpu", platform_info={}, known=[], argv=["x"],
                         cpu_devices=1, num_processes=1, programs={},
                         started=datetime.datetime.now(datetime.timezone.utc), duration_s=0)
    assert head["suite"] == provenance.suite_identity()


@pytest.mark.parametrize("suite, expected", [
    ({"version": "0.1.0", "git_sha": "a" * 40, "dirty": True}, "0.1.0 (git aaaaaaaaaaaa, modified)"),
    ({"version": "0.1.0", "git_sha": None, "record_sha256": "b" * 64, "dirty": False},
     "0.1.0 (wheel RECORD sha256 bbbbbbbbbbbb)"),
    ({"version": "0.1.0", "git_sha": None}, "0.1.0 (source unknown)"),
])
def test_describe_suite(suite, expected):
    assert provenance.describe(suite) == expected


def test_wheel_install_run_from_another_directory(tmp_path):
    """A wheel of this checkout installed elsewhere (``pip install --target``, first on
    PYTHONPATH), run from a third directory: the same ids, and the header names the wheel."""
    root = Path(conformance.__file__).resolve().parent.parent
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(root)],
                   check=True, capture_output=True, timeout=600)
    wheel, = (tmp_path / "dist").glob("*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(tmp_path / "site"),
                    str(wheel)], check=True, capture_output=True, timeout=600)
    (tmp_path / "cwd").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
         "--cpu-devices", "1", "--output", str(tmp_path / "out"), "--", "-k",
         "test_device_ids_unique"], cwd=tmp_path / "cwd", capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(r["nodeid"], r["tier"]) for r in doc["results"]] == [
        ("conformance/test_client.py::test_device_ids_unique", "core")]
    record = tmp_path / "site" / "pjrt_conformance-0.1.0.dist-info" / "RECORD"
    assert doc["suite"]["source"] == "wheel" and doc["suite"]["dirty"] is False
    assert doc["suite"]["record_sha256"] == hashlib.sha256(record.read_bytes()).hexdigest()
