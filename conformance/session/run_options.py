"""The run's options as one frozen, typed object (:class:`RunOptions`), made once per run.

How the options flow (docs/architecture.md, "Options"):

- ``pytest --platform=... conformance/``: the suite's ``pytest_configure`` in the
  controller builds the object from pytest's parsed options and validates it, once
  (:func:`conformance.session.option_intake.build`).
- ``pjrt-conformance run``: the CLI validates its argparse namespace and builds the
  object from it (:func:`conformance.session.option_intake.from_namespace`); it hands
  the object to pytest as a plugin (:class:`Handover`, ``pytest.main(args,
  plugins=[...])``), never as ``--report-dir=``/``--platform=`` strings. Only pytest's
  own arguments (selection, ``-n``, ``-p``, ``--timeout``, the user's arguments after
  ``--``) travel as argv.
- pytest-xdist workers: the controller sends :meth:`RunOptions.to_wire` through
  ``node.workerinput``; a worker rebuilds the object with :meth:`RunOptions.from_wire`
  and neither parses nor validates its command line's suite options.
- a child process (the multi-host per-process pytest, the reference differential's
  re-run) is an argv boundary: :meth:`RunOptions.as_pytest_args` writes the options
  out, and the child builds its own object once from them.

Every session module reads the options through :func:`run_options` (``config.stash``).
This module imports nothing heavy (no jax, no hypothesis).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from conformance.certification.catalog import profiles

#: The one stash key of the run's options.
KEY = pytest.StashKey["RunOptions"]()
#: The fields that are paths (``Path | None``) and tuples of paths.
_PATHS = ("plugin_library", "declare_file", "waivers", "report_dir", "write_profile")
_PATH_TUPLES = ("known_failures",)
_STR_TUPLES = ("declare", "defects")
#: Fields :meth:`RunOptions.as_pytest_args` never writes: derived (``create_options``,
#: parsed from ``plugin_options``) or pytest's own arguments, which travel as argv anyway.
_NOT_ARGS = ("create_options", "hypothesis_profile", "hypothesis_seed", "progress",
             "progress_interval")
#: The options ``run.json`` keeps for ``finalize`` (:meth:`RunOptions.saved`).
SAVED = ("platform", "cpu_devices", "num_processes", "profile", "declare", "declare_file",
         "waivers", "known_failures", "plugin_library", "plugin_options", "expect_platform",
         "defects", "reference_timeout")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Every option of a conformance run, typed (the defaults are pytest's defaults).

    Values are as given and already checked; files named by a pipe (``<(...)``) were
    read once into private copies (:func:`conformance.session.option_files.read_once`),
    which the fields name. ``create_options`` is ``plugin_options`` parsed (its JSON
    text or file). ``hypothesis_*`` and ``progress*`` are pytest arguments (given after
    ``--`` to ``pjrt-conformance run``), read from pytest's options by the session.
    """

    platform: str = "cpu"
    cpu_devices: int = 8
    num_processes: int = 2
    plugin_library: Path | None = None
    plugin_options: str | None = None
    create_options: dict[str, Any] | None = None
    expect_platform: str | None = None
    profile: str = profiles.DEFAULT_PROFILE
    declare: tuple[str, ...] = ()
    declare_file: Path | None = None
    float_controls: str = "auto"
    waivers: Path | None = None
    known_failures: tuple[Path, ...] = ()
    defects: tuple[str, ...] = ()
    reference_differential: str = "off"
    reference_timeout: float = 300.0
    shard: str | None = None
    shard_durations: str | None = None
    report_dir: Path | None = None
    force_report_dir: bool = False
    write_profile: Path | None = None
    hypothesis_profile: str | None = None
    hypothesis_seed: str | None = None
    progress: str = "auto"
    progress_interval: float = 30.0

    def __post_init__(self) -> None:
        """Convert each value to its field's type (an empty path is None); TypeError or
        ValueError for one that is not (a malformed ``run.json``)."""
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)
        for name in _PATHS:
            value = getattr(self, name)
            put(name, Path(value) if value not in (None, "") else None)
        for name in _PATH_TUPLES:
            put(name, tuple(Path(v) for v in _sequence(getattr(self, name)) if v))
        for name in _STR_TUPLES:
            put(name, tuple(str(v) for v in _sequence(getattr(self, name))))
        for name, kind in (("cpu_devices", int), ("num_processes", int),
                           ("reference_timeout", float), ("progress_interval", float)):
            put(name, kind(getattr(self, name)))
        if self.hypothesis_seed is not None:
            put("hypothesis_seed", str(self.hypothesis_seed))
        if self.create_options is not None and not isinstance(self.create_options, dict):
            raise TypeError(f"create_options: expected a dict, got {self.create_options!r}")
        put("force_report_dir", bool(self.force_report_dir))

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> "RunOptions":
        """The options of ``values`` (option ``dest`` -> value, as pytest, argparse or
        :meth:`to_wire` give them; a key that is no field is left out, a missing one takes
        its default, None its default too for a field that is never None). Raises
        TypeError or ValueError for a value of the wrong type."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        given = {k: v for k, v in values.items() if k in fields}
        for name in ("platform", "cpu_devices", "num_processes", "profile",
                     "float_controls", "reference_differential", "reference_timeout",
                     "progress", "progress_interval"):
            if given.get(name, 0) is None:
                del given[name]
        return cls(**given)

    def to_wire(self) -> dict[str, Any]:
        """The options as JSON values (paths as text, tuples as lists): what the
        controller puts in pytest-xdist's ``workerinput``; :meth:`from_wire` reads it."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = [str(v) for v in value]
            out[f.name] = value
        return out

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "RunOptions":
        """The options :meth:`to_wire` gave (TypeError or ValueError if malformed)."""
        return cls.from_values(dict(wire))

    def saved(self) -> dict[str, Any]:
        """The options ``run.json`` records (:data:`SAVED`, JSON values), which
        ``finalize`` reads back with :meth:`from_values`."""
        wire = self.to_wire()
        return {k: wire[k] for k in SAVED}

    def as_pytest_args(self) -> list[str]:
        """The suite's options as the arguments of a *child* pytest process (an argv
        boundary: the child builds its own object from them); never used to hand the
        options to the session of this process."""
        args = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            flag = "--" + f.name.replace("_", "-")
            if f.name in _NOT_ARGS or value is None or value is False:
                continue
            if value is True:
                args.append(flag)
            elif isinstance(value, tuple):
                args += [f"{flag}={v}" for v in value]
            else:
                args.append(f"{flag}={value}")
        return args


class Handover:
    """The plugin object by which ``pjrt-conformance run`` hands its :class:`RunOptions`
    to the session (``pytest.main(args, plugins=[Handover(options)])``)."""

    def __init__(self, options: RunOptions):
        self.options = options


def _sequence(value: Any) -> tuple[Any, ...]:
    """A repeatable option's values: None is none, one string is one value."""
    if value is None:
        return ()
    return (value,) if isinstance(value, (str, Path)) else tuple(value)


def handed(config: pytest.Config) -> RunOptions | None:
    """The options a :class:`Handover` among ``config``'s plugins carries, or None."""
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, Handover):
            return plugin.options
    return None


def run_options(config: pytest.Config) -> RunOptions:
    """The run's options (KeyError before the suite's plugin configured the run)."""
    return config.stash[KEY]
