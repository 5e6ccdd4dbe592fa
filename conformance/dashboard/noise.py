"""Run-to-run noise of each benchmark, from repeated runs of one commit (A/A runs).

Layout read (asv results files, kept outside asv's results tree so that asv and the
history views never take them for commits of their own)::

    <noise root>/<machine>/<commit8>-<env>-run<k>.json    k = 1, 2, ...

Each file is one ``asv run`` of commit ``commit8`` in environment ``env``; its value of
a benchmark at a parameter combination is asv's median of that run's samples.

The statistic: for each (machine, commit, env) group of at least two repeat files and
each benchmark + parameter combination, the *spread* of the repeat values =
(max - min) / median, i.e. the largest relative change seen between two runs of the
same code. A benchmark's noise is the largest spread over its groups on that machine
(:class:`Noise`: with the number of repeat runs it came from). A repeat file
byte-identical to an earlier one of its group is a copy, not a measurement (a stale
result copied again): it is left out (named in :attr:`NoiseData.copies`), so that
copies never make a spread of 0. A change must exceed :attr:`Noise.threshold` = twice
the spread to count, and never less than asv's ``regressions_thresholds`` value of
that benchmark (:func:`.regressions.rule_for` takes the larger: noise can only raise
the bar): a few repeats see less than the full range of run-to-run changes (with 5
repeats the spread is about 2.3 standard deviations, a change between two runs exceeds
it about 1 time in 10; twice it, about 1 in 1000), and the pages say how many runs it
came from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import statistics
from pathlib import Path

from conformance.dashboard.asv_results import read_run
from conformance.dashboard.errors import MalformedInput

_NAME = re.compile(r"^([0-9a-fA-F]{8})-(.+)-run(\d+)\.json$")
Key = tuple[str, str, tuple[str, ...]]   # (machine, benchmark, combination)


@dataclasses.dataclass(frozen=True)
class Noise:
    """The run-to-run noise of one benchmark value: ``spread`` (a fraction: 0.04 =
    4%) from ``runs`` repeat runs in ``groups`` (commit, env) groups."""

    spread: float
    runs: int
    groups: int

    @property
    def threshold(self) -> float:
        """The relative change a value must exceed to count: 2 * ``spread``."""
        return 2 * self.spread


@dataclasses.dataclass
class NoiseData:
    """Every benchmark's noise: ``table[(machine, benchmark, combo)]``; ``files``: the
    repeat files read (copies not counted); ``problems``: files skipped (one line
    each); ``copies``: repeat files left out as byte-identical to an earlier repeat of
    their group (one line each)."""

    root: Path | None
    table: dict[Key, Noise] = dataclasses.field(default_factory=dict)
    files: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    copies: list[str] = dataclasses.field(default_factory=list)

    def of(self, machine: str, name: str, combo: tuple[str, ...]) -> Noise | None:
        """The noise of ``name`` at ``combo`` on ``machine``, None when not measured."""
        return self.table.get((machine, name, tuple(combo)))


def spread(values: list[float]) -> float:
    """(max - min) / median of ``values`` (>= 2 positive numbers). Raises ValueError
    on fewer than two values or a median <= 0."""
    if len(values) < 2:
        raise ValueError(f"spread: needs at least two values, got {len(values)}")
    mid = statistics.median(values)
    if mid <= 0:
        raise ValueError(f"spread: the median must be > 0, got {mid}")
    return (max(values) - min(values)) / mid


def load(root: Path | None, exclude: tuple[Path, ...] = ()) -> NoiseData:
    """The noise under ``root`` (the module doc's layout); an empty :class:`NoiseData`
    when ``root`` is None or not a directory. ``exclude``: repeat files left out (the A/A
    check holds out the run it judges, so that its noise never comes from that run). A
    file that is not an asv results file, or whose name does not follow the layout, is
    skipped and named in ``problems``; never raises on file content."""
    data = NoiseData(root=Path(root) if root is not None else None)
    if root is None or not Path(root).is_dir():
        return data
    held_out = {Path(p).resolve() for p in exclude}
    groups: dict[tuple[str, str, str], list[dict]] = {}
    seen: dict[tuple[tuple[str, str, str], bytes], Path] = {}
    for path in sorted(Path(root).glob("*/*.json")):
        if path.name == "machine.json" or path.resolve() in held_out:
            continue
        m = _NAME.match(path.name)
        if not m:
            data.problems.append(f"{path}: not named <commit8>-<env>-run<k>.json")
            continue
        group = (path.parent.name, m.group(1).lower(), m.group(2))
        try:
            digest = hashlib.sha256(path.read_bytes()).digest()
        except OSError as err:
            data.problems.append(f"{path}: {err}")
            continue
        if (group, digest) in seen:
            data.copies.append(f"{path.name} is byte-identical to "
                               f"{seen[(group, digest)].name}: a copy, not a repeat run")
            continue
        try:
            run = read_run(path, path.parent.name)
        except MalformedInput as err:
            data.problems.append(str(err))
            continue
        seen[(group, digest)] = path
        data.files += 1
        groups.setdefault(group, []).append(run.values)
    found: dict[Key, list[tuple[float, int]]] = {}
    for (machine, _, _), runs in groups.items():
        if len(runs) < 2:
            continue
        keys = {(n, c) for values in runs for n, combos in values.items() for c in combos}
        for name, combo in keys:
            vals = [v[name][combo] for v in runs if combo in v.get(name, {})]
            try:
                found.setdefault((machine, name, combo), []).append((spread(vals), len(vals)))
            except ValueError:
                continue
    for key, items in found.items():
        data.table[key] = Noise(spread=max(s for s, _ in items),
                                runs=sum(n for _, n in items), groups=len(items))
    return data
