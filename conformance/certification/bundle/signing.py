"""OpenSSH signatures of a bundle's manifest (``ssh-keygen -Y``, namespace ``pjrt-conformance``).

The manifest (``MANIFEST.sha256``) lists the sha256 of every other file of the
bundle, so a signature of the manifest covers the whole bundle. :func:`sign`
writes ``MANIFEST.sha256.sig``; :func:`check` verifies it against a public key or
an ``allowed_signers`` file (see ssh-keygen(1), "ALLOWED SIGNERS"); :func:`status`
says whether a bundle is signed without trusting any key. No Python dependency:
the ``ssh-keygen`` of OpenSSH >= 8.2 does the cryptography.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMESPACE = "pjrt-conformance"
MANIFEST = "MANIFEST.sha256"
SIGNATURE = MANIFEST + ".sig"
_TIMEOUT_S = 60


class SigningError(RuntimeError):
    """ssh-keygen is missing or failed in a way that is not a bad signature
    (unreadable key, key with a passphrase and no agent, ...)."""


@dataclasses.dataclass(frozen=True)
class SignatureCheck:
    """Outcome of :func:`check` or :func:`status`.

    ``state``: ``"unsigned"``, ``"signed (not checked)"``, ``"verified"`` or
    ``"bad"``; ``detail``: one line (the signer's key fingerprint and principal,
    or why the signature is bad).
    """

    state: str
    detail: str

    @property
    def ok(self) -> bool:
        return self.state != "bad"


def ssh_keygen() -> str:
    """Path of ``ssh-keygen``. Raises SigningError when it is not on PATH."""
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SigningError("ssh-keygen not found on PATH: install OpenSSH (Debian/Ubuntu: "
                           "apt-get install openssh-client) to sign or check signatures")
    return found


def _run(args: list[str], stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [ssh_keygen(), *args]
    try:
        with open(stdin, "rb") if stdin else open("/dev/null", "rb") as fin:
            out = subprocess.run(cmd, stdin=fin, capture_output=True, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        raise SigningError(f"ssh-keygen did not finish in {_TIMEOUT_S} s (a key with a "
                           "passphrase needs ssh-agent)") from err
    return subprocess.CompletedProcess(cmd, out.returncode,
                                       out.stdout.decode(errors="replace"),
                                       out.stderr.decode(errors="replace"))


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    text = " ".join((proc.stderr + " " + proc.stdout).split())
    return text[:300] or f"ssh-keygen exit {proc.returncode}"


def sign(bundle_dir: Path, key: Path) -> Path:
    """Sign ``bundle_dir``'s manifest with the private key ``key`` (a public key
    whose private half is in ssh-agent also works); return the signature's path.

    Raises FileNotFoundError for a missing bundle, manifest or key, SigningError
    when ssh-keygen is missing or refuses the key.
    """
    bundle_dir, key = Path(bundle_dir), Path(key)
    manifest = bundle_dir / MANIFEST
    if not manifest.is_file():
        raise FileNotFoundError(f"bundle: {manifest} does not exist (not a report bundle)")
    if not key.is_file():
        raise FileNotFoundError(f"key: {key} does not exist or is not a file")
    sig = bundle_dir / SIGNATURE
    sig.unlink(missing_ok=True)  # ssh-keygen refuses to overwrite
    proc = _run(["-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE, str(manifest)])
    if proc.returncode != 0 or not sig.is_file():
        raise SigningError(f"ssh-keygen could not sign with {key}: {_one_line(proc)}")
    return sig


def status(bundle_dir: Path) -> SignatureCheck:
    """Whether the bundle is signed, and by which key, trusting no key: a signature
    that does not match the manifest is ``bad``. Raises SigningError when a
    signature is present and ssh-keygen is missing."""
    bundle_dir = Path(bundle_dir)
    sig = bundle_dir / SIGNATURE
    if not sig.is_file():
        return SignatureCheck("unsigned", f"no {SIGNATURE}: nothing says who made this bundle")
    if not (bundle_dir / MANIFEST).is_file():
        return SignatureCheck("bad", f"{SIGNATURE} is present but {MANIFEST} is missing")
    proc = _run(["-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(sig)],
                stdin=bundle_dir / MANIFEST)
    if proc.returncode != 0:
        return SignatureCheck("bad", f"{SIGNATURE} does not match {MANIFEST}: "
                              f"{_one_line(proc)}")
    return SignatureCheck("signed (not checked)", f"{_one_line(proc)}; pass --key or "
                          "--allowed-signers to check who signed it")


def check(bundle_dir: Path, *, key: Path | None = None, allowed_signers: Path | None = None,
          identity: str | None = None) -> SignatureCheck:
    """Verify the manifest's signature against ``key`` (an OpenSSH public key file)
    or ``allowed_signers`` (an ssh-keygen allowed_signers file; ``identity``: the
    principal that must have signed, default: any principal the file lists for
    the signing key).

    Returns ``verified`` or ``bad`` (unsigned counts as bad: a key was asked for).
    Raises ValueError when neither or both of ``key`` and ``allowed_signers`` are
    given or ``identity`` comes without ``allowed_signers``, FileNotFoundError for
    a missing key file, SigningError when ssh-keygen is missing.
    """
    if (key is None) == (allowed_signers is None):
        raise ValueError("give exactly one of key and allowed_signers")
    if identity is not None and allowed_signers is None:
        raise ValueError("identity needs allowed_signers")
    ssh_keygen()  # a check was asked for: without the tool it cannot be done
    trust = Path(key if key is not None else allowed_signers)
    if not trust.is_file():
        raise FileNotFoundError(f"{'key' if key else 'allowed_signers'}: {trust} does not "
                                "exist or is not a file")
    _check_trust(trust, "key" if key is not None else "allowed_signers")
    bundle_dir = Path(bundle_dir)
    sig, manifest = bundle_dir / SIGNATURE, bundle_dir / MANIFEST
    if not sig.is_file():
        return SignatureCheck("bad", f"bundle is not signed (no {SIGNATURE}) but a key was "
                              "given")
    if not manifest.is_file():
        return SignatureCheck("bad", f"{MANIFEST} is missing")
    with tempfile.TemporaryDirectory() as tmp:
        if key is not None:
            fields = trust.read_text(errors="replace").split()
            allowed_signers, identity = Path(tmp) / "allowed_signers", "key"
            allowed_signers.write_text(f'key namespaces="{NAMESPACE}" {fields[0]} '
                                       f"{fields[1]}\n")
        principals = [identity] if identity else _principals(allowed_signers, sig)
        if not principals:
            return SignatureCheck("bad", f"the signing key is not in {allowed_signers}")
        for principal in principals:
            proc = _run(["-Y", "verify", "-f", str(allowed_signers), "-I", principal,
                         "-n", NAMESPACE, "-s", str(sig)], stdin=manifest)
            if proc.returncode == 0:
                who = f"key {trust}" if key is not None else f"principal {principal!r}"
                return SignatureCheck("verified", f"signed by {who}: {_one_line(proc)}")
    return SignatureCheck("bad", f"{SIGNATURE} does not verify with "
                          f"{'key ' + str(trust) if key else str(trust)}: {_one_line(proc)}")


def _public_key(fields: list[str]) -> bool:
    """``fields`` begin with an OpenSSH public key (``<type> <base64>``) that ssh-keygen
    reads (``ssh-keygen -l``)."""
    if len(fields) < 2:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "key.pub"
        probe.write_text(f"{fields[0]} {fields[1]}\n")
        return _run(["-l", "-f", str(probe)]).returncode == 0


def _check_trust(trust: Path, option: str) -> None:
    """Raise ValueError (a usage error: the argument, not the bundle, is wrong) unless
    ``trust`` is an OpenSSH public key (``option`` 'key') or an allowed_signers file with
    at least one entry whose key ssh-keygen reads (``option`` 'allowed_signers')."""
    try:
        text = trust.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{option}: {trust} is not text (binary junk?); give an OpenSSH "
                         + ("public key (the .pub file)" if option == "key"
                            else "allowed_signers file")) from None
    if option == "key":
        fields = text.split()
        if fields[:1] == ["-----BEGIN"]:
            raise ValueError(f"key: {trust} is a private key; give its public key "
                             "(the .pub file)")
        if not _public_key(fields):
            raise ValueError(f"key: {trust} is not an OpenSSH public key "
                             "('<type> <base64> [comment]')")
        return
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        # principals [options] keytype base64 [comment]: the key follows 1 or 2 fields
        if any(_public_key(fields[i:]) for i in (1, 2)):
            return
    raise ValueError(f"allowed_signers: {trust} has no entry 'principals [options] "
                     "keytype base64' with a key ssh-keygen reads (see ssh-keygen(1), "
                     "ALLOWED SIGNERS)")


def _principals(allowed_signers: Path, sig: Path) -> list[str]:
    proc = _run(["-Y", "find-principals", "-f", str(allowed_signers), "-s", str(sig)])
    return proc.stdout.split() if proc.returncode == 0 else []
