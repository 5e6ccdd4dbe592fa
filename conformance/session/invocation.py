"""How the tool's own pytest runs select the installed suite, wherever they start.

``pytest --pyargs conformance`` run from a clone's root with a non-editable
install fails before the first test: pytest takes the argument ``conformance``
for a path when a directory of that name exists in the working directory, loads
``./conformance/conftest.py`` as the module ``conformance.conftest``, and finds
the installed ``site-packages/conformance`` already imported under that name
(``ImportPathMismatchError``). The working directory's ``pyproject.toml`` would
also become the run's ini file.

The tool's runs therefore name the installed package by its absolute path, with
the package's parent as rootdir (node ids ``conformance/test_x.py::t[..]``, the
ids of every committed bundle) and the ini file shipped with the package
(:data:`INI`), so that neither the working directory's files nor its
``conftest.py`` take part.
"""

from __future__ import annotations

from pathlib import Path

import conformance

PACKAGE: Path = Path(conformance.__file__).resolve().parent
"""The installed suite (``.../site-packages/conformance`` or the clone's ``conformance``)."""

INI: Path = PACKAGE / "run-pytest.ini"
"""The ini file of the tool's runs (shipped as package data)."""


def suite_selection() -> list[str]:
    """pytest arguments that select the whole installed suite, hermetically:
    ``-c INI --rootdir PACKAGE.parent PACKAGE``. Raises FileNotFoundError when the
    package was installed without its ini file (a broken install)."""
    if not INI.is_file():
        raise FileNotFoundError(f"{INI} is missing: reinstall pjrt-conformance")
    return ["-c", str(INI), f"--rootdir={PACKAGE.parent}", str(PACKAGE)]
