"""Where a run's :class:`~conformance.session.run_options.RunOptions` come from, once.

- :func:`build`: the one builder from pytest's parsed options (``pytest --platform=...``),
  with their checks; the only reader of the suite's options in pytest's config
  (:func:`parsed_values`).
- :func:`from_namespace`: ``pjrt-conformance run`` builds them from its argparse
  namespace, after its own checks (:func:`conformance.cli._validate`), and hands them
  over (:class:`~conformance.session.run_options.Handover`).
- :func:`received`: what the suite's ``pytest_configure`` takes: a worker's from
  pytest-xdist's ``workerinput`` (:data:`WORKER_INPUT`, never its command line), else
  the handed object, else :func:`build`.

A bad value is :class:`conformance.session.validate.OptionError` (one line naming the
option); the plugin raises it as ``pytest.UsageError``, the CLI prints it and exits 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from conformance.session import options
from conformance.session import run_options
from conformance.session import validate
from conformance.session.run_options import RunOptions

#: workerinput key: the controller's options (:meth:`RunOptions.to_wire`).
WORKER_INPUT = "pjrt_conformance_options"
#: The ``dest`` of every option of the suite: :data:`options.SUITE_OPTIONS` and the
#: plugin's own (:data:`EXTRA_OPTIONS`).
EXTRA_OPTIONS = ("--report-dir", "--write-profile", "--force-report-dir")
#: Every option name the plugin registers (``--platform``, ``--report-dir``, ...).
NAMES = tuple(name for name, _ in options.SUITE_OPTIONS) + EXTRA_OPTIONS
SUITE_DESTS = tuple(name[2:].replace("-", "_") for name in NAMES)
#: pytest arguments (also after ``--`` of ``pjrt-conformance run``) the session reads.
PYTEST_LEVEL = ("hypothesis_profile", "hypothesis_seed", "progress", "progress_interval")


def parsed_values(config: pytest.Config) -> dict[str, Any]:
    """Every suite option and :data:`PYTEST_LEVEL` option as pytest parsed it (dest ->
    value; None for one no plugin registered). The one ``config.getoption`` of them."""
    return {dest: config.getoption(dest, None) for dest in SUITE_DESTS + PYTEST_LEVEL}


def build(config: pytest.Config) -> RunOptions:
    """The options of a ``pytest`` run, from pytest's parsed options, checked: the
    numbers, ``--float-controls``, every option file (a pipe read once into a private
    copy: :func:`conformance.session.option_files.read_once`) and ``--plugin-options``
    (parsed into ``create_options``). Called once, in the controller (or the only
    process). Raises OptionError."""
    from conformance.session import option_files

    values = parsed_values(config)
    validate.numbers(cpu_devices=values["cpu_devices"], num_processes=values["num_processes"])
    float_controls(values["float_controls"])
    option_files.read_once(values.get, values.__setitem__)
    option_files.check(values.get)
    values["create_options"] = validate.parsed_plugin_options(values["plugin_options"],
                                                              values["plugin_library"])
    return RunOptions.from_values(values)


def named_in_argv(config: pytest.Config) -> str | None:
    """The first of :data:`NAMES` on pytest's own command line (as ``--name`` or
    ``--name=value``), None when none is."""
    raw = {a.split("=", 1)[0] for a in config.invocation_params.args}
    return next((name for name in NAMES if name in raw), None)


def float_controls(value: Any) -> None:
    """Check a ``--float-controls`` value (OptionError naming the option)."""
    from conformance.helpers import float_control_modes

    try:
        float_control_modes.parse(value)
    except ValueError as err:
        raise validate.OptionError(str(err)) from None


def from_namespace(ns: argparse.Namespace, report_dir: Path | None, *,
                   force: bool = False) -> RunOptions:
    """The options of ``pjrt-conformance run``'s parsed and checked namespace ``ns``
    (``ns.create_options``: its ``--plugin-options`` parsed), writing the bundle into
    ``report_dir`` (``force``: replacing an earlier one)."""
    values = {dest: getattr(ns, dest, None) for dest in SUITE_DESTS}
    values.update(report_dir=report_dir, force_report_dir=force, write_profile=None,
                  create_options=getattr(ns, "create_options", None))
    return RunOptions.from_values(values)


def received(config: pytest.Config) -> RunOptions:
    """The run's options in this process (see the module docstring); a handed object
    gets the :data:`PYTEST_LEVEL` values of pytest's options. Raises OptionError (a
    bad value, or a suite option given as a pytest argument beside a handed object)."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return RunOptions.from_wire(worker[WORKER_INPUT])
    given = run_options.handed(config)
    if given is None:
        return build(config)
    clash = named_in_argv(config)
    if clash is not None:
        raise validate.OptionError(f"{clash}: a suite option given among the pytest "
                                   "arguments (after '--') is not read; give it to "
                                   "pjrt-conformance run before '--' (--output for "
                                   "--report-dir)")
    values = parsed_values(config)
    return RunOptions.from_values({**given.to_wire(), **{
        k: values[k] for k in PYTEST_LEVEL if values[k] is not None}})
