"""The scoreboard: one table of the newest bundle of every backend under a reports folder.

``pjrt-conformance scoreboard REPORTS_DIR [--markdown FILE] [--html FILE]``.

Backends are keyed by the report header's platform name and the plugin library it
loaded (:func:`backend_key`): ``<platform> / <plugin, '_' as '-'>``, the plugin being the
last component of the installed package holding the library (its folder, by convention
the plugin's package, e.g. ``cpu / lammps-jax-pjrt-cpu``; ``cpu / xla-cpu-pjrt`` for
``xla_plugins.xla_cpu_pjrt``) or, for a library outside an installed package, its file
name up to the first dot (``cpu / libmyaccel-pjrt``), or ``<platform> / built-in`` when no
plugin library was loaded. Only the newest bundle (``started_utc``) of each key is shown,
an intact one before any that is not (a bundle dated in the future is not intact, so it
never passes for the newest; see :func:`collect`).
A backend folder whose ``attempt.json`` (``reports/certify-plugins.sh``) names no
bundle, and that has no bundle at all, gets a row saying why the attempt failed.

Per backend: the plugin verdict (certified or not, with the pass rate of
:func:`conformance.certification.verdict.pass_rate.pass_rate`, the one definition the
reports use too: passed / (tests run - not supported - skipped)) and the stack findings (the
two-part headline of
:func:`conformance.certification.verdict.plugin_verdict.headline`; for a bundle that predates it,
the overall ``verdict``, marked "(overall)"), the split of
non-pass results by ``attribution`` when the results carry it, each with its number of
root causes (distinct defect-catalog entries, plus each failing test no entry matches),
the suite, jax, jaxlib, plugin package and plugin C API versions, the date and the pass
rate per area (the same definition). Each column head names the bundle's profile.
Bundles under ``<REPORTS_DIR>/archive/`` are ignored (:func:`discover`). Every bundle is checked with
``bundle.verify``; one that fails, or whose report.json is malformed, is marked
"not intact" with the first problem, never trusted, never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import jinja2
import packaging.version

from conformance.certification import local_paths
from conformance.certification.verdict import plugin_verdict
from conformance.certification.results import attempt
from conformance.certification.attribution import attribution_sources
from conformance.certification.bundle import entries
from conformance.certification.bundle import bundle_files
from conformance.certification import jsontext
from conformance.certification.verdict import pass_rate
from conformance.certification.verdict.pass_rate import percent  # noqa: F401 (public here too)

BEGIN, END = "<!-- scoreboard:begin -->", "<!-- scoreboard:end -->"
ATTRIBUTIONS = ("plugin", "framework", "suite", "unattributed")
#: The folder of a reports tree whose bundles the scoreboard and docsgen ignore.
ARCHIVE = "archive"
_ENV = jinja2.Environment(loader=jinja2.PackageLoader("conformance", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined)


class ScoreboardError(ValueError):
    """The reports folder cannot give a scoreboard (missing, or holds no bundle)."""


@dataclasses.dataclass
class Row:
    """One backend. ``problem`` is set for a bundle that is not intact, a malformed
    report.json or an attempt without a bundle (then most fields are "")."""

    backend: str
    source: str
    verdict: str = ""
    split: dict[str, int] | None = None
    causes: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    pass_rate: str = ""
    plugin_package: str = ""
    suite: str = ""
    jaxlib: str = ""
    jax: str = ""
    c_api: str = ""
    profile: str = ""
    date: str = ""
    seconds: float | None = None
    tests: int = 0
    areas: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    problem: str = ""

    def band(self, area: str) -> str:
        """CSS class of ``area``'s cell by pass rate: ``full`` (all pass), ``high``
        (>= 90%), ``mid`` (>= 50%), ``low`` (< 50%, 0% included), ``none`` (absent, or
        nothing counted)."""
        passed, total = self.areas.get(area, (0, 0))
        if not total:
            return "none"
        pct = 100 * passed / total
        return "full" if passed == total else "high" if pct >= 90 else \
            "mid" if pct >= 50 else "low"

    def rate(self, area: str) -> str:
        """``passed/counted (pct%)`` of ``area`` (:mod:`..pass_rate`), ``n/a (none
        counted)`` when all its tests were skipped or not supported, "" when the bundle
        has no such area."""
        if area not in self.areas:
            return ""
        passed, total = self.areas[area]
        return f"{passed}/{total} ({percent(passed, total)})" if total else \
            "n/a (none counted)"


def backend_key(doc: dict[str, Any]) -> str:
    """``<platform> / <plugin>`` or ``<platform> / built-in`` (see module doc): the same
    key for a report still in memory (an absolute ``library_path``) and for its bundle
    (:func:`conformance.certification.local_paths.for_bundle`: ``library_locator``)."""
    platform = doc.get("platform") or {}
    loaded = platform.get("loaded") or {}
    return f"{platform.get('name', '?')} / {plugin_name(loaded)}"


def plugin_name(loaded: dict[str, Any]) -> str:
    """The plugin of ``loaded`` (a report's ``platform.loaded``), ``_`` as ``-``: the last
    component of the package holding its library (``xla_plugins.xla_cpu_pjrt``:
    ``xla-cpu-pjrt``, the library's folder as earlier scoreboards named it), else the
    library file's name up to its first dot (``/work/build/libA.so``: ``libA``: a
    library outside an installed package is only ``<redacted>/libA.so`` in a bundle);
    ``built-in`` when no plugin library was loaded."""
    library = loaded.get("library_path")
    if not library:
        return "built-in"
    library = str(library)
    locator = loaded.get("library_locator")
    if not isinstance(locator, dict):
        locator = {}
        if library.startswith("package "):   # "package NAME, FILE" without its locator
            package, _, file = library[len("package "):].partition(", ")
            locator = {"package": package, "file": file}
        else:
            locator = local_paths.library_locator(library) or {}
    if locator.get("package"):
        name = str(locator["package"]).rpartition(".")[2]
    else:
        name = str(locator.get("file") or library).replace("\\", "/").rpartition("/")[2]
        name = name.split(".")[0] or name
    return name.replace("_", "-")


def _verdict(doc: dict[str, Any]) -> str:
    if "stack_findings" in doc:  # the two-part verdict: ``verdict`` is the plugin's
        return plugin_verdict.headline(doc)
    plugin = doc.get("plugin_verdict")
    if isinstance(plugin, dict):
        plugin = plugin.get("verdict")
    return str(plugin) if plugin else f"{doc.get('verdict', '?')} (overall)"


def _failing(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failures: results that are not pass, waived, skipped or not_supported."""
    return [r for r in results
            if r.get("status") not in (*attribution_sources.NOT_FAILURES, "waived")]


def _split(results: list[dict[str, Any]]) -> dict[str, int] | None:
    """Failures (:func:`_failing`) per attribution; None when no result carries one."""
    if not any("attribution" in r for r in results):
        return None
    counts = {a: 0 for a in ATTRIBUTIONS}
    for r in _failing(results):
        key = r.get("attribution") or "unattributed"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _causes(results: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """{attribution: (cataloged root causes, uncataloged failing tests)} of the failures:
    a root cause is a defect-catalog entry (``defect.id``); a failure no entry matches
    counts as its own."""
    out: dict[str, tuple[set[str], int]] = {}
    for r in _failing(results):
        ids, loose = out.setdefault(r.get("attribution") or "unattributed", (set(), 0))
        defect = r.get("defect")
        if isinstance(defect, dict) and defect.get("id"):
            ids.add(str(defect["id"]))
        else:
            out[r.get("attribution") or "unattributed"] = (ids, loose + 1)
    return {a: (len(ids), loose) for a, (ids, loose) in out.items()}


def _profile(prof: Any) -> str:
    if not isinstance(prof, dict) or not prof:
        return "none"
    name, version = str(prof.get("name", "")), f"v{prof.get('version', '?')}"
    return version if name in ("", version) else f"{name} {version}"


def _row(path: Path, doc: dict[str, Any], problems: list[str]) -> Row:
    suite = doc["suite"]
    api = doc["platform"].get("pjrt_c_api_version")
    framework_api = doc["platform"].get("framework_pjrt_c_api_version")
    areas = {name: pass_rate.pass_rate(counts)
             for name, counts in sorted(doc.get("areas", {}).items())}
    sha = (suite.get("git_sha") or "")[:7]
    split = _split(doc["results"])
    package = doc["platform"].get("plugin_package") or {}
    return Row(backend=backend_key(doc), source=str(path), verdict=_verdict(doc),
               profile=_profile(doc.get("profile")), split=split,
               causes=_causes(doc["results"]),
               pass_rate=pass_rate.text(pass_rate.counts_of(doc["results"])),
               plugin_package=f"{package.get('distribution', '?')} {package.get('version', '?')}"
               if isinstance(package, dict) and package else "",
               suite=suite["version"] + (f" ({sha})" if sha else ""),
               jaxlib=str(doc.get("environment", {}).get("jaxlib", "")),
               jax=str(doc.get("environment", {}).get("jax", "")),
               c_api=(".".join(map(str, api)) + (f" (framework {'.'.join(map(str, framework_api))})"
                                                 if framework_api else "")) if api else "built-in",
               date=str(doc.get("started_utc", ""))[:16].replace("T", " "),
               seconds=doc.get("duration_s"), tests=len(doc["results"]), areas=areas,
               problem=f"not intact: {problems[0]}" if problems else "")


def _bundle_row(path: Path) -> tuple[Row, str]:
    """(row, started_utc) of the bundle at ``path``."""
    check = bundle_files.verify(path)
    try:
        doc = jsontext.loads(entries.read_text(path / "report.json"))   # never a FIFO
        return _row(path, doc, check.problems), str(doc.get("started_utc", ""))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        first = check.problems[0] if check.problems else f"{type(err).__name__}: {err}"
        return Row(backend=f"? ({path.parent.name})", source=str(path),
                   problem=f"not intact: report.json is malformed ({first})"), ""


def archived(path: Path, root: Path) -> bool:
    """True when ``path`` lies under ``root``'s :data:`ARCHIVE` folder (``reports/archive/
    ...``): a bundle moved there is kept but no longer shown. ValueError when ``path``
    is not under ``root``."""
    return Path(path).relative_to(root).parts[:1] == (ARCHIVE,)


def discover(root: Path, pattern: str = "**/report.json") -> list[Path]:
    """The files under ``root`` matching ``pattern`` (sorted), those under
    ``root/archive/`` left out (:func:`archived`)."""
    root = Path(root)
    return [p for p in sorted(root.glob(pattern)) if not archived(p, root)]


def collect(reports_dir: Path, passed_over: list[Row] | None = None) -> list[Row]:
    """The rows of ``reports_dir`` (bundles under its ``archive/`` folder ignored): the
    newest bundle per backend key and jaxlib release
    (a column per release: the release matrix's bundles side by side), then failed
    attempts of backend folders without a bundle. An intact bundle always wins over one
    that is not (a bundle dated in the future, or tampered, never passes for the newest):
    one that is not intact is shown only when its backend has no intact bundle, and
    each one passed over that is newer than the row shown is appended to
    ``passed_over`` (when given). Raises ScoreboardError when the folder is missing or
    holds neither a bundle nor an attempt record."""
    root = Path(reports_dir)
    if not root.is_dir():
        raise ScoreboardError(f"{root} is not a directory")
    newest: dict[str, tuple[tuple[bool, str], Row]] = {}   # (intact, started_utc), row
    later_broken: dict[str, list[tuple[str, Row]]] = {}
    broken: list[Row] = []
    for report in discover(root):
        row, started = _bundle_row(report.parent)
        if row.backend.startswith("?"):
            broken.append(row)
        else:
            key = f"{row.backend} @ {row.jaxlib}"
            rank = (not row.problem, started)
            later_broken.setdefault(key, [])
            if row.problem:
                later_broken[key].append((started, row))
            if key not in newest or rank > newest[key][0]:
                newest[key] = (rank, row)
    for key, ((intact, started), _) in newest.items():
        if intact and passed_over is not None:
            passed_over += [row for when, row in later_broken[key] if when > started]
    rows = [row for _, row in sorted(newest.values(),
                                     key=lambda x: (x[1].backend, release_key(x[1].jaxlib)))]
    rows += broken
    for path in discover(root, "*/attempt.json"):
        if any(Path(r.source).parent == path.parent for r in rows):
            continue
        try:
            rec = attempt.read(path)
        except ValueError as err:
            rows.append(Row(backend=f"? ({path.parent.name})", source=str(path),
                            problem=f"malformed attempt record: {err}"))
            continue
        rows.append(Row(backend=f"cpu / {rec['package'] or 'built-in'}", source=str(path),
                        verdict="no bundle", date=str(rec["utc"])[:16].replace("T", " "),
                        seconds=rec["seconds"],
                        problem=f"did not run (exit {rec['exit_code']}): {rec['error']}"))
    if not rows:
        raise ScoreboardError(f"{root} holds no report bundle (report.json) and no "
                              "attempt.json")
    return rows


def release_key(text: str) -> tuple:
    """A jaxlib version as a sort key (unparsable text sorts first)."""
    try:
        return (1, packaging.version.Version(text))
    except packaging.version.InvalidVersion:
        return (0, text)


def areas_of(rows: list[Row]) -> list[str]:
    return sorted({a for r in rows for a in r.areas})


def split_text(split: dict[str, int] | None) -> str:
    if split is None:
        return "n/a (no attribution in bundle)"
    return ", ".join(f"{k} {v}" for k, v in split.items() if v) or "none"


def failures_text(row: Row, who: str) -> str:
    """``N tests, K root causes (U uncataloged)`` of attribution ``who`` ("0" without
    any; "n/a" when the bundle's results carry no attribution)."""
    if row.split is None:
        return "n/a (no attribution in bundle)"
    tests = row.split.get(who, 0)
    if not tests:
        return "0"
    ids, loose = row.causes.get(who, (0, 0))
    causes = ids + loose
    return (f"{tests} test{'s' if tests != 1 else ''}, {causes} root cause"
            f"{'s' if causes != 1 else ''}" + (f" ({loose} uncataloged)" if loose else ""))


def verdict_word(row: Row) -> str:
    """``certified`` / ``not certified`` / ``incomplete``... : the plugin verdict alone."""
    return row.verdict.removeprefix("plugin: ").split(" | ")[0].removesuffix(" (overall)")


def groups(rows: list[Row]) -> list[tuple[str, int]]:
    """(backend, number of consecutive columns) for a header row without repeats."""
    out: list[tuple[str, int]] = []
    for r in rows:
        if out and out[-1][0] == r.backend:
            out[-1] = (r.backend, out[-1][1] + 1)
        else:
            out.append((r.backend, 1))
    return out


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(rows: list[Row]) -> str:
    """The table (backends as columns) with a note on how it was made."""
    head = ["", *[f"**{r.backend}** ({r.profile or 'no profile'})" for r in rows]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def line(label: str, values: list[str]) -> None:
        lines.append("| " + " | ".join([label, *map(_cell, values)]) + " |")

    line("plugin verdict", [r.problem or r.verdict for r in rows])
    line("pass rate", [r.pass_rate for r in rows])
    for who in ATTRIBUTIONS:
        line(f"{who} failures", [failures_text(r, who) if not r.problem else "" for r in rows])
    line("tests", [str(r.tests or "") for r in rows])
    line("suite", [r.suite for r in rows])
    line("jax", [r.jax for r in rows])
    line("jaxlib", [r.jaxlib for r in rows])
    line("plugin package", [r.plugin_package for r in rows])
    line("PJRT C API (plugin, framework)", [r.c_api for r in rows])
    line("profile", [r.profile for r in rows])
    line("date (UTC)", [r.date for r in rows])
    line("run time", [f"{r.seconds:.0f} s" if r.seconds is not None else "" for r in rows])
    for area in areas_of(rows):
        line(f"`{area}`", [r.rate(area) for r in rows])
    line("bundle", [f"`{r.source}`" for r in rows])
    note = (f"{pass_rate.DEFINITION[0].upper()}{pass_rate.DEFINITION[1:]} The same rate per area. "
            "Column heads name the profile. Newest bundle per backend (platform / plugin "
            "library folder) and jaxlib release, bundles under `archive/` ignored; generated "
            "by `pjrt-conformance scoreboard`.")
    return "\n".join(lines) + "\n\n" + note + "\n"


def render_html(rows: list[Row], page_dir: Path | None = None) -> str:
    """One self-contained HTML page (inline CSS, no scripts, no external files).
    ``page_dir``: the folder the page is written to; each bundle then links to its
    ``report.html`` by a path relative to it (no link when None or absent)."""
    links = {}
    for r in rows:
        target = Path(r.source) / "report.html"
        if page_dir is not None and target.is_file():
            links[r.source] = os.path.relpath(target.resolve(), Path(page_dir).resolve())
    return _ENV.get_template("scoreboard.html.j2").render(
        rows=rows, areas=areas_of(rows), links=links, groups=groups(rows),
        attributions=ATTRIBUTIONS, failures_text=failures_text, verdict_word=verdict_word,
        definition=pass_rate.DEFINITION)


def insert_markdown(path: Path, table: str) -> None:
    """Put ``table`` between the BEGIN/END markers of ``path`` (appended with markers when
    the file has none; the file is created when missing). Raises ScoreboardError when
    the markers are out of order or repeated."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{BEGIN}\n{table.rstrip()}\n{END}"
    if BEGIN not in text and END not in text:
        path.write_text((text.rstrip() + "\n\n" if text.strip() else "") + block + "\n",
                        encoding="utf-8")
        return
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ScoreboardError(f"{path}: needs exactly one {BEGIN} before one {END}")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")
