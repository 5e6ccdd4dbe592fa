"""What changed since the previous bundle of the same backend (report.json
``since_previous``), for the report's "Changes since the previous bundle" section.

The previous bundle is the newest other bundle beside the new one (the folders of
``out_dir``'s parent, e.g. ``reports/cpu/``) that started before it, passes ``verify``'s
checks (a tampered or broken bundle is never compared with) and is of the same kind of
run (:func:`kind`): the same backend
(:func:`conformance.certification.compare.scoreboard.backend_key`), the same profile
name (``v11``; or both without one) and the same test selection (:func:`selection`:
``--cpu-devices``, ``-k``, ``-m``, ``--deselect``, ``--ignore``, ``--shard``,
``--num-processes``, ``-x``/``--maxfail``, ``--lf``, ``--sw`` and the test paths as
recorded, read as the bundle holds them: paths redacted). A v8 run is never the previous bundle of a v11 run.

The summary holds the previous bundle's folder name (never a local path), its start time
and verdict, ``unlike`` (what makes the two runs differ in kind, one sentence each: the
profile's content, the jax or jaxlib release, the test set), and
:func:`conformance.certification.compare.diff.compare`'s lists restricted to the tests
present in both runs: new failures and fixes (test id, old status, new status; at most
:data:`SHOWN` each, with their full counts), the number of other status changes, then
the added tests (with ``added_failing``, how many of them fail: never counted as new
failures) and removed tests, and the changed environment and verdict facts.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from conformance.certification.bundle import bundle_files
from conformance.certification import local_paths
from conformance.certification.bundle import reportfile
from conformance.certification.compare import diff
from conformance.certification.compare.scoreboard import backend_key

SHOWN = 20
#: Options of the recorded command line that select tests (a value follows each, in the
#: next word or after ``=``; a short one also attached: ``-kfoo``).
SELECTING = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--shard",
             "--num-processes", "--maxfail", "--last-failed-no-failures", "--lfnf")
#: Flags of the recorded command line that select tests (stop early, re-run failures).
SELECTING_FLAGS = ("-x", "--exitfirst", "--lf", "--last-failed", "--sw", "--stepwise",
                   "--sw-skip", "--stepwise-skip")
#: Short options whose value may be attached (``-n4``, ``-rA``, ``-pno:x``): a word
#: ``-<letters>`` is read as flags up to the first of these.
_SHORT_VALUED = "kmnprcoW"
#: Options of the recorded command line whose value is never a test path.
_VALUED = ("--output", "--plugin-library", "--platform", "--profile", "--report-dir",
           "--timeout", "--cpu-devices", "--sign-key", "--rootdir", "--basetemp",
           "--confcutdir", "--hypothesis-seed", "--hypothesis-profile", "--known-failures",
           "--workers", "--dist", "--junitxml", "--report-log", "--tb", "--durations",
           "--capture", "--log-level", "--override-ini", "--import-mode")


def _short(word: str, following: str | None) -> list[tuple[str, str]] | None:
    """The selecting (option, value) pairs of the short-option word ``word`` (``-xk
    foo``, ``-kfoo``, ``-x``); None when it is not such a word. ``following`` is the
    next word (the value of a trailing ``-k``)."""
    if not word.startswith("-") or word.startswith("--") or len(word) < 2 or \
            not word[1:2].isalpha():
        return None
    pairs = []
    for i, c in enumerate(word[1:], start=1):
        if c in _SHORT_VALUED:
            value = word[i + 1:].removeprefix("=") or following
            if c in "km" and value is not None:
                pairs.append((f"-{c}", value))
            break
        if c == "x":
            pairs.append(("-x", ""))
    return pairs


def _test_path(word: str) -> bool:
    """A positional pytest argument naming tests: a node id or a test file or folder."""
    return "::" in word or word.endswith(".py") or \
        word.rstrip("/").split("/")[0] in ("conformance", "tests")


def selection(doc: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The test selection of a report: ``cpu_devices``, the :data:`SELECTING` options
    (``-k EXPR``, ``-k=EXPR`` and ``-kEXPR`` alike), :data:`SELECTING_FLAGS` and the
    positional test paths (``("path", ...)``) of its ``command``, as sorted (option,
    value) pairs. The command is read as a bundle holds it
    (:func:`conformance.certification.local_paths.redact`), so a report still in
    memory and its bundle have one selection. An unparsable command line selects by its
    whole text."""
    pairs = [("--cpu-devices", str(doc.get("cpu_devices")))]
    command = str(local_paths.redact(str(doc.get("command") or "")))
    try:
        words = shlex.split(command)
    except ValueError:
        return tuple(pairs + [("command", command)])
    skip = True   # the program (``cli.py``, ``pytest``) selects nothing
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        following = words[i + 1] if i + 1 < len(words) else None
        name, eq, value = w.partition("=")
        short = _short(w, following)
        if name in SELECTING and eq:
            pairs.append((name, value))
        elif w in SELECTING:
            pairs.append((w, following or ""))
            skip = True
        elif w in SELECTING_FLAGS:
            pairs.append((w, ""))
        elif short is not None:
            pairs += short
            # a trailing valued option takes the next word (``-k foo``, ``-n 4``)
            letters = w[1:]
            cut = next((j for j, c in enumerate(letters) if c in _SHORT_VALUED), None)
            skip = cut is not None and cut == len(letters) - 1
        elif w.startswith("--") and not eq and name in _VALUED:
            skip = True
        elif not w.startswith("-") and _test_path(w):
            pairs.append(("path", w))
    return tuple(sorted(pairs))


def kind(doc: dict[str, Any]) -> tuple[Any, ...]:
    """(backend key, profile name or None, :func:`selection`): two runs compare only
    when these are equal."""
    prof = doc.get("profile") if isinstance(doc.get("profile"), dict) else None
    return backend_key(doc), (prof or {}).get("name"), selection(doc)


def previous(out_dir: Path, doc: dict[str, Any]) -> tuple[Path, dict[str, Any]] | None:
    """(folder, report) of the previous intact bundle of ``doc``'s :func:`kind` beside
    ``out_dir``, or None."""
    out_dir = Path(out_dir)
    parent = out_dir.parent
    if not parent.is_dir():
        return None
    key, started = kind(doc), str(doc.get("started_utc") or "")
    found: list[tuple[str, Path, dict[str, Any]]] = []
    for report in parent.glob("*/report.json"):
        folder = report.parent
        if folder.resolve() == out_dir.resolve() or folder.is_symlink():
            continue
        try:
            old = reportfile.load(report)
        except (OSError, ValueError):
            continue
        when = str(old.get("started_utc") or "")
        if kind(old) == key and when < started:
            found.append((when, folder, old))
    for when, folder, old in sorted(found, key=lambda f: f[0], reverse=True):
        if not bundle_files.verify(folder).problems:
            return folder, old
    return None


def unlike(old: dict[str, Any], new: dict[str, Any], changes: dict[str, list]) -> list[str]:
    """Sentences saying how the two runs differ in kind: the profile's content (same
    name, another sha256 or version), the plugin library file (same backend key, another
    ``library_sha256``), the jax and jaxlib releases, the test set (tests
    only in one of them). Empty when they are alike."""
    out = []
    po, pn = old.get("profile") or {}, new.get("profile") or {}
    if (po.get("version"), po.get("sha256")) != (pn.get("version"), pn.get("sha256")):
        out.append(f"the profile changed: {po.get('name')} version {po.get('version')} "
                   f"(sha256 {str(po.get('sha256'))[:12]}) -> version {pn.get('version')} "
                   f"(sha256 {str(pn.get('sha256'))[:12]})")
    lo = ((old.get("platform") or {}).get("loaded") or {}).get("library_sha256")
    ln = ((new.get("platform") or {}).get("loaded") or {}).get("library_sha256")
    if lo and ln and lo != ln:   # same backend key, another library file (a rebuild)
        out.append(f"the plugin library changed: sha256 {lo[:12]} -> {ln[:12]}")
    for lib in ("jax", "jaxlib"):
        a, b = old["environment"].get(lib), new["environment"].get(lib)
        if a != b:
            out.append(f"the {lib} release changed: {a} -> {b}")
    if changes["added"] or changes["removed"]:
        out.append(f"the test set changed: {len(changes['added'])} test(s) only in this run, "
                   f"{len(changes['removed'])} only in the previous one (not counted as new "
                   "failures or fixes)")
    return out


def summary(out_dir: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The ``since_previous`` section of ``doc`` written to ``out_dir`` (see the module
    doc), or None when there is no previous bundle of its kind."""
    found = previous(out_dir, doc)
    if found is None:
        return None
    folder, old = found
    changes = diff.compare(old, doc)
    added = set(changes["added"])
    new_failures = [c for c in changes["new_failures"] if c[0] not in added]
    return {
        "bundle": folder.name,
        "started_utc": old.get("started_utc"),
        "verdict": old.get("verdict"),
        "unlike": unlike(old, doc, changes),
        "new_failures": [list(c) for c in new_failures[:SHOWN]],
        "new_failure_count": len(new_failures),
        "fixes": [list(c) for c in changes["fixes"][:SHOWN]],
        "fix_count": len(changes["fixes"]),
        "changed": len(changes["changed"]),
        "added": len(changes["added"]),
        "added_failing": len(changes["new_failures"]) - len(new_failures),
        "removed": len(changes["removed"]),
        "environment": [[k, o, n] for k, o, n in changes["environment"]
                        if k.startswith(("environment.", "verdict"))][:SHOWN],
    }
