"""Conformance history: the pass rate per area of every committed bundle, per backend.

Every ``report.json`` under the reports folder (``reports/<backend>/<stamp>/``) is
read with :func:`conformance.certification.bundle.reportfile.load` (schema-checked); its
results give area (:func:`conformance.certification.results.records.area_of`) and status.
Pass rate of an area: the one definition of the scoreboard and the report
(:mod:`conformance.certification.verdict.pass_rate`: passed / (tests run - not supported
- skipped)). Bundles under ``reports/archive/`` are not shown
(:func:`conformance.certification.compare.scoreboard.discover`). Backends are keyed as on the scoreboard
(:func:`conformance.certification.compare.scoreboard.backend_key`). A bundle that does not
load, or that ``verify`` finds not intact (a tampered bundle is never drawn as
genuine), is kept as a :class:`Broken` entry with the reason.
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any

from conformance.certification.results import records
from conformance.certification.bundle import reportfile
from conformance.certification.compare import scoreboard
from conformance.certification.verdict import pass_rate
from conformance.certification.compare.scoreboard import backend_key
from conformance.dashboard.errors import UsageError


@dataclasses.dataclass(frozen=True)
class Bundle:
    """One bundle: ``areas[area] = (passed, total)``; ``version`` names jaxlib, the
    plugin's PJRT C API and the suite commit; ``release`` is the jaxlib version ("" when
    the bundle does not name it)."""

    backend: str
    path: Path
    started: datetime.datetime
    version: str
    areas: dict[str, tuple[int, int]]
    release: str = ""

    @property
    def passed(self) -> int:
        return sum(p for p, _ in self.areas.values())

    @property
    def total(self) -> int:
        return sum(t for _, t in self.areas.values())

    def counts(self, area: str | None = None) -> tuple[int, int]:
        """(passed, total) of ``area`` (all areas when None; (0, 0) when absent)."""
        return self.areas.get(area, (0, 0)) if area else (self.passed, self.total)

    def share(self, area: str | None = None) -> str:
        """``rate`` as text that never rounds to 100% or 0% unless it is
        (:func:`conformance.certification.verdict.pass_rate.percent`); "" when absent."""
        passed, total = self.counts(area)
        return pass_rate.percent(passed, total) if total else ""

    def rate(self, area: str | None = None) -> float | None:
        """Pass rate in percent of ``area`` (all areas when None); None when absent."""
        passed, total = self.counts(area)
        return 100.0 * passed / total if total else None


@dataclasses.dataclass(frozen=True)
class Broken:
    path: Path
    reason: str


def _version(doc: dict[str, Any]) -> str:
    api = doc["platform"].get("pjrt_c_api_version")
    sha = (doc["suite"].get("git_sha") or "")[:7]
    parts = [f"jaxlib {doc.get('environment', {}).get('jaxlib', '?')}",
             f"C API {'.'.join(map(str, api))}" if api else "built-in client",
             f"suite {doc['suite']['version']}" + (f" ({sha})" if sha else "")]
    return ", ".join(parts)


def read(path: Path) -> Bundle:
    """The pass rates of the bundle directory ``path``. Raises MalformedReport
    (a ValueError) or FileNotFoundError when it does not load or is not intact."""
    from conformance.certification.bundle import bundle_files

    doc = reportfile.load(path)
    problems = bundle_files.verify(Path(path)).problems
    if problems:
        raise reportfile.MalformedReport(f"not intact ({len(problems)} problem(s): "
                                         f"{problems[0]}); check it with: pjrt-conformance "
                                         f"verify {path}")
    by_area: dict[str, list[dict[str, Any]]] = {}
    for result in doc["results"]:
        by_area.setdefault(records.area_of(result["nodeid"]), []).append(result)
    areas = {area: pass_rate.pass_rate(pass_rate.counts_of(results))
             for area, results in by_area.items()}
    started = datetime.datetime.fromisoformat(doc["started_utc"])
    if started.tzinfo is None:
        started = started.replace(tzinfo=datetime.timezone.utc)
    return Bundle(backend=backend_key(doc), path=Path(path), started=started,
                  version=_version(doc), areas=dict(sorted(areas.items())),
                  release=str(doc.get("environment", {}).get("jaxlib") or ""))


def collect(reports_dir: Path) -> tuple[dict[str, list[Bundle]], list[Broken]]:
    """({backend: its bundles oldest first}, bundles that failed to load) of every
    ``report.json`` under ``reports_dir``. Raises UsageError when ``reports_dir`` is
    not a directory or holds no report.json."""
    root = Path(reports_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such reports directory")
    found = scoreboard.discover(root)
    if not found:
        raise UsageError(f"{root}: holds no report bundle (report.json)")
    by_backend: dict[str, list[Bundle]] = {}
    broken: list[Broken] = []
    for report in found:
        try:
            bundle = read(report.parent)
        except (OSError, ValueError, KeyError, TypeError) as err:
            broken.append(Broken(report.parent, " ".join(str(err).split())))
            continue
        by_backend.setdefault(bundle.backend, []).append(bundle)
    for bundles in by_backend.values():
        bundles.sort(key=lambda b: b.started)
    return dict(sorted(by_backend.items())), broken


def merge(collected: list[tuple[dict[str, list[Bundle]], list[Broken]]]
          ) -> tuple[dict[str, list[Bundle]], list[Broken]]:
    """One :func:`collect` result of several (e.g. ``reports/`` and the release
    matrix's ``matrix/``): a bundle found twice (same backend, start time and
    release: a matrix bundle copied under ``reports/``) is kept once, from the first
    folder given."""
    by_backend: dict[str, list[Bundle]] = {}
    seen: set[tuple[str, datetime.datetime, str]] = set()
    broken: list[Broken] = []
    for found, bad in collected:
        broken.extend(bad)
        for backend, items in found.items():
            for b in items:
                if (b.backend, b.started, b.release) not in seen:
                    seen.add((b.backend, b.started, b.release))
                    by_backend.setdefault(backend, []).append(b)
    for items in by_backend.values():
        items.sort(key=lambda b: b.started)
    return dict(sorted(by_backend.items())), broken
