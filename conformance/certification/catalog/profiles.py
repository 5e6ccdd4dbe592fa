"""Certification profiles: versioned manifests of the test ids a run must contain.

A profile (``conformance/profiles/<name>.json``) maps every *profile id* to a
tier: ``core`` (mandatory for every backend), ``capability:<name>`` (mandatory
once the vendor declares the capability) or ``informational``. A profile id is
a test id with its path reduced to the file name and the device parameter
(``cpu:0``, ``cuda:3``) replaced by ``{device}``, so one manifest serves every
platform and device count: an id with ``{device}`` is expected once per local
device, any other id once.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from conformance import file_limits
from conformance.certification import jsontext

#: Capability modules a vendor can declare (docs/vendor-guide.md, "Certifying a PJRT plugin").
CAPABILITIES = ("bf16", "f16", "f64", "fp8", "complex", "int4", "donation", "memory_kinds",
                "serialization", "custom_calls", "multi_device", "collectives", "multi_process",
                "cost_analysis", "memory_stats", "compile_only")
DEFAULT_PROFILE = "v16"
CORE, INFORMATIONAL = "core", "informational"
#: Joins the capabilities of a test that needs several: ``capability:bf16+donation``.
SEPARATOR = "+"
_DEVICE_PARAM = re.compile(r"(?<=[\[-])[A-Za-z][A-Za-z0-9_]*:\d+(?=[-\]])")
_FILE = re.compile(r"^(?:.*/)?(test_[A-Za-z0-9_]+\.py)::")


def profile_id(nodeid: str) -> str:
    """``'../conformance/test_x.py::t[cuda:1-int8]'`` -> ``'test_x.py::t[{device}-int8]'``."""
    return _DEVICE_PARAM.sub("{device}", _FILE.sub(r"\1::", nodeid, count=1))


def tier_of(markers: list[Any]) -> str:
    """Tier of a test from its marks: ``informational``, ``capability:<names>`` or ``core``.
    A test needing several capabilities (one ``capability`` mark with several names, or
    several marks) has them sorted and joined by :data:`SEPARATOR`:
    ``capability:bf16+donation``."""
    if any(m.name == "informational" for m in markers):
        return INFORMATIONAL
    caps = sorted({n for m in markers if m.name == "capability" for n in m.args})
    return f"capability:{SEPARATOR.join(caps)}" if caps else CORE


def tier_capabilities(tier: str) -> tuple[str, ...]:
    """The capabilities of a ``capability:`` tier (``()`` for ``core``/``informational``)."""
    if not tier.startswith("capability:"):
        return ()
    return tuple(tier.split(":", 1)[1].split(SEPARATOR))


def parse_declared(values: list[str]) -> list[str]:
    """Capability names from ``--declare`` values (``"bf16,f64"``, repeatable).

    Raises ValueError naming an unknown capability and listing the known ones.
    """
    declared = []
    for value in values:
        for name in (v.strip() for v in value.split(",")):
            if not name:
                continue
            if name not in CAPABILITIES:
                raise ValueError(f"--declare: unknown capability {name!r}; known: "
                                 f"{', '.join(CAPABILITIES)}")
            if name not in declared:
                declared.append(name)
    return declared


def read_declare_file(path: Path) -> list[str]:
    """Capabilities listed one a line in ``path`` (``#`` starts a comment)."""
    text = file_limits.read_text(path, what="--declare-file")   # no FIFO, device, 16 MiB
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return parse_declared([line for line in lines if line])


@dataclasses.dataclass(frozen=True)
class Profile:
    """A loaded profile: ``name``, ``version``, ``tests`` (profile id -> tier) and the
    ``sha256`` of its canonical JSON text."""

    name: str
    version: int
    tests: dict[str, str]
    sha256: str

    def tier(self, pid: str) -> str | None:
        return self.tests.get(pid)

    def expected_counts(self, device_count: int) -> dict[str, int]:
        """Profile id -> how many test ids a complete run has for it."""
        return {pid: device_count if "{device}" in pid else 1 for pid in self.tests}

    def completeness(self, nodeids: list[str], device_count: int) -> tuple[list[str], list[str]]:
        """(missing, unexpected) profile ids of a run, with counts where they differ."""
        got = collections.Counter(profile_id(n) for n in nodeids)
        want = self.expected_counts(device_count)
        missing = [pid if got[pid] == 0 else f"{pid} ({got[pid]} of {n})"
                   for pid, n in sorted(want.items()) if got[pid] < n]
        unexpected = sorted(pid for pid in got if pid not in want)
        return missing, unexpected

    def header(self) -> dict[str, Any]:
        counts = collections.Counter(self.tests.values())
        return {"name": self.name, "version": self.version, "sha256": self.sha256,
                "tests": len(self.tests), "tiers": dict(sorted(counts.items()))}


def canonical_text(name: str, version: int, tests: dict[str, str]) -> str:
    return json.dumps({"name": name, "version": version, "tests": dict(sorted(tests.items()))},
                      indent=1, sort_keys=True) + "\n"


def load(name: str) -> Profile:
    """The shipped profile ``name`` (e.g. ``"v3"``) or a profile JSON file path.

    Raises ValueError naming the profile when it does not exist or is malformed.
    """
    path = Path(name)
    if path.suffix == ".json" and path.exists():
        text = file_limits.read_text(path, what="--profile")   # no FIFO, device, 16 MiB
    else:
        try:
            text = resources.files("conformance").joinpath("profiles", f"{name}.json").read_text()
        except (FileNotFoundError, OSError):
            shipped = sorted(p.name[:-5] for p in
                             resources.files("conformance").joinpath("profiles").iterdir()
                             if p.name.endswith(".json"))
            raise ValueError(f"--profile: unknown profile {name!r}; shipped: {shipped} "
                             "(or a path to a profile .json, or 'none')") from None
    try:
        doc = jsontext.loads(text)
        tests = {str(k): str(v) for k, v in doc["tests"].items()}
        prof_name, version = str(doc["name"]), int(doc["version"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise ValueError(f"--profile: {name!r} is not a valid profile: {err}") from err
    bad = sorted({t for t in tests.values() if t not in (CORE, INFORMATIONAL) and not (
        t.startswith("capability:") and all(c in CAPABILITIES for c in tier_capabilities(t)))})
    if bad:
        raise ValueError(f"--profile: {name!r} has unknown tiers {bad}")
    digest = hashlib.sha256(canonical_text(prof_name, version, tests).encode()).hexdigest()
    return Profile(prof_name, version, tests, digest)
