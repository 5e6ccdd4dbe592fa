"""``pjrt-conformance catalog bisect``: measure each catalog entry's release bounds.

Every defect of the catalog (``conformance/defects/*.toml``) names a standalone
reproduction (``repro``, a script under ``docs/repro/`` or ``docs/upstream/``). This
command runs each reproduction in each *release environment* (a Python interpreter with
one jax/jaxlib release installed), each run in its own child process (its own session,
killed with its children at ``--timeout`` seconds), classifies the outcome and writes
into the entry a ``measured`` table: the first affected and first fixed release, the
date, and the release, jax, jaxlib and Python versions of every run. The catalog's
version range for matching then comes from those bounds
(:attr:`conformance.certification.catalog.defect_catalog.Defect.requirement`).

Outcome of one run (:func:`classify`): exit 0 ``absent``; exit 3 ``present``; exit 4
``untestable`` (the script cannot test here: no GPU, too few devices); killed by a
signal: ``present`` when the entry expects ``crash``, else ``error``; past the timeout:
``present`` when the entry expects ``timeout``, else ``error``; any other exit status
(an uncaught Python exception exits 1) ``error``. Only ``present``/``absent`` runs
count for the bounds (:func:`bounds`).

Release environments: ``--env [RELEASE=]PYTHON`` (repeatable) or ``--matrix DIR`` (every
``DIR/*/bin/python``). Each interpreter is asked for its jax, jaxlib and Python
versions; the release is its jaxlib version, and a given ``RELEASE`` must equal it.

An entry whose runs are all ``untestable`` (a GPU defect measured on CPU-only
environments) gets its runs recorded without bounds; its range stays ``affects``.

Exit status: 0 every testable entry was measured; 1 the catalog was written but some entry
has an ``error`` run or reproduced on no release where it could be tested (listed); 2 usage
error (bad option, no
environment, an interpreter without jax/jaxlib, a missing reproduction script).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from conformance.certification.catalog import defect_catalog

#: The outcomes of one run; only the first two count for the bounds.
PRESENT, ABSENT, UNTESTABLE, ERROR = "present", "absent", "untestable", "error"
#: The version probe, run by path with each environment's interpreter (see the file).
_PROBE = str(Path(__file__).with_name("release_probe.py"))


class UsageError(ValueError):
    """A bad option value; the message names the option."""


@dataclasses.dataclass(frozen=True)
class ReleaseEnv:
    """One release environment: ``python`` (path of the interpreter) with ``jax`` and
    ``jaxlib`` installed; ``release`` is its jaxlib version; ``py`` its Python version."""

    release: str
    python: str
    jax: str
    jaxlib: str
    py: str


@dataclasses.dataclass(frozen=True)
class Run:
    """One reproduction run: ``outcome`` (present/absent/untestable/error), ``detail``
    (why, for a signal, a timeout or an error), ``seconds`` (wall time)."""

    env: ReleaseEnv
    outcome: str
    detail: str = ""
    seconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class Bounds:
    """Bounds measured from an entry's runs (release versions, None when not seen):
    ``first_affected``, ``first_fixed`` (the first release after the last affected one;
    None while the newest release is affected), ``newest`` (the newest release with a
    present/absent outcome), ``warning`` (a non-monotone history or no usable run)."""

    first_affected: str | None
    first_fixed: str | None
    newest: str | None
    warning: str = ""


def _probe(python: str, option: str, timeout: float) -> tuple[str, str, str]:
    if not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise UsageError(f"{option}: {python} is not an executable file (give a Python "
                         "interpreter, e.g. /tmp/venvs/jax-0.10.2/bin/python)")
    try:
        proc = subprocess.run([python, "-I", _PROBE], capture_output=True, text=True,
                              timeout=timeout, env=_child_env())
    except subprocess.TimeoutExpired as err:
        raise UsageError(f"{option}: {python} did not answer in {timeout:.0f} s") from err
    parts = proc.stdout.split()
    if proc.returncode != 0 or len(parts) != 3:
        raise UsageError(f"{option}: {python} has no jax/jaxlib installed "
                         f"({(proc.stderr.strip().splitlines() or ['?'])[-1]})")
    return parts[0], parts[1], parts[2]


def resolve_envs(envs: list[str], matrix: str | None, timeout: float = 120) -> list[ReleaseEnv]:
    """The release environments of ``--env [RELEASE=]PYTHON`` values and ``--matrix DIR``,
    sorted by release. UsageError naming the option for a bad value, an interpreter
    without jax/jaxlib, a RELEASE that is not its jaxlib version, a release given twice
    or no environment at all."""
    given: list[tuple[str, str | None, str]] = []
    for text in envs:
        label, eq, python = text.rpartition("=") if "=" in text else (None, "", text)
        if eq and not label or not python:
            raise UsageError(f"--env {text!r}: expected [RELEASE=]PYTHON, e.g. "
                             "0.10.2=/tmp/venvs/jax-0.10.2/bin/python")
        given.append((f"--env {text}", label or None, python))
    if matrix is not None:
        root = Path(matrix)
        if not root.is_dir():
            raise UsageError(f"--matrix {matrix}: no such directory")
        found = sorted(root.glob("*/bin/python"))
        if not found:
            raise UsageError(f"--matrix {matrix}: no */bin/python under it (one venv per "
                             "jax release)")
        given += [(f"--matrix {matrix} ({p.parent.parent.name})", None, str(p)) for p in found]
    if not given:
        raise UsageError("no release environment: give --env [RELEASE=]PYTHON (repeatable) "
                         "or --matrix DIR")
    out: dict[str, ReleaseEnv] = {}
    for option, label, python in given:
        jax_v, jaxlib_v, py = _probe(python, option, timeout)
        if label is not None:
            try:
                same = Version(label) == Version(jaxlib_v)
            except InvalidVersion as err:
                raise UsageError(f"{option}: {label!r} is not a release version") from err
            if not same:
                raise UsageError(f"{option}: the interpreter has jaxlib {jaxlib_v}, not {label}")
        # absolute (each run's working directory is a temporary one), links kept: a
        # venv's bin/python is a link whose own path selects the venv
        env = ReleaseEnv(jaxlib_v, os.path.abspath(python), jax_v, jaxlib_v, py)
        if env.release in out:
            raise UsageError(f"{option}: release {env.release} is already given by "
                             f"{out[env.release].python}")
        out[env.release] = env
    return sorted(out.values(), key=lambda e: Version(e.release))


def _child_env() -> dict[str, str]:
    """The environment of a child: this one without PYTHONPATH (a reproduction must not
    import this project) and without user site-packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def classify(returncode: int | None, expected: tuple[str, ...], timed_out: bool,
             stderr: str = "") -> tuple[str, str]:
    """(outcome, detail) of one run: see the module docstring. ``returncode``: the child's
    status (negative: killed by that signal; ignored when ``timed_out``)."""
    last = (stderr.strip().splitlines() or [""])[-1][-200:]
    if timed_out:
        return (PRESENT, "timed out") if "timeout" in expected else (ERROR, "timed out")
    if returncode == 0:
        return ABSENT, ""
    if returncode == defect_catalog.REPRODUCED:
        return PRESENT, ""
    if returncode == defect_catalog.UNTESTABLE:
        return UNTESTABLE, last
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        detail = f"killed by {name}"
        return (PRESENT, detail) if "crash" in expected else (ERROR, detail)
    return ERROR, f"exit {returncode}: {last}"


def run_one(defect: defect_catalog.Defect, env: ReleaseEnv, root: Path, timeout: float) -> Run:
    """Run ``defect``'s reproduction (``root / defect.repro``) with ``env``'s interpreter
    in a fresh temporary directory; the child's whole process group is killed at
    ``timeout`` seconds."""
    script = root / defect.repro
    start = datetime.datetime.now()
    with tempfile.TemporaryDirectory(prefix="catalog-bisect-") as cwd:
        proc = subprocess.Popen([env.python, str(script), *defect.repro_args], cwd=cwd,
                                env=_child_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # grandchildren left behind
            except ProcessLookupError:
                pass
    outcome, detail = classify(proc.returncode, defect.expected, timed_out, err)
    return Run(env, outcome, detail, (datetime.datetime.now() - start).total_seconds())


def bounds(runs: list[Run]) -> Bounds:
    """The bounds of an entry's runs (see :class:`Bounds`)."""
    usable = sorted((r for r in runs if r.outcome in (PRESENT, ABSENT)),
                    key=lambda r: Version(r.env.release))
    if not usable:
        return Bounds(None, None, None, "no release gave a present/absent outcome")
    present = [i for i, r in enumerate(usable) if r.outcome == PRESENT]
    newest = usable[-1].env.release
    if not present:
        return Bounds(None, None, newest, "reproduced on no release")
    first, last = present[0], present[-1]
    warning = ""
    gaps = [r.env.release for r in usable[first:last] if r.outcome == ABSENT]
    if gaps:
        warning = f"not monotone: absent on {', '.join(gaps)} between affected releases"
    fixed = usable[last + 1].env.release if last + 1 < len(usable) else None
    return Bounds(usable[first].env.release, fixed, newest, warning)


def bisect(defects: list[defect_catalog.Defect], envs: list[ReleaseEnv], root: Path,
           timeout: float, jobs: int = 1,
           progress: Any = None) -> dict[str, list[Run]]:
    """The runs of every defect's reproduction in every environment, by defect id
    (``jobs`` runs at a time; ``progress(defect, run)`` is called after each run)."""
    tasks = [(d, e) for d in defects for e in envs]
    runs: dict[str, list[Run]] = {d.id: [] for d in defects}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_one, d, e, root, timeout): d for d, e in tasks}
        for fut in concurrent.futures.as_completed(futures):
            d = futures[fut]
            run = fut.result()
            runs[d.id].append(run)
            if progress is not None:
                progress(d, run)
    for rs in runs.values():
        rs.sort(key=lambda r: Version(r.env.release))
    return runs


def measured_table(runs: list[Run], b: Bounds, date: str) -> dict[str, Any]:
    """The ``measured`` table written into an entry."""
    table: dict[str, Any] = {"date": date, "package": "jaxlib"}
    if b.first_affected:
        table["first_affected"] = b.first_affected
    if b.first_fixed:
        table["first_fixed"] = b.first_fixed
    table["newest"] = b.newest or (runs[-1].env.release if runs else "")
    rows = []
    for r in runs:
        row = {"release": r.env.release, "jax": r.env.jax, "jaxlib": r.env.jaxlib,
               "python": r.env.py, "outcome": r.outcome}
        if r.detail:
            row["detail"] = r.detail
        rows.append(row)
    table["runs"] = rows
    return table


def _release_requirement(text: str) -> bool:
    return Requirement(text).name in defect_catalog.RELEASE_PACKAGES


def write(files: list[Path], tables: dict[str, dict[str, Any]]) -> list[Path]:
    """Write each entry's ``measured`` table (``tables`` by defect id) into the catalog
    ``files`` (comments and layout kept, tomlkit); an entry with bounds loses its
    jax/jaxlib ``affects`` (the bounds replace them). Returns the files changed."""
    changed = []
    for path in files:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
        touched = False
        for entry in doc["defect"]:
            table = tables.get(str(entry["id"]))
            if table is None:
                continue
            touched = True
            if "measured" in entry:
                del entry["measured"]
            if "first_affected" in table and "affects" in entry:
                keep = [str(a) for a in entry["affects"] if not _release_requirement(str(a))]
                if keep:
                    entry["affects"] = keep
                else:
                    del entry["affects"]
            out = tomlkit.table()
            for key, value in table.items():
                if key != "runs":
                    out[key] = value
            rows = tomlkit.array()
            rows.multiline(True)
            for row in table["runs"]:
                inline = tomlkit.inline_table()
                inline.update(row)
                rows.append(inline)
            out["runs"] = rows
            out.add(tomlkit.nl())
            entry["measured"] = out
        if touched:
            path.write_text(tomlkit.dumps(doc), encoding="utf-8")
            changed.append(path)
    return changed


def catalog_files(paths: list[str]) -> list[Path]:
    """The catalog files of ``--catalog`` values (files or directories; default: the
    shipped catalog). UsageError naming ``--catalog`` for a missing path."""
    out: list[Path] = []
    for p in paths or [str(defect_catalog.shipped_dir())]:
        path = Path(p)
        if path.is_dir():
            out += sorted(path.glob("*.toml"))
        elif path.is_file():
            out.append(path)
        else:
            raise UsageError(f"--catalog {p}: no such file or directory")
    if not out:
        raise UsageError(f"--catalog {paths}: no .toml file")
    return out


def default_root(files: list[Path]) -> Path:
    """The repository holding the catalog (``<root>/conformance/defects/x.toml``)."""
    return files[0].resolve().parent.parent.parent


_MARK = {PRESENT: "P", ABSENT: ".", UNTESTABLE: "-", ERROR: "E"}


def render(defects: list[defect_catalog.Defect], runs: dict[str, list[Run]],
           envs: list[ReleaseEnv]) -> list[str]:
    """The outcome table (P present, . absent, - untestable, E error) and one line per
    fixed, unreproduced or errored entry."""
    width = max(len(d.id) for d in defects)
    lines = [" " * width + "  " + " ".join(e.release.rjust(8) for e in envs)]
    notes = []
    for d in defects:
        by = {r.env.release: r for r in runs[d.id]}
        lines.append(d.id.ljust(width) + "  " + " ".join(
            _MARK[by[e.release].outcome].rjust(8) for e in envs))
        b = bounds(runs[d.id])
        if b.first_fixed:
            notes.append(f"FIXED {d.id}: affected from {b.first_affected}, fixed in "
                         f"{b.first_fixed} (newest tested {b.newest} is not affected)")
        elif b.first_affected:
            notes.append(f"present {d.id}: affected from {b.first_affected} to the newest "
                         f"tested {b.newest}")
        elif runs[d.id] and all(r.outcome == UNTESTABLE for r in runs[d.id]):
            notes.append(f"untestable {d.id}: on every release here (its range stays "
                         f"'affects': {', '.join(d.affects) or '-'})")
        else:
            notes.append(f"NOT MEASURED {d.id}: {b.warning}")
        if b.warning and b.first_affected:
            notes.append(f"WARNING {d.id}: {b.warning}")
        for r in runs[d.id]:
            if r.outcome == ERROR:
                notes.append(f"ERROR {d.id} on {r.env.release}: {r.detail}")
    lines.append("P present  . absent  - untestable here  E error")
    return lines + notes


def add_parser(sub: Any) -> None:
    """``catalog bisect`` under the CLI's subcommands."""
    cat = sub.add_parser("catalog", help="work on the defect catalog")
    csub = cat.add_subparsers(dest="catalog_command", required=True)
    p = csub.add_parser("bisect", help="run every entry's reproduction in each release "
                        "environment and write the measured bounds into the catalog")
    p.add_argument("--env", action="append", default=[], metavar="[RELEASE=]PYTHON",
                   help="a release environment's interpreter (repeatable)")
    p.add_argument("--matrix", metavar="DIR", help="every DIR/*/bin/python is an environment")
    p.add_argument("--catalog", action="append", default=[], metavar="PATH",
                   help="catalog file or directory (default: the shipped catalog)")
    p.add_argument("--root", metavar="DIR", help="the repository the reproduction paths are "
                   "relative to (default: the one holding the catalog)")
    p.add_argument("--only", action="append", default=[], metavar="ID",
                   help="only this defect id (repeatable)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds per reproduction run (default 300)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="runs at a time (default 1)")
    p.add_argument("--no-write", action="store_true", help="print the outcomes only")
    p.add_argument("--date", help="the date recorded (YYYY-MM-DD; default today, UTC)")


def main(ns: argparse.Namespace) -> int:
    """Run ``catalog bisect`` (see the module docstring for the exit status)."""
    try:
        if ns.timeout <= 0:
            raise UsageError(f"--timeout {ns.timeout}: must be > 0 seconds")
        if ns.jobs < 1:
            raise UsageError(f"--jobs {ns.jobs}: must be >= 1")
        date = ns.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        try:
            datetime.date.fromisoformat(date)
        except ValueError as err:
            raise UsageError(f"--date {date!r}: expected YYYY-MM-DD") from err
        files = catalog_files(ns.catalog)
        try:
            defects = [d for f in files for d in defect_catalog.load_file(f)]
        except ValueError as err:
            raise UsageError(f"--catalog: {err}") from err
        if ns.only:
            unknown = sorted(set(ns.only) - {d.id for d in defects})
            if unknown:
                raise UsageError(f"--only: no such defect id {unknown}")
            defects = [d for d in defects if d.id in ns.only]
        root = Path(ns.root) if ns.root else default_root(files)
        missing = [f"{d.id}: {d.repro or '(no repro)'}" for d in defects
                   if not d.repro or not (root / d.repro).is_file()]
        if missing:
            raise UsageError(f"--root {root}: reproduction script(s) not found: "
                             f"{'; '.join(missing)} (run from a checkout of the repository "
                             "or give --root)")
        envs = resolve_envs(ns.env, ns.matrix)
    except UsageError as err:
        print(f"pjrt-conformance catalog bisect: {err}", file=sys.stderr)
        return 2
    print(f"{len(defects)} entries x {len(envs)} releases: "
          + ", ".join(f"{e.release} (py {e.py})" for e in envs), flush=True)

    def progress(d: defect_catalog.Defect, r: Run) -> None:
        print(f"  {d.id} on {r.env.release}: {r.outcome}"
              f"{' (' + r.detail + ')' if r.detail else ''} [{r.seconds:.1f} s]", flush=True)

    runs = bisect(defects, envs, root, ns.timeout, ns.jobs, progress)
    for line in render(defects, runs, envs):
        print(line)
    tables = {}
    bad = False
    for d in defects:
        b = bounds(runs[d.id])
        bad |= (b.newest is not None and b.first_affected is None) or any(
            r.outcome == ERROR for r in runs[d.id])
        if runs[d.id]:
            tables[d.id] = measured_table(runs[d.id], b, date)
    if not ns.no_write:
        for path in write(files, tables):
            print(f"wrote {path}")
    return 1 if bad else 0
