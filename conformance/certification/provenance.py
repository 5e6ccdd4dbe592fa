"""Identity of the suite that wrote a report, and of the tests in it.

:func:`suite_identity` is the ``suite`` object of the report header: the suite's
version and where its code came from -- a git checkout (commit, and whether the
suite's files differ from it) or an installed wheel (the sha256 of its RECORD,
and whether an installed file differs from RECORD). :func:`compare_identity` is
what ``pjrt-conformance verify`` says about a bundle's suite against the running
one. :func:`package_nodeid` makes test ids independent of where the suite is
installed and of the directory pytest ran from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import conformance

DISTRIBUTION = "pjrt-conformance"
_PACKAGE_FILE = re.compile(r"(?:^|/)(conformance/test_[A-Za-z0-9_]+\.py)$")
# The suite's own code; reports/ and other files of a checkout do not change what runs.
_SUITE_PATHS = ("conformance", "runtime", "pyproject.toml")


def package_nodeid(nodeid: str, path: str | None = None) -> str:
    """A pytest node id relative to the package, whatever the rootdir and install location.

    ``nodeid``: pytest's id, whose file part depends on the rootdir (for a file
    outside the rootdir it is empty: ``'::test_x[a]'``); ``path``: the test's file
    (``item.path`` or ``report.location[0]``), used when the id's file part is not
    a test module of the suite. ``'../venv/lib/python3.11/site-packages/
    conformance/test_x.py::t[a]'`` -> ``'conformance/test_x.py::t[a]'``. Ids of
    other tests are returned unchanged. Raises TypeError when ``nodeid`` is not a str.
    """
    if not isinstance(nodeid, str):
        raise TypeError(f"nodeid must be a str, got {type(nodeid).__name__}")
    file, sep, rest = nodeid.partition("::")
    for candidate in (file, str(path).replace("\\", "/") if path is not None else ""):
        m = _PACKAGE_FILE.search(candidate)
        if m:
            return m.group(1) + sep + rest
    return nodeid


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd,
                             timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _git_identity(root: Path) -> dict[str, Any] | None:
    """Commit and dirtiness of the checkout whose top level is ``root`` (None: not one).

    A package directory inside some other repository (a virtual environment in a
    checkout) is not a checkout of the suite: the top level must be ``root``.
    """
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top is None or Path(top).resolve() != root.resolve():
        return None
    sha = _git(["rev-parse", "HEAD"], root)
    status = _git(["status", "--porcelain", "--", *_SUITE_PATHS], root)
    return {"git_sha": sha or None, "dirty": None if status is None else bool(status)}


def _record_digest(value: str) -> str:
    """A RECORD hash value (urlsafe base64 without padding) -> hex."""
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


def _wheel_identity() -> dict[str, Any] | None:
    """sha256 of the installed distribution's RECORD, and whether an installed file
    of the package differs from it (None: not installed as a wheel, or editable)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    direct = dist.read_text("direct_url.json")
    if direct and json.loads(direct).get("dir_info", {}).get("editable"):
        return None
    listed = next((f for f in dist.files or () if f.parts[-1] == "RECORD"
                   and f.parts[0].endswith(".dist-info")), None)
    if listed is None:
        return None
    try:  # bytes: RECORD is CSV with \r\n line ends, which read_text would translate
        record = Path(dist.locate_file(listed)).read_bytes()
    except OSError:
        return None
    modified = False
    for f in dist.files or ():
        if f.hash is None or f.hash.mode != "sha256" or not f.parts or \
                f.parts[0] not in ("conformance", "runtime"):
            continue
        try:
            data = Path(dist.locate_file(f)).read_bytes()
        except OSError:
            modified = True
            break
        if hashlib.sha256(data).hexdigest() != _record_digest(f.hash.value):
            modified = True
            break
    return {"record_sha256": hashlib.sha256(record).hexdigest(), "dirty": modified}


def suite_identity() -> dict[str, Any]:
    """The report's ``suite`` object.

    Keys: ``name``; ``version`` (``conformance.__version__``); ``source``
    (``"git"``, ``"wheel"`` or ``"unknown"``); ``git_sha`` (40 hex or None);
    ``record_sha256`` (hex sha256 of the wheel's RECORD file, or None); ``dirty``
    (True: the suite's files differ from the commit or from RECORD; None: unknown).
    """
    root = Path(conformance.__file__).resolve().parent.parent
    ident: dict[str, Any] = {"name": "pjrt-conformance", "version": conformance.__version__,
                             "source": "unknown", "git_sha": None, "record_sha256": None,
                             "dirty": None}
    found = _git_identity(root)
    if found is not None:
        ident.update(found, source="git")
        return ident
    found = _wheel_identity()
    if found is not None:
        ident.update(found, source="wheel")
    return ident


def describe(suite: dict[str, Any]) -> str:
    """One line for the rendered reports: ``'0.1.0 (git 1a2b3c4d5e6f, modified)'``,
    ``'0.1.0 (wheel RECORD sha256 9f8e7d6c5b4a)'`` or ``'0.1.0 (source unknown)'``."""
    if suite.get("git_sha"):
        where = f"git {suite['git_sha'][:12]}"
    elif suite.get("record_sha256"):
        where = f"wheel RECORD sha256 {suite['record_sha256'][:12]}"
    else:
        where = "source unknown"
    return f"{suite.get('version', '?')} ({where}{', modified' if suite.get('dirty') else ''})"


def compare_identity(stated: dict[str, Any], running: dict[str, Any]) -> list[str]:
    """Differences between a bundle's ``suite`` and the running suite's, one line each.

    Empty: the same version and, where both know it, the same commit or RECORD.
    A bundle made from a modified tree is always named. Raises KeyError when
    ``stated`` lacks ``version`` (the schema requires it).
    """
    notes = []
    if stated["version"] != running["version"]:
        notes.append(f"bundle was made by suite {stated['version']}; this verifier is suite "
                     f"{running['version']}")
    for key, what in (("git_sha", "git commit"), ("record_sha256", "wheel RECORD sha256")):
        a, b = stated.get(key), running.get(key)
        if a and b and a != b:
            notes.append(f"bundle was made by the suite at {what} {a[:12]}; this verifier "
                         f"runs {b[:12]}")
    if stated.get("dirty"):
        notes.append(f"bundle was made by a modified suite ({stated.get('source', 'unknown')} "
                     f"{(stated.get('git_sha') or stated.get('record_sha256') or '?')[:12]} "
                     "with local changes): its tests may differ from any release")
    if stated.get("source", "unknown") == "unknown" and not stated.get("git_sha"):
        notes.append("bundle does not say which code of the suite made it (no git commit, "
                     "no wheel RECORD)")
    return notes
