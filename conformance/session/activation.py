"""When the suite's pytest plugin acts: only in a run that asks for the suite.

The ``pytest11`` entry point loads the plugin into every pytest run of every project
in the environment. It always registers its options; everything else (the suite's
Hypothesis profile, importing jax, opening a client, recording, the report) happens
only when :func:`requested` is true:

- the run collects the ``conformance`` package (a path argument inside it or holding
  it, or ``--pyargs conformance[.module]``), or
- a suite option is given (``--platform`` even at its default, or any suite option with
  a value other than its default, also from ``addopts``), or
- the plugin is named explicitly: ``-p pjrt_conformance`` (its entry-point name) or
  ``-p conformance.session.pytest_plugin``.

This module imports nothing heavy (no jax, no hypothesis).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.session import option_intake
from conformance.session import options

PACKAGE = Path(__file__).resolve().parents[1]
PACKAGE_NAME = PACKAGE.name
#: Installed into site-packages: a project directory that holds its virtual environment
#: does not collect the suite by holding it.
_INSTALLED = any(part in ("site-packages", "dist-packages") for part in PACKAGE.parts)
PLUGIN_NAMES = ("pjrt_conformance", "conformance.session.pytest_plugin")
#: Options of the plugin itself beyond :data:`conformance.session.options.SUITE_OPTIONS`.
EXTRA_OPTIONS = option_intake.EXTRA_OPTIONS


def _named_plugin(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg == "-p" and i + 1 < len(args) and args[i + 1] in PLUGIN_NAMES:
            return True
        if arg.startswith("-p") and arg[2:] in PLUGIN_NAMES:
            return True
    return False


def _collects_package(config: pytest.Config) -> bool:
    pyargs = bool(getattr(config.option, "pyargs", False))
    for arg in config.args:
        target = arg.split("::", 1)[0]
        if pyargs and (target == PACKAGE_NAME or target.startswith(PACKAGE_NAME + ".")):
            return True
        try:
            path = (config.invocation_params.dir / target).resolve()
        except (OSError, ValueError):
            continue
        if path == PACKAGE or PACKAGE in path.parents or (
                path in PACKAGE.parents and not _INSTALLED):
            return True
    return False


def _option_given(config: pytest.Config) -> bool:
    if option_intake.named_in_argv(config) is not None:
        return True
    values = option_intake.parsed_values(config)   # read, not yet checked or built
    for name, kwargs in options.SUITE_OPTIONS:
        if values[name[2:].replace("-", "_")] not in (kwargs.get("default"), None, []):
            return True
    return any(values[n[2:].replace("-", "_")] for n in EXTRA_OPTIONS)


def requested(config: pytest.Config) -> bool:
    """True when the run asks for the conformance suite (see the module docstring)."""
    return (_named_plugin(list(config.invocation_params.args)) or _option_given(config)
            or _collects_package(config))
