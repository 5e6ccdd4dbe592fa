"""Splitting one certification into shards: the plan, and the facts a merge checks.

``pjrt-conformance run --shard I/N`` runs shard ``I`` of ``N`` of the selected tests
(the profile's tests after any ``-k``/``-m``/paths given after ``--``). The plan is
pytest-split's ``least_duration`` algorithm over recorded per-test durations
(``conformance/durations/cpu.json``, regenerated from a real run's ``results.jsonl`` with
``pjrt-conformance durations``): every test goes to exactly one shard, the shards'
summed durations are as equal as the algorithm makes them, and the plan depends
only on the test ids and the durations (pytest-split breaks ties by name), so every
machine computes the same plan. A test missing from the durations counts with the
mean duration of the selected tests that have one (pytest-split's rule).

This module is data only (no pytest session): the session side is
:mod:`conformance.session.sharding`, the merge :mod:`conformance.certification.bundle.merge`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_split.algorithms import Algorithms

from conformance import file_limits
from conformance.certification import provenance
from conformance.certification import jsontext

#: pytest-split's algorithm that balances summed durations (greedy, longest test first).
ALGORITHM = "least_duration"
#: The shipped durations (``conformance/durations/<name>.json``): package-relative test id
#: -> seconds, pytest-split's format; ``cpu`` is from a CPU run with 8 devices.
DEFAULT_DURATIONS = "cpu"
_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclasses.dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


#: The most shards ``--shard I/N`` may ask for (N); a shard count above the number of
#: tests collected is refused too, once they are known (:func:`check_count`).
MAX_SHARDS = 1000


def check_count(shard: Shard, collected: int) -> None:
    """Raise ValueError (one line, naming ``--shard``) when ``shard`` splits ``collected``
    tests into more shards than there are tests: some shards would hold none."""
    if shard.count > collected:
        raise ValueError(f"--shard {shard.index}/{shard.count}: {shard.count} shards of "
                         f"{collected} selected test(s); N must be at most the number of "
                         "tests")


def parse(text: str) -> Shard:
    """``'2/3'`` -> ``Shard(2, 3)``. Raises ValueError (one line, naming ``--shard``)
    unless ``text`` is ``I/N`` with integers ``1 <= I <= N``."""
    m = _SPEC.fullmatch(str(text))
    if m is None:
        raise ValueError(f"--shard {text!r}: expected I/N, e.g. --shard 2/3 (shard 2 of 3)")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1:
        raise ValueError(f"--shard {text!r}: the number of shards N must be at least 1")
    if count > MAX_SHARDS:   # 100000000 groups took minutes to plan, with nothing printed
        raise ValueError(f"--shard {text!r}: at most {MAX_SHARDS} shards (the suite has a "
                         "few thousand tests; each shard should hold some)")
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text!r}: the shard index I must be in 1..{count}")
    return Shard(index, count)


def durations_path(name: str = DEFAULT_DURATIONS) -> Path:
    """``name`` when it is a path of an existing file, else the shipped
    ``conformance/durations/<name>.json``. Raises ValueError naming ``--shard-durations``
    when neither exists."""
    if Path(name).is_file():
        return Path(name)
    shipped = resources.files("conformance").joinpath("durations")
    target = Path(str(shipped.joinpath(f"{name}.json")))
    if not target.is_file():
        names = sorted(p.name[:-5] for p in shipped.iterdir() if p.name.endswith(".json"))
        raise ValueError(f"--shard-durations {name!r}: no such file, and not a shipped name "
                         f"({', '.join(names)})")
    return target


def load_durations(path: Path | str) -> dict[str, float]:
    """A durations file: a JSON object of test id -> seconds (finite, >= 0).

    Raises ValueError naming ``path`` when the file is missing, not JSON, or holds
    anything else."""
    try:
        doc = jsontext.loads(file_limits.read_text(path, what="--shard-durations"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"--shard-durations {path}: {err}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"--shard-durations {path}: expected a JSON object of test id -> "
                         "seconds")
    for key, value in doc.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            raise ValueError(f"--shard-durations {path}: {key!r} has {value!r}, expected "
                             "seconds >= 0")
    return {k: float(v) for k, v in doc.items()}


def sha256_of(path: Path | str) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def selection_sha256(ids: Iterable[str]) -> str:
    """Hex sha256 of the sorted, distinct test ids joined by newlines: the identity of
    a selection, whatever order the ids come in."""
    return hashlib.sha256("\n".join(sorted(set(ids))).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class _Test:
    """What pytest-split's algorithms read of an item: its ``nodeid``, and ``str()`` for
    its tie-break (on a pytest item ``str()`` is not the id, so that is made explicit)."""

    nodeid: str

    def __str__(self) -> str:
        return self.nodeid


@dataclasses.dataclass(frozen=True)
class Group:
    """One shard of a plan: its test ids (in the selection's order) and their summed
    recorded durations in seconds."""

    ids: tuple[str, ...]
    seconds: float


def plan(ids: Sequence[str], count: int, durations: dict[str, float],
         algorithm: str = ALGORITHM) -> list[Group]:
    """Split ``ids`` (package-relative test ids, distinct) into ``count`` groups with
    pytest-split's ``algorithm`` (``least_duration`` or ``duration_based_chunks``).

    Raises ValueError for ``count < 1``, an unknown algorithm or a repeated id."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if algorithm not in Algorithms.names():
        raise ValueError(f"algorithm {algorithm!r} is not one of {Algorithms.names()}")
    if len(set(ids)) != len(ids):
        raise ValueError("ids repeat a test id")
    groups = Algorithms[algorithm].value(count, [_Test(i) for i in ids], durations)
    return [Group(tuple(t.nodeid for t in g.selected), round(g.duration, 3)) for g in groups]


def record(shard: Shard, ids: Sequence[str], group: Group, durations_path: Path | str,
           profile: dict[str, Any] | None) -> dict[str, Any]:
    """The report's ``shard`` object: ``index``, ``count``, ``algorithm``,
    ``durations_sha256`` and ``durations_file`` (its name), ``selection_count`` and
    ``selection_sha256`` (of every selected test before the split, see
    :func:`selection_sha256`), ``assigned`` (tests of this shard), ``planned_s`` (their
    recorded seconds) and ``profile`` (``name`` and ``sha256``, or null)."""
    return {"index": shard.index, "count": shard.count, "algorithm": ALGORITHM,
            "durations_file": Path(durations_path).name,
            "durations_sha256": sha256_of(durations_path),
            "selection_count": len(ids), "selection_sha256": selection_sha256(ids),
            "assigned": len(group.ids), "planned_s": group.seconds,
            "profile": None if profile is None else {"name": profile["name"],
                                                     "sha256": profile["sha256"]}}


def durations_from_log(lines: Iterable[str]) -> dict[str, float]:
    """Per-test seconds from a ``results.jsonl`` (pytest-reportlog lines): the sum of
    every phase's ``duration`` of each test (re-runs included: what it cost), keyed by
    package-relative test id and rounded to milliseconds. Lines that are not test
    reports are ignored. Raises ValueError naming the line number of a line that is
    not JSON."""
    seconds: dict[str, float] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rep = jsontext.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"line {n} is not JSON: {err}") from None
        if not isinstance(rep, dict) or rep.get("$report_type") != "TestReport":
            continue
        location = rep.get("location") or [None]
        nodeid = provenance.package_nodeid(rep["nodeid"], location[0])
        seconds[nodeid] = seconds.get(nodeid, 0.0) + float(rep.get("duration") or 0.0)
    return {k: round(v, 3) for k, v in sorted(seconds.items())}


def write_durations(durations: dict[str, float], target: Path | str) -> Path:
    """Write ``durations`` as pytest-split's JSON (sorted keys, one test a line)."""
    target = Path(target)
    target.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + "\n",
                      encoding="utf-8")
    return target
