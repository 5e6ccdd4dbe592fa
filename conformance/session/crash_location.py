"""The file of a test whose pytest-xdist worker died, so that its crash keeps the test's id.

pytest-xdist reports a dead worker's test with the node id alone and gives the id's
file part as its location (``'test_transfer.py'``). Every other report's location is
the file's path relative to the rootdir (``'../venv/.../conformance/test_transfer.py'``),
and :func:`conformance.certification.provenance.package_nodeid` needs that path to give
a test of the installed suite its package-relative id
(``'conformance/test_transfer.py::...'``). Without it a crash of ``pjrt-conformance run``
(``--pyargs conformance``, whose node ids are relative to the package) was recorded
under another id than the test's own, and a re-run that passed counted as a pass.

:class:`Locations` learns each file's path from ``pytest_runtest_logstart`` (forwarded
by pytest-xdist from the worker before the test's setup) and otherwise resolves the
id's file part against the run's collection arguments, as pytest did.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any


class Locations:
    """Test file paths (as pytest reports them) by the file part of the node id."""

    def __init__(self, config: Any):
        """``config``: the pytest config of the controller (``args``, ``option.pyargs``,
        ``invocation_params.dir``)."""
        self.config = config
        self.by_file: dict[str, str] = {}

    def note(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        """Record the file path of ``nodeid`` (``location``: pytest's (path, line, name))."""
        if location and location[0]:
            self.by_file.setdefault(nodeid.partition("::")[0], str(location[0]))

    def of(self, nodeid: str) -> tuple[str, None, str]:
        """A location for the crash report of ``nodeid``: (file path, None, test name).
        The path is one learned by :meth:`note`, else the id's file part resolved against
        the collection arguments, else the file part itself (pytest-xdist's own)."""
        file, _, name = nodeid.partition("::")
        path = self.by_file.get(file) or self._resolve(file) or file
        return (path, None, name or file)

    def _resolve(self, file: str) -> str | None:
        """The existing file ``file`` under one of the collection arguments (a module
        name with ``--pyargs``), or under the rootdir; None when there is none."""
        base = Path(self.config.invocation_params.dir)
        roots = [Path(self.config.rootpath)]
        for arg in self.config.args:
            arg = str(arg).split("::")[0]
            if getattr(self.config.option, "pyargs", False):
                try:
                    spec = importlib.util.find_spec(arg)
                except (ImportError, ValueError):
                    spec = None
                if spec is not None and spec.submodule_search_locations:
                    roots += [Path(p) for p in spec.submodule_search_locations]
                elif spec is not None and spec.origin:
                    roots.append(Path(spec.origin).parent)
            path = base / arg
            roots.append(path if path.is_dir() else path.parent)
        for root in roots:
            candidate = root / file
            if candidate.is_file():
                return str(candidate)
        return None
