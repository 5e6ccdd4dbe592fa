"""The mutation score: per area and overall, with the surviving mutants named."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from tests.mutants.runner import CONTROL, ROOT, Outcome


@dataclasses.dataclass
class AreaScore:
    """Mutants that target ``area``: how many, which were killed there, which survived."""

    area: str
    killed: list[str] = dataclasses.field(default_factory=list)
    survivors: list[str] = dataclasses.field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.killed) + len(self.survivors)

    @property
    def score(self) -> float:
        return len(self.killed) / self.total if self.total else 1.0


def by_area(outcomes: Iterable[Outcome]) -> dict[str, AreaScore]:
    """Area -> AreaScore over ``outcomes`` (a mutant counts once in each area it targets)."""
    areas: dict[str, AreaScore] = {}
    for o in outcomes:
        for area in o.areas:
            entry = areas.setdefault(area, AreaScore(area))
            (entry.killed if area in o.killed_areas else entry.survivors).append(o.platform)
    return dict(sorted(areas.items()))


def overall(outcomes: Iterable[Outcome]) -> float:
    """Killed mutants / all mutants (1.0 for none)."""
    outcomes = list(outcomes)
    return sum(o.killed for o in outcomes) / len(outcomes) if outcomes else 1.0


def _known(nodeid: str) -> str:
    """The known-defect entry of jaxlib's CPU backend that ``nodeid`` matches, else ""."""
    from conformance.certification.catalog import defect_catalog

    for entry in defect_catalog.entries(defect_catalog.load()):
        if entry.applies(CONTROL) and entry.matches(f"conformance/{nodeid}"):
            return entry.pattern
    return ""


def known_defects(controls: Iterable[Outcome]) -> list[str]:
    """Tests failing on the healthy control that are known defects of the CPU backend
    (they cannot kill a mutant, and do not make the control unclean)."""
    return [f"{c.platform}: {n}" for c in controls for n in c.failing if _known(n)]


def control_failures(controls: Iterable[Outcome]) -> list[str]:
    """Why the healthy control is not clean: failing tests that are not known defects,
    or runs without results."""
    problems = []
    for c in controls:
        problems += [f"{c.platform}: {n}" for n in c.failing if not _known(n)]
        if c.error:
            problems.append(f"{c.platform}: {c.error}")
    return problems


def report(outcomes: list[Outcome], controls: list[Outcome]) -> str:
    """The score table as text: one line per area, overall, survivors, errors, control."""
    lines = [f"{'area':<24} {'killed':>6} {'total':>5} {'score':>7}  survivors"]
    for a in by_area(outcomes).values():
        lines.append(f"{a.area:<24} {len(a.killed):>6} {a.total:>5} {a.score:>7.1%}  "
                     f"{', '.join(a.survivors)}")
    killed = sum(o.killed for o in outcomes)
    lines.append(f"{'overall':<24} {killed:>6} {len(outcomes):>5} {overall(outcomes):>7.1%}")
    survivors = [o for o in outcomes if not o.killed]
    if survivors:
        lines.append("surviving mutants:")
        lines += [f"  {o.platform} ({o.kind}): {', '.join(o.areas)}"
                  + (f" -- {o.error[:300]}" if o.error else "") for o in survivors]
    for c in controls:
        total = sum(c.statuses.values())
        lines.append(f"healthy control ({c.platform}): {total} results, "
                     f"{len(c.failing)} failing, {c.seconds:.0f} s")
    lines += [f"  known defect (not counted): {k}" for k in known_defects(controls)]
    lines += [f"  control problem: {p}" for p in control_failures(controls)[:50]]
    return "\n".join(lines)


def as_json(outcomes: list[Outcome], controls: list[Outcome]) -> dict:
    """The score as a JSON-ready dict."""
    return {"overall": overall(outcomes), "killed": sum(o.killed for o in outcomes),
            "total": len(outcomes),
            "areas": {a: {"killed": s.killed, "survivors": s.survivors, "score": s.score}
                      for a, s in by_area(outcomes).items()},
            "mutants": [dataclasses.asdict(o) | {"killed": o.killed} for o in outcomes],
            "controls": [dataclasses.asdict(c) for c in controls],
            "control_known_defects": known_defects(controls),
            "control_clean": not control_failures(controls)}
