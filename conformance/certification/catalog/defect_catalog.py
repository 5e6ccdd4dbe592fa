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
- ``evidence`` (optional): how the attribution was decided;
- ``strict`` (optional, default true): false for a defect that only some Hypothesis
  draws reach (a derandomized run may pass): its xfail is then not strict;
- ``repro``: the entry's standalone reproduction, a script path relative to the
  repository (``docs/repro/*.py`` or ``docs/upstream/*.py``; plain jax/jaxlib, no import
  of this project), and ``repro_args`` (optional) its arguments. Exit status: 0 the
  defect is absent, 3 (:data:`REPRODUCED`) present, 4 (:data:`UNTESTABLE`) not testable
  here (no GPU, ...); killed by a signal or a timeout counts as present when ``expected``
  has ``crash``/``timeout`` (:mod:`conformance.certification.catalog.catalog_bisect`);
- ``measured`` (optional, written by ``pjrt-conformance catalog bisect``): the table
  ``date``, ``package`` (jaxlib), ``first_affected``, ``first_fixed`` (absent while
  the newest release tested is affected), ``newest`` and ``runs`` (one
  ``{release, jax, jaxlib, python, outcome}`` per release environment). When it has
  bounds, the entry's range on jax/jaxlib comes from them (:attr:`Defect.requirement`)
  and ``affects`` keeps only other conditions (it may then be left out).

A listed defect is applied as strict xfail (:func:`known_failures.apply`), keeps its
real status in the report, and is annotated with its id, link and attribution. On a
release at or after its measured ``first_fixed`` it does not apply (the test must pass
there); :func:`fixed_on_installed` lists those so that the run reports them as fixed.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from importlib import resources
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from packaging.version import Version

from conformance import file_limits
from conformance.certification.catalog import known_failures

SHIPPED = "shipped"
#: Exit status of a reproduction script while its defect is present.
REPRODUCED = 3
#: Exit status of a reproduction script that cannot test here (no GPU, too few devices).
UNTESTABLE = 4
#: The distributions whose version the measured bounds replace in ``affects``.
RELEASE_PACKAGES = ("jax", "jaxlib")


@dataclasses.dataclass(frozen=True)
class Measured:
    """An entry's ``measured`` table (written by ``catalog bisect``).

    ``package``: the distribution the releases are versions of (``jaxlib``);
    ``first_affected``/``first_fixed``: release versions (None: not seen affected / not
    fixed on the newest release tested); ``oldest``/``newest``: the oldest and newest
    release with a usable outcome; ``date``: ISO date of the run."""

    date: str
    package: str
    first_affected: str | None
    first_fixed: str | None
    oldest: str | None
    newest: str | None
    runs: tuple[dict[str, str], ...] = ()

    @classmethod
    def from_table(cls, raw: dict[str, Any]) -> "Measured":
        usable = [r["release"] for r in raw.get("runs", ())
                  if r.get("outcome") in ("present", "absent")]
        usable.sort(key=Version)
        return cls(date=str(raw["date"]), package=raw.get("package", "jaxlib"),
                   first_affected=raw.get("first_affected"), first_fixed=raw.get("first_fixed"),
                   oldest=usable[0] if usable else None, newest=raw.get("newest"),
                   runs=tuple(dict(r) for r in raw.get("runs", ())))

    @property
    def bounded(self) -> bool:
        """True when a release was seen affected: the bounds then give the range."""
        return self.first_affected is not None

    def specifiers(self) -> list[str]:
        """The measured range as requirement strings on :attr:`package`: ``>=first
        affected`` unless that is the oldest release tested (affected since at least
        then: no lower bound), ``<first fixed`` when fixed."""
        out = []
        if self.first_affected and self.first_affected != self.oldest:
            out.append(f"{self.package}>={self.first_affected}")
        if self.first_fixed:
            out.append(f"{self.package}<{self.first_fixed}")
        return out


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
    repro: str = ""
    repro_args: tuple[str, ...] = ()
    measured: Measured | None = None
    #: False for a defect only some Hypothesis draws reach: its xfail is not strict.
    strict: bool = True

    @property
    def range(self) -> list[str]:
        """The version conditions: the measured bounds when the entry has some (with the
        ``affects`` conditions on other distributions), else ``affects``."""
        if self.measured is None or not self.measured.bounded:
            return list(self.affects)
        keep = [a for a in self.affects
                if known_failures.parse_condition(a, self.id).name not in RELEASE_PACKAGES]
        return keep + self.measured.specifiers()

    def fixed_in(self, version: str | None) -> str | None:
        """The measured first fixed release when ``version`` (of the measured package) is
        at or after it, else None."""
        m = self.measured
        if m is None or not m.first_fixed or version is None:
            return None
        return m.first_fixed if Version(version) >= Version(m.first_fixed) else None

    @property
    def requirement(self) -> str:
        """The entry's conditions in the known-failure grammar (``a and b and ...``)."""
        conds = self.range
        if self.platform:
            conds.append(f"platform={self.platform}")
        if self.plugin_library is not None:
            conds.append(f"plugin_library={'yes' if self.plugin_library else 'no'}")
        return " and ".join(conds) or "*"

    def as_dict(self) -> dict[str, Any]:
        """The report's ``defect`` object: ``id``, ``upstream``, ``summary``."""
        return {"id": self.id, "upstream": self.upstream, "summary": self.summary}


def fixed_on_installed(defects: list["Defect"], platform: str | None = None) -> list[Defect]:
    """The defects (of ``platform``, or of any platform when None) whose measured
    ``first_fixed`` is at or before the installed version of the measured package: no
    longer known failures here, their tests are expected to pass."""
    return [d for d in defects if (platform is None or d.platform in (None, platform))
            and d.fixed_in(known_failures.installed_version(
                d.measured.package if d.measured else "jaxlib"))]


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
        data = file_limits.toml_loads(file_limits.read_text(path))   # no FIFO, 16 MiB
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"{path}: cannot read the defect catalog: {err}") from err
    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ValueError(_problem(path, errors[0], data))
    defects = []
    for n, raw in enumerate(data["defect"]):
        where = f"{path}: entry {n} ({raw['id']!r}): affects"
        for req in raw.get("affects", ()):
            known_failures.parse_condition(req, where)
        measured = Measured.from_table(raw["measured"]) if "measured" in raw else None
        if not raw.get("affects") and not (measured and measured.bounded):
            raise ValueError(f"{path}: entry {n} ({raw['id']!r}): no 'affects' and no measured "
                             "bounds: give one (run `pjrt-conformance catalog bisect`)")
        defects.append(Defect(
            id=raw["id"], tests=tuple(raw["tests"]), affects=tuple(raw.get("affects", ())),
            attribution=raw["attribution"], upstream=raw["upstream"], summary=raw["summary"],
            expected=tuple(raw["expected"]), platform=raw.get("platform"),
            plugin_library=raw.get("plugin_library"), evidence=raw.get("evidence", ""),
            source=f"{path.name}#{raw['id']}", layer=raw.get("layer", ""),
            repro=raw.get("repro", ""), repro_args=tuple(raw.get("repro_args", ())),
            measured=measured, strict=raw.get("strict", True)))
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


def xla_ids(defects: Iterable[Defect]) -> set[str]:
    """Ids of ``defects`` from the catalog's XLA components (``xla-*.toml``: XLA's
    compiler, kernels and PJRT clients, which a plugin built on XLA ships)."""
    return {d.id for d in defects if d.source.startswith("xla-")}


def entries(defects: list[Defect]) -> list[known_failures.Entry]:
    """One known-failure entry per test glob of each defect (strict xfail, matching)."""
    return [known_failures.Entry(pattern, d.requirement, f"{d.summary} [{d.id}; {d.upstream}]",
                                 d.source, defect=d)
            for d in defects for pattern in d.tests]
