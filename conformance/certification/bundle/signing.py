"""OpenSSH signatures of a bundle's manifest (``ssh-keygen -Y``, namespace ``pjrt-conformance``).

The manifest (``MANIFEST.sha256``) lists the sha256 of every other file of the
bundle, so a signature of the manifest covers the whole bundle. :func:`sign`
writes ``MANIFEST.sha256.sig``; :func:`check` verifies it against a public key or
an ``allowed_signers`` file (see ssh-keygen(1), "ALLOWED SIGNERS"); :func:`status`
says whether a bundle is signed without trusting any key. No Python dependency:
the ``ssh-keygen`` of OpenSSH >= 8.2 does the cryptography.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import re
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


def _run(args: list[str], stdin: Path | None = None, *, no_tty: bool = False
         ) -> subprocess.CompletedProcess[str]:
    """``ssh-keygen args`` (``no_tty``: in a session of its own, without the terminal, so
    that it cannot ask for a passphrase there)."""
    cmd = [ssh_keygen(), *args]
    try:
        with open(stdin, "rb") if stdin else open("/dev/null", "rb") as fin:
            out = subprocess.run(cmd, stdin=fin, capture_output=True, timeout=_TIMEOUT_S,
                                 start_new_session=no_tty)
    except subprocess.TimeoutExpired as err:
        raise SigningError(f"ssh-keygen did not finish in {_TIMEOUT_S} s (a key with a "
                           "passphrase needs ssh-agent)") from err
    return subprocess.CompletedProcess(cmd, out.returncode,
                                       out.stdout.decode(errors="replace"),
                                       out.stderr.decode(errors="replace"))


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    text = " ".join((proc.stderr + " " + proc.stdout).split())
    return text[:300] or f"ssh-keygen exit {proc.returncode}"


def check_key(key: Path) -> None:
    """Check, before a run, that ``key`` signs without a passphrase (a private key
    without one, or one whose private half ssh-agent holds): a trial signature of a
    scratch file, away from the terminal. Raises FileNotFoundError for a missing key,
    SigningError naming the reason (a passphrase, not a key, no ssh-keygen)."""
    key = Path(key)
    ssh_keygen()
    if not key.is_file():
        raise FileNotFoundError(f"{key} does not exist or is not a file")
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe"
        probe.write_bytes(b"pjrt-conformance --sign-key check\n")
        proc = _run(["-Y", "sign", "-q", "-f", str(key.resolve()), "-n", NAMESPACE,
                     str(probe)], no_tty=True)
        if proc.returncode == 0 and probe.with_name("probe.sig").is_file():
            return
    text = proc.stderr + proc.stdout
    if "passphrase" in text and "incorrect" in text or _needs_passphrase(key):
        private = key.with_suffix("") if key.suffix == ".pub" else key
        raise SigningError(f"{key} is protected by a passphrase, and ssh-agent does not "
                           "hold it: signing would stop at the end of the run to ask for "
                           f"it. Add it to the agent (ssh-add {private}) or give a key "
                           "without a passphrase")
    raise SigningError(f"ssh-keygen cannot sign with {key}: {_one_line(proc)}")


def _needs_passphrase(key: Path) -> bool:
    """True when ``key`` is a private key that reads only with a passphrase
    (``ssh-keygen -y -P ''`` fails for it with 'incorrect passphrase')."""
    proc = _run(["-y", "-P", "", "-f", str(key)], no_tty=True)
    return proc.returncode != 0 and "passphrase" in proc.stderr + proc.stdout


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
            return SignatureCheck("bad", _validity(allowed_signers, sig, manifest)
                                  or f"the signing key is not in {allowed_signers}")
        for principal in principals:
            proc = _run(["-Y", "verify", "-f", str(allowed_signers), "-I", principal,
                         "-n", NAMESPACE, "-s", str(sig)], stdin=manifest)
            if proc.returncode == 0:
                who = f"key {trust}" if key is not None else f"principal {principal!r}"
                return SignatureCheck("verified", f"signed by {who}: {_one_line(proc)}")
    invalid = _validity(trust, sig, manifest) if key is None else None
    return SignatureCheck("bad", invalid or f"{SIGNATURE} does not verify with "
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


def _validity(allowed_signers: Path, sig: Path, manifest: Path) -> str | None:
    """Why the allowed_signers entries of the key that made ``sig`` do not accept it
    now: one line naming the entry and its dates when each of them has a
    ``valid-before`` in the past or a ``valid-after`` in the future (see ssh-keygen(1),
    ALLOWED SIGNERS); None when the key has no entry or one is valid now."""
    proc = _run(["-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(sig)], stdin=manifest)
    found = re.search(r"SHA256:[A-Za-z0-9+/]+", proc.stdout + proc.stderr)
    if proc.returncode != 0 or found is None:
        return None
    try:
        lines = allowed_signers.read_text(errors="replace").splitlines()
    except OSError:
        return None
    why = []
    for n, line in enumerate(lines, 1):
        entry = _entry(line)
        if entry is None or entry[2] != found.group(0):
            continue
        principals, options, _ = entry
        now = datetime.datetime.now(datetime.timezone.utc)
        problems = []
        for name, late in (("valid-before", True), ("valid-after", False)):
            when = _timestamp(options.get(name))
            if when is None:
                continue
            if late and when <= now:
                problems.append(f"expired on {when:%Y-%m-%d %H:%M:%S %Z} "
                                f'({name}="{options[name]}")')
            elif not late and when > now:
                problems.append(f"is not valid before {when:%Y-%m-%d %H:%M:%S %Z} "
                                f'({name}="{options[name]}")')
        if not problems:
            return None   # an entry that is valid now: the reason is another
        why.append(f"its entry for {principals} ({allowed_signers} line {n}) "
                   + " and ".join(problems))
    if not why:
        return None
    now = datetime.datetime.now(datetime.timezone.utc)
    return (f"the signing key {found.group(0)} is in {allowed_signers}, but "
            + "; ".join(why) + f" (now {now:%Y-%m-%d %H:%M:%S %Z})")


def _entry(line: str) -> tuple[str, dict[str, str], str] | None:
    """(principals, options, key fingerprint 'SHA256:...') of one allowed_signers line
    ('principals [options] keytype base64 [comment]'), None for a comment, a blank line
    or a line without a key."""
    fields, current, quoted = [], "", False
    for ch in line.strip():
        if ch == '"':
            quoted = not quoted
        if ch.isspace() and not quoted:
            if current:
                fields.append(current)
            current = ""
        else:
            current += ch
    if current:
        fields.append(current)
    if not fields or fields[0].startswith("#"):
        return None
    at = 1 if len(fields) > 2 and _KEY_TYPE.match(fields[1]) else 2
    if len(fields) <= at + 1:
        return None
    try:
        blob = base64.b64decode(fields[at + 1], validate=True)
    except ValueError:
        return None
    options: dict[str, str] = {}
    if at == 2:
        for option in re.findall(r'(?:[^,"]|"[^"]*")+', fields[1]):
            name, _, value = option.partition("=")
            options[name.strip().lower()] = value.strip().strip('"')
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return fields[0], options, f"SHA256:{digest}"


_KEY_TYPE = re.compile(r"^(ssh-|ecdsa-|sk-|rsa-)")


def _timestamp(value: str | None) -> datetime.datetime | None:
    """An allowed_signers time (YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]: local time, UTC with
    the Z) as an aware datetime; None when absent or not such a time."""
    if not value:
        return None
    utc = value.endswith(("Z", "z"))
    digits = value[:-1] if utc else value
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    if not digits.isdigit() or len(digits) not in formats:
        return None
    try:
        when = datetime.datetime.strptime(digits, formats[len(digits)])
    except ValueError:
        return None
    return when.replace(tzinfo=datetime.timezone.utc) if utc else when.astimezone()
