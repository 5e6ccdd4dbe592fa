"""Signed bundles (issue 17 part 6): ``sign``, ``run --sign-key`` and ``verify --key`` /
``--allowed-signers`` with OpenSSH signatures; a forged bundle fails; no ssh-keygen is a
clear usage error."""

import shutil
import subprocess

import pytest

from conformance.certification.bundle import bundle_files
from conformance.certification.bundle import signing
from tests.bundle_helpers import crafted, main, rewrite

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                      reason="ssh-keygen (OpenSSH) is not installed")
CRASH = "test_lifecycle.py::test_use_after_delete_raises[is_ready]"


def _keypair(tmp_path, name):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name,
                    "-f", str(tmp_path / name)], check=True, timeout=60)
    return tmp_path / name, tmp_path / f"{name}.pub"


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A not-certified bundle (one crash) signed by 'lab', and the keys of 'lab' and 'other'."""
    tmp = tmp_path_factory.mktemp("signed")
    lab, lab_pub = _keypair(tmp, "lab")
    _, other_pub = _keypair(tmp, "other")
    path = crafted(tmp, "bundle", **{CRASH: "crash"})
    assert signing.sign(path, lab) == path / signing.SIGNATURE
    return {"path": path, "lab": lab, "lab_pub": lab_pub, "other_pub": other_pub, "tmp": tmp}


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


@needs_ssh_keygen
def test_signed_bundle_verifies_with_its_key(signed, capsys):
    proc = main(capsys, "verify", str(signed["path"]), "--key", str(signed["lab_pub"]))
    assert proc.returncode == 1, proc.stdout + proc.stderr     # intact, not certified
    assert "signature: verified: signed by key" in proc.stdout
    assert "intact; verdict NOT CERTIFIED" in proc.stdout


@needs_ssh_keygen
def test_without_key_verify_says_signed_not_checked(signed, tmp_path, capsys):
    proc = main(capsys, "verify", str(signed["path"]))
    assert proc.returncode == 1 and "signature: signed (not checked)" in proc.stdout
    unsigned = crafted(tmp_path)
    proc = main(capsys, "verify", str(unsigned))
    assert proc.returncode == 0 and "signature: unsigned" in proc.stdout


@needs_ssh_keygen
def test_bundle_rewritten_to_pass_fails(signed, tmp_path, capsys):
    """Every result set to pass, verdict and counts made consistent, manifest re-hashed:
    the old signature no longer covers the manifest."""
    forged = _copy(signed["path"], tmp_path / "forged")
    honest_pass = crafted(tmp_path, "pass")            # a consistent all-pass report
    for name in bundle_files.FILES:   # report.md/html rendered from it too (verify checks that)
        shutil.copy(honest_pass / name, forged / name)
    rewrite(forged, lambda d: None)                    # re-hash every file
    assert bundle_files.verify(forged).problems == [
        f"{signing.SIGNATURE} does not match {bundle_files.MANIFEST}: Signature verification "
        "failed: incorrect signature Could not verify signature."]
    proc = main(capsys, "verify", str(forged), "--key", str(signed["lab_pub"]))
    assert proc.returncode == 3, proc.stdout
    assert f"{signing.SIGNATURE} does not verify with key {signed['lab_pub']}" in proc.stdout
    assert "NOT INTACT" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


@needs_ssh_keygen
def test_signature_of_another_key_fails(signed, capsys):
    proc = main(capsys, "verify", str(signed["path"]), "--key", str(signed["other_pub"]))
    assert proc.returncode == 3 and "does not verify with key" in proc.stdout


@needs_ssh_keygen
def test_unsigned_bundle_fails_when_a_key_is_required(signed, tmp_path, capsys):
    proc = main(capsys, "verify", str(crafted(tmp_path)), "--key", str(signed["lab_pub"]))
    assert proc.returncode == 3 and "bundle is not signed" in proc.stdout


@needs_ssh_keygen
def test_signature_removed_from_its_bundle_is_detected(signed, tmp_path, capsys):
    """A valid signature of another bundle copied next to a different manifest."""
    other = crafted(tmp_path)
    shutil.copy(signed["path"] / signing.SIGNATURE, other / signing.SIGNATURE)
    assert main(capsys, "verify", str(other)).returncode == 3
    assert main(capsys, "verify", str(other), "--key", str(signed["lab_pub"])).returncode == 3
    (other / bundle_files.MANIFEST).unlink()
    for args in ((), ("--key", signed["lab_pub"])):
        proc = main(capsys, "verify", other, *args)
        assert proc.returncode == 3 and "MANIFEST.sha256 is missing" in proc.stdout


@needs_ssh_keygen
def test_allowed_signers_and_identity(signed, tmp_path, capsys):
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'lab@example.org namespaces="pjrt-conformance" '
                       f'{signed["lab_pub"].read_text()}')
    path = str(signed["path"])
    proc = main(capsys, "verify", path, "--allowed-signers", str(allowed))
    assert proc.returncode == 1 and "principal 'lab@example.org'" in proc.stdout
    assert main(capsys, "verify", path, "--allowed-signers", str(allowed), "--identity",
               "lab@example.org").returncode == 1
    proc = main(capsys, "verify", path, "--allowed-signers", str(allowed), "--identity", "mallory")
    assert proc.returncode == 3 and "does not verify" in proc.stdout
    other = tmp_path / "other_signers"
    other.write_text(f'lab@example.org {signed["other_pub"].read_text()}')
    proc = main(capsys, "verify", path, "--allowed-signers", str(other))
    assert proc.returncode == 3 and "signing key is not in" in proc.stdout


@needs_ssh_keygen
def test_bad_arguments_are_usage_errors(signed, tmp_path, capsys):
    path = str(signed["path"])
    for args, message in [
            (("verify", path, "--key", str(tmp_path / "none.pub")), "does not exist"),
            (("verify", path, "--identity", "x"), "--identity needs --allowed-signers"),
            (("sign", path, "--key", str(tmp_path / "none")), "does not exist"),
            (("sign", str(tmp_path / "nowhere"), "--key", str(signed["lab"])),
             "not a bundle directory")]:
        proc = main(capsys, *args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    not_a_key = tmp_path / "not_a_key.pub"
    not_a_key.write_text("garbage\n")
    proc = main(capsys, "verify", path, "--key", str(not_a_key))
    assert proc.returncode == 2 and "not an OpenSSH public key" in proc.stderr
    proc = main(capsys, "verify", path, "--key", signed["lab"])
    assert proc.returncode == 2 and "is a private key; give its public key" in proc.stderr
    proc = main(capsys, "sign", path, "--key", str(not_a_key))       # ssh-keygen refuses it
    assert proc.returncode == 2 and "could not sign" in proc.stderr


@needs_ssh_keygen
def test_sign_refuses_a_tampered_bundle(signed, tmp_path, capsys):
    path = _copy(signed["path"], tmp_path / "t")
    (path / "report.md").write_text("all good\n")
    proc = main(capsys, "sign", str(path), "--key", str(signed["lab"]))
    assert proc.returncode == 2 and "refusing to sign" in proc.stderr
    assert "report.md was modified" in proc.stderr


def test_missing_ssh_keygen_is_a_clear_error(tmp_path, capsys, monkeypatch):
    """PATH without ssh-keygen: --key and sign give exit 2 naming OpenSSH; an unsigned
    bundle still verifies."""
    path = crafted(tmp_path)
    (tmp_path / "k.pub").write_text("ssh-ed25519 AAAA test\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    proc = main(capsys, "verify", path, "--key", tmp_path / "k.pub")
    assert proc.returncode == 2 and "ssh-keygen not found on PATH" in proc.stderr
    proc = main(capsys, "sign", path, "--key", tmp_path / "k.pub")
    assert proc.returncode == 2 and "install OpenSSH" in proc.stderr
    assert main(capsys, "verify", path).returncode == 0


@needs_ssh_keygen
def test_resigning_replaces_a_stale_signature(signed, tmp_path, capsys):
    path = _copy(signed["path"], tmp_path / "r")
    rewrite(path, lambda d: None)      # report.json re-serialized, manifest re-hashed
    assert main(capsys, "verify", path, "--key", signed["lab_pub"]).returncode == 3
    assert main(capsys, "sign", path, "--key", signed["lab"]).returncode == 0
    assert main(capsys, "verify", path, "--key", signed["lab_pub"]).returncode == 1


@needs_ssh_keygen
@pytest.mark.parametrize("option", ["--key", "--allowed-signers"])
@pytest.mark.parametrize("junk", [b"\xff\xfe\x00binary junk\x80" * 20,
                                  b"ssh-ed25519 AAAAnotbase64!! x\n", b"# only a comment\n\n"])
def test_a_junk_key_is_blamed_on_the_argument_not_the_bundle(signed, tmp_path, capsys, option,
                                                              junk):
    """Issue 27: a junk --key / --allowed-signers was reported as a bundle that is not
    intact (exit 3, and for an unsigned bundle before the key was even read); it is a
    usage error (2, one line naming the option), signed bundle or not."""
    bad = tmp_path / "junk"
    bad.write_bytes(junk)
    name = option.lstrip("-").replace("-", "_")
    mine = crafted(tmp_path, "signed")          # the module's bundle may have lost its .sig
    signing.sign(mine, signed["lab"])
    for path in (mine, crafted(tmp_path, "unsigned")):
        proc = main(capsys, "verify", str(path), option, str(bad))
        assert proc.returncode == 2, (path, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and f"{name}: {bad}" in proc.stderr
    good = tmp_path / "good"        # the same option with a real key still checks the bundle
    good.write_text(signed["lab_pub"].read_text() if option == "--key" else
                    f'lab@example.org {signed["lab_pub"].read_text()}')
    assert main(capsys, "verify", str(mine), option, str(good)).returncode == 0
