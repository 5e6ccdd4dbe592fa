"""The defect catalog shipped with the suite: ``conformance/defects/*.toml``.

One file per upstream component (jaxlib, XLA's CPU client, XLA's GPU plugin, ...),
validated by the JSON Schema ``conformance/schema/defects.schema.json``. Each
``[[defect]]`` entry has:

- ``id``: stable, lower-case words joined by ``-`` (unique over the catalog);
- ``tests``: test id globs (``*`` is the only wildcard), relative to the repository;
- ``affects``: requirement strings on installed distributions, all of which must
  hold (``"jaxlib<0.11"``, ``"jax-cuda13-pjrt>=0.11,<0.12"``; ``packaging`` specifiers);
- ``platform`` (optional): the ``--platform`` it applies to;
- ``plugin_library`` (optional bool): applies only when the backend was (true) or
  was not (false) loaded from ``--plugin-library``;
- ``attribution``: ``plugin``, ``framework`` or ``suite`` (see ``docs/upstream/README.md``);
- ``upstream``: a ``https://github.com/jax-ml/jax/issues/N`` or
  ``https://github.com/openxla/xla/issues/N`` URL, or the literal ``"not reported yet"``;
- ``summary``: one correct line; ``expected``: the statuses the defect gives;
- ``evidence`` (optional): how the attribution was decided.

A listed defect is applied as strict xfail (:func:`known_failures.apply`), keeps its
real status in the report, and is annotated with its id, link and attribution.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from conformance.certification import known_failures

#: The value of ``upstream`` for a defect nobody has filed yet.
NOT_REPORTED = "not reported yet"
SHIPPED = "shipped"


@dataclasses.dataclass(frozen=True)
class Defect:
    """One catalog entry (see the module docstring for the fields)."""

    id: str
    tests: tuple[str, ...]
    affects: tuple[str, ...]
    attribution: str
    upstream: str
    summary: str
    expected: tuple[str, ...]
    platform: str | None = None
    plugin_library: bool | None = None
    evidence: str = ""
    source: str = ""
    layer: str = ""

    @property
    def requirement(self) -> str:
        """The entry's conditions in the known-failure grammar (``a and b and ...``)."""
        conds = list(self.affects)
        if self.platform:
            conds.append(f"platform={self.platform}")
        if self.plugin_library is not None:
            conds.append(f"plugin_library={'yes' if self.plugin_library else 'no'}")
        return " and ".join(conds) or "*"

    def as_dict(self) -> dict[str, Any]:
        """The report's ``defect`` object: ``id``, ``upstream``, ``summary``."""
        return {"id": self.id, "upstream": self.upstream, "summary": self.summary}


def schema() -> dict[str, Any]:
    """The JSON Schema of a catalog file."""
    text = resources.files("conformance").joinpath("schema", "defects.schema.json")
    return json.loads(text.read_text())


def _problem(path: Path, err: jsonschema.ValidationError, data: dict[str, Any]) -> str:
    where = list(err.absolute_path)
    entry = "file"
    if len(where) >= 2 and where[0] == "defect":
        item = data["defect"][where[1]]
        entry = f"entry {where[1]} ({item.get('id', '?')!r})" if isinstance(item, dict) \
            else f"entry {where[1]}"
    if err.validator == "additionalProperties":
        allowed = set(err.schema.get("properties", {}))
        unknown = sorted(set(err.instance) - allowed)
        return f"{path}: {entry}: unknown key(s) {unknown}; allowed: {sorted(allowed)}"
    key = "/".join(str(p) for p in where[2:]) or "(entry)"
    return f"{path}: {entry}: {key}: {err.message}"


def load_file(path: Path) -> list[Defect]:
    """The defects of one catalog file. ValueError naming the file, the entry and the key
    for unreadable TOML, a schema violation (unknown key, bad attribution, bad URL, bad
    status) or a bad requirement string."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{path}: cannot read the defect catalog: {err}") from err
    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ValueError(_problem(path, errors[0], data))
    defects = []
    for n, raw in enumerate(data["defect"]):
        where = f"{path}: entry {n} ({raw['id']!r}): affects"
        for req in raw["affects"]:
            known_failures.parse_condition(req, where)
        defects.append(Defect(
            id=raw["id"], tests=tuple(raw["tests"]), affects=tuple(raw["affects"]),
            attribution=raw["attribution"], upstream=raw["upstream"], summary=raw["summary"],
            expected=tuple(raw["expected"]), platform=raw.get("platform"),
            plugin_library=raw.get("plugin_library"), evidence=raw.get("evidence", ""),
            source=f"{path.name}#{raw['id']}", layer=raw.get("layer", "")))
    return defects


def shipped_dir() -> Path:
    """The directory of the shipped catalog files."""
    return Path(str(resources.files("conformance").joinpath("defects")))


def load(paths: list[str] | tuple[str, ...] = ()) -> list[Defect]:
    """The catalog of ``paths`` (``--defects`` values: ``shipped`` (the default when
    empty), ``none``, a ``.toml`` file or a directory of them). ValueError for a missing
    path, a directory without a ``.toml`` file, a malformed file or an id listed twice."""
    paths = list(paths) or [SHIPPED]
    if "none" in paths:
        if len(paths) > 1:
            raise ValueError(f"--defects none excludes other values, got {paths}")
        return []
    files: list[Path] = []
    for p in paths:
        path = shipped_dir() if p == SHIPPED else Path(p)
        if path.is_dir():
            found = sorted(path.glob("*.toml"))
            if not found:   # never a silent 'none': say so
                raise ValueError(f"--defects={p}: no .toml catalog file in this directory "
                                 f"(give 'none' to run without the catalog)")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"--defects={p}: no such file or directory (give a .toml file, "
                             f"a directory of them, '{SHIPPED}' or 'none')")
    defects, seen = [], {}
    for f in files:
        for d in load_file(f):
            if d.id in seen:
                raise ValueError(f"{f}: defect id {d.id!r} is already listed in {seen[d.id]}")
            seen[d.id] = f.name
            defects.append(d)
    return defects


def entries(defects: list[Defect]) -> list[known_failures.Entry]:
    """One known-failure entry per test glob of each defect (strict xfail, matching)."""
    return [known_failures.Entry(pattern, d.requirement, f"{d.summary} [{d.id}; {d.upstream}]",
                                 d.source, defect=d)
            for d in defects for pattern in d.tests]
