"""Docs that cannot drift: the README's numbers and ``reports/README.md``'s bundle list,
generated from the committed bundles (``reports/<platform>/<UTC stamp>/report.json``).

Generated text sits between markers ``<!-- BEGIN generated: NAME -->`` and
``<!-- END generated: NAME -->``; everything else is hand-written and left alone.

    python -m conformance.docsgen            # rewrite the generated sections
    python -m conformance.docsgen --check    # exit 1 naming each stale section

Sections: ``cpu-bundle`` in ``README.md`` (the newest CPU bundle: status counts, per-area
table) and ``bundles`` in ``reports/README.md`` (one row per committed bundle, newest
first). The project's self-tests run ``--check``, so a new bundle without regenerated
docs fails CI.

Committed means tracked by git (``git ls-files reports/``: in the index, so ``git add``
of a new bundle is enough before regenerating). A bundle that a run just wrote into the
clone (README command 1 writes ``reports/cpu/<stamp>/``) is untracked and counts for
neither the generated text nor ``--check``: running the README's commands in their order
in one clone never makes the docs stale. Where ``--root`` is not the top of a git work
tree (an unpacked source archive, no ``git``), there is no record of what is committed,
and every bundle on disk counts (:func:`committed_folders` returns None).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from conformance.certification.rendering import failure_view
from conformance.certification.compare import scoreboard
from conformance.certification.verdict import plugin_verdict
from conformance.certification.catalog.profiles import DEFAULT_PROFILE

ROOT = Path(__file__).resolve().parents[1]
_MARKERS = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                      r"(<!-- END generated: (?P=name) -->)", re.S)
_COLUMNS = (("pass", ("pass",)), ("wrong result", ("fail_wrong_result",)),
            ("error", ("fail_error",)), ("crash", ("crash",)), ("timeout", ("timeout",)),
            ("not supported / skipped", ("not_supported", "skipped")), ("waived", ("waived",)))


@dataclasses.dataclass
class Bundle:
    """One committed bundle: ``folder`` relative to ``reports/`` and its report.json."""

    folder: str
    doc: dict[str, Any]


def committed_folders(root: Path) -> set[str] | None:
    """The bundle folders (``<platform>/<stamp>``, as :attr:`Bundle.folder`) whose
    ``report.json`` git tracks under ``root/reports``; None when ``root`` is not the top
    of a git work tree, or git is not installed (then every bundle on disk counts)."""
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() != root.resolve():
        return None  # not a checkout, or a folder inside someone else's repository
    listed = git("ls-files", "-z", "--", "reports")
    if listed is None:
        return None
    return {"/".join(parts[1:3]) for parts in (p.split("/") for p in listed.split("\0"))
            if len(parts) == 4 and parts[3] == "report.json"}


def bundles(reports: Path, only: Collection[str] | None = None) -> list[Bundle]:
    """Every ``<platform>/<stamp>/report.json`` under ``reports`` (not ``archive/``),
    newest stamp first;
    with ``only``, the folders it names (``<platform>/<stamp>``) only. Raises ValueError
    naming the file when one is not a JSON object."""
    found = []
    for path in scoreboard.discover(reports, "*/*/report.json"):   # archive/ left out
        if only is not None and f"{path.parent.parent.name}/{path.parent.name}" not in only:
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not readable JSON: {err}") from err
        if not isinstance(doc, dict) or "summary" not in doc:
            raise ValueError(f"{path}: not a report document")
        found.append(Bundle(f"{path.parent.parent.name}/{path.parent.name}", doc))
    return sorted(found, key=lambda b: (b.folder.split("/")[1], b.folder), reverse=True)


def _counts(doc: dict[str, Any]) -> str:
    by = doc["summary"]["by_status"]
    return ", ".join(f"{n} {s}" for s, n in by.items() if n)


def _backend(doc: dict[str, Any]) -> str:
    p, env = doc["platform"], doc.get("environment", {})
    loaded = p.get("loaded") or {}
    how = loaded.get("how") or "unknown"
    if loaded.get("library_path"):
        how += f" `{Path(loaded['library_path']).name}`"
    kinds = ", ".join(sorted(set(p.get("device_kinds") or []))) or "?"
    return (f"{failure_view.display_platform(doc)}: {how}, jax {env.get('jax', '?')} / jaxlib "
            f"{env.get('jaxlib', '?')}, {p.get('local_device_count', '?')} device(s) ({kinds})")


def _known(doc: dict[str, Any]) -> str:
    failures = doc.get("failures") or []
    known = sum(1 for f in failures if f.get("known_failure"))
    return f"; {known} of {len(failures)} failures match a known-failure entry" if failures \
        else ""


def bundle_table(found: list[Bundle]) -> str:
    """The Markdown table of ``reports/README.md``: folder, profile, backend, command,
    result (verdict, status counts, known failures matched, duration)."""
    rows = ["| folder | profile | backend | command | result |", "|---|---|---|---|---|"]
    for b in found:
        d = b.doc
        prof = d.get("profile")
        profile = (f"{prof['name']} ({prof['tests']} ids, {d['summary']['collected']} tests)"
                   if prof else "none")
        rows.append(
            f"| `{b.folder}/` | {profile} | {_backend(d)} | "
            f"`{failure_view.display_command(d)}` | {d['verdict']}: {_counts(d)}{_known(d)}; "
            f"{d.get('duration_s', 0):.0f} s |")
    return "\n".join(rows) + "\n"


def cpu_section(found: list[Bundle]) -> str:
    """The README's numbers: among the ``cpu/`` bundles on the default profile
    (``DEFAULT_PROFILE``), the one of the newest jaxlib release (the newest stamp among
    that release's bundles): its counts and per-area table. A bundle on an older profile
    is never named, so the README never quotes a suite that no longer runs."""
    cpus = [b for b in found if b.folder.startswith("cpu/")  # newest stamp first
            and (b.doc.get("profile") or {}).get("name") == DEFAULT_PROFILE]
    cpu = max(cpus, default=None, key=lambda b: scoreboard.release_key(
        str(b.doc.get("environment", {}).get("jaxlib", ""))))
    if cpu is None:
        return f"No CPU bundle on the default profile ({DEFAULT_PROFILE}) is committed.\n"
    d = cpu.doc
    by = d["summary"]["by_status"]
    lines = [f"The committed CPU bundle `reports/{cpu.folder}/` (profile "
             f"{(d.get('profile') or {}).get('name', 'none')}, jaxlib "
             f"{d.get('environment', {}).get('jaxlib', '?')}, "
             f"{d['platform'].get('local_device_count', '?')} devices): "
             f"**{plugin_verdict.headline(d)}**, {d['summary']['collected']} tests: "
             f"{by.get('pass', 0)} pass, {by.get('fail_wrong_result', 0)} wrong results, "
             f"{by.get('fail_error', 0)} `fail_error`, {by.get('crash', 0)} crashes, "
             f"{by.get('timeout', 0)} timeouts, {by.get('skipped', 0)} skipped"
             f"{_known(d)}.", "",
             "| area | tests | " + " | ".join(c for c, _ in _COLUMNS) + " |",
             "|---|---:|" + "---:|" * len(_COLUMNS)]
    for area, counts in d["areas"].items():
        lines.append(f"| {area} | {sum(counts.values())} | " + " | ".join(
            str(sum(counts.get(s, 0) for s in ss)) for _, ss in _COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def sections(root: Path) -> dict[Path, dict[str, str]]:
    """File -> section name -> generated body, for the project at ``root``, from its
    committed bundles (:func:`committed_folders`; all of them outside a git checkout)."""
    found = bundles(root / "reports", committed_folders(root))
    return {root / "README.md": {"cpu-bundle": cpu_section(found)},
            root / "reports" / "README.md": {"bundles": bundle_table(found)}}


def fill(text: str, bodies: dict[str, str], *, source: str = "text") -> str:
    """``text`` with each marked section's body replaced. Raises ValueError naming
    ``source`` when a section of ``bodies`` has no markers."""
    missing = set(bodies) - {m.group("name") for m in _MARKERS.finditer(text)}
    if missing:
        raise ValueError(f"{source}: no '<!-- BEGIN generated: NAME -->' ... '<!-- END "
                         f"generated: NAME -->' markers for {sorted(missing)}")
    return _MARKERS.sub(lambda m: m.group(1) + bodies.get(m.group("name"), m.group("body"))
                        + m.group(4), text)


def stale(root: Path) -> list[str]:
    """The generated sections under ``root`` that differ from the bundles (file: names)."""
    out = []
    for path, bodies in sections(root).items():
        text = path.read_text()
        if fill(text, bodies, source=str(path)) != text:
            current = {m.group("name"): m.group("body") for m in _MARKERS.finditer(text)}
            names = [n for n, body in bodies.items() if current.get(n) != body]
            out.append(f"{path.relative_to(root)}: {', '.join(names)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.docsgen",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a generated section is stale (writes nothing)")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root (default: %(default)s)")
    ns = parser.parse_args(argv)
    try:
        if ns.check:
            bad = stale(ns.root)
            for line in bad:
                print(f"stale generated docs: {line}; regenerate with: python -m "
                      "conformance.docsgen", file=sys.stderr)
            return 1 if bad else 0
        for path, bodies in sections(ns.root).items():
            path.write_text(fill(path.read_text(), bodies, source=str(path)))
    except (OSError, ValueError) as err:
        print(f"conformance.docsgen: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
