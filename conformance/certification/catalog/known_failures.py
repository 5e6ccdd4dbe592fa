"""Known failures: test-id globs marked strict xfail, with a reason and conditions.

The entries come from the shipped defect catalog (``conformance/defects/*.toml``,
read by :mod:`conformance.certification.catalog.defect_catalog`, which also carries each
entry's :class:`~conformance.certification.catalog.defect_catalog.Defect`) or, deprecated,
from an old-format ``--known-failures`` text file, one entry a line (``#`` starts a
comment)::

    <test id glob> | <requirement, e.g. jaxlib==0.10.*, or *> | <reason with issue link>

The requirement is conditions joined by `` and ``: ``*``; a requirement on an
installed distribution (``jaxlib<0.12``, ``jax-cuda13-pjrt<0.12``: false when it is
not installed); ``platform=NAME`` (the platform under test, ``--platform``, is
NAME); ``plugin_library=yes|no`` (the backend was / was not loaded from
``--plugin-library``).

A known failure keeps its real status in the report (a known crash is still a
crash and still denies certification); it only keeps pytest's exit code green.
Every process that runs tests marks them (:func:`apply`); the process that merges
the results counts the matches once (:func:`match`), so the counts and the
"matched no test" warning are the same with and without pytest-xdist.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import re
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from conformance import file_limits
from conformance.certification.provenance import package_nodeid

_FLAGS = {"platform": None, "plugin_library": ("yes", "no")}


@dataclasses.dataclass
class Entry:
    pattern: str
    requirement: str
    reason: str
    source: str
    matched: int = 0
    file_collected: bool = False
    #: The catalog's defect (``defect_catalog.Defect``); None for an old-format entry.
    defect: Any = None

    @property
    def label(self) -> str:
        """The xfail reason and the report's ``known_failure``: ``known: REASON (SOURCE)``."""
        return f"known: {self.reason} ({self.source})"

    def matches(self, nodeid: str) -> bool:
        """``*`` is the only wildcard; brackets of parametrized ids are literal."""
        return _compiled(self.pattern).fullmatch(nodeid) is not None

    def applies(self, platform: str | None = None, plugin_library: bool = False) -> bool:
        """True when every condition holds (``platform``: the platform under test;
        ``plugin_library``: the backend was loaded from ``--plugin-library``)."""
        return all(_holds(cond, platform, plugin_library)
                   for cond in _conditions(self.requirement))


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str) -> re.Pattern[str]:
    """The regex of a test-id glob (compiled once: every collected item is matched
    against every entry, about 100,000 matches in a CPU run's collection)."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def _conditions(requirement: str) -> list[str]:
    return [c.strip() for c in requirement.split(" and ")]


def parse_condition(cond: str, where: str) -> str | Requirement:
    """``"*"``, ``"platform=NAME"``, ``"plugin_library=yes|no"`` or a Requirement on a
    distribution; ValueError naming ``where`` for anything else."""
    key, eq, value = cond.partition("=")
    if cond == "*" or (key in _FLAGS and eq and value
                       and (_FLAGS[key] is None or value in _FLAGS[key])):
        return cond
    try:
        req = Requirement(cond)
    except InvalidRequirement as err:
        raise ValueError(f"{where}: bad requirement {cond!r}: {err}") from err
    if req.marker is not None or req.extras or req.url:
        raise ValueError(f"{where}: requirement {cond!r} must be a name and a version "
                         "specifier only")
    return req


#: jax and jaxlib as the runtime sees them, read on first use.
_VERSIONS: dict[str, str] = {}


def installed_version(name: str) -> str | None:
    """Version of the installed distribution ``name`` (jax, jaxlib: as the runtime sees
    them), or None when it is not installed."""
    if name in ("jax", "jaxlib"):   # imported here: importing this module loads no jax
        if not _VERSIONS:
            from runtime import versions
            _VERSIONS.update(jaxlib=versions.JAXLIB_VERSION, jax=versions.JAX_VERSION)
        return _VERSIONS[name]
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _holds(cond: str, platform: str | None, plugin_library: bool = False) -> bool:
    parsed = parse_condition(cond, "known failure")
    if parsed == "*":
        return True
    if isinstance(parsed, str):
        key, _, value = parsed.partition("=")
        if key == "platform":
            return platform == value
        return plugin_library == (value == "yes")
    version = installed_version(parsed.name)
    return version is not None and parsed.specifier.contains(version, prereleases=True)


def parse(path: Path) -> list[Entry]:
    """Entries of the old-format text file ``path`` (deprecated: the defect catalog
    replaces it); ValueError naming the file and line for a malformed one."""
    entries = []
    text = file_limits.read_text(path, what="--known-failures")   # no FIFO, device, 16 MiB
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{path}:{n}: expected '<test id glob> | <requirement> | <reason>', "
                             f"got {raw!r}")
        for cond in _conditions(parts[1]):
            parse_condition(cond, f"{path}:{n}")
        entries.append(Entry(parts[0], parts[1], parts[2], f"{path}:{n}"))
    return entries


def _first_match(active: list[Entry], nodeid: str) -> Entry | None:
    return next((e for e in active if e.matches(nodeid)), None)


def apply(items: list[pytest.Item], entries: list[Entry], platform: str | None = None,
          plugin_library: bool = False) -> None:
    """Mark matching items strict-xfail (a fixed bug then fails loudly as XPASS; not
    strict for a catalog defect with ``strict = false``, reached by some draws only).
    Counts nothing: :func:`match` does, where the results are merged."""
    active = [e for e in entries if e.applies(platform, plugin_library)]
    for item in items:  # entries name package-relative ids, whatever the rootdir
        path = getattr(item, "path", None)
        entry = _first_match(active, package_nodeid(item.nodeid,
                                                    None if path is None else str(path)))
        if entry is not None:
            strict = entry.defect.strict if entry.defect is not None else True
            item.add_marker(pytest.mark.xfail(reason=entry.label, strict=strict, run=True))


def match(entries: list[Entry], nodeids: list[str],
          platform: str | None = None, plugin_library: bool = False) -> dict[str, Entry]:
    """The entry (first in file order) of every node id that one matches, for the
    entries that apply on ``platform``; sets each entry's ``matched`` (number of node
    ids) and ``file_collected`` (its test file has a node id among ``nodeids``)."""
    active = [e for e in entries if e.applies(platform, plugin_library)]
    files = {nodeid.split("::")[0] for nodeid in nodeids}
    found: dict[str, Entry] = {}
    for e in active:
        e.matched = 0
        e.file_collected = e.pattern.split("::")[0] in files
    for nodeid in nodeids:
        entry = _first_match(active, nodeid)
        if entry is not None:
            entry.matched += 1
            found[nodeid] = entry
    return found


def unmatched(entries: list[Entry], platform: str | None = None,
              plugin_library: bool = False) -> list[Entry]:
    """Active entries whose test file ran but that matched no test (after :func:`match`)."""
    return [e for e in entries if e.applies(platform, plugin_library)
            and e.file_collected and not e.matched]
