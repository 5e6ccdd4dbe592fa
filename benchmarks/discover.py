"""The asv benchmarks of this package as plain cases, for pytest front ends.

asv finds ``time_``, ``peakmem_``, ``track_`` and ``timeraw_`` methods of the
classes in ``bench_*.py`` and runs each parameter combination of the class's
``params``; :func:`cases` yields the same list so pytest-benchmark and the CI
smoke test run exactly what the dashboards run.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import itertools
import pkgutil
import subprocess
import sys
import time
from typing import Any

import benchmarks

PREFIXES = ("time_", "peakmem_", "track_", "timeraw_")


@dataclasses.dataclass(frozen=True)
class Case:
    module: str
    cls: type
    method: str
    params: tuple[Any, ...]

    @property
    def _tail(self) -> str:
        return f"[{'-'.join(str(p) for p in self.params)}]" if self.params else ""

    @property
    def id(self) -> str:
        return f"{self.module}.{self.cls.__name__}.{self.method}{self._tail}"

    @property
    def group(self) -> str:
        """The operation and its references share the class and the parameters."""
        return f"{self.module}.{self.cls.__name__}{self._tail}"

    @property
    def kind(self) -> str:
        return self.method.split("_", 1)[0]


def _param_grid(cls: type) -> list[tuple[Any, ...]]:
    params = getattr(cls, "params", None)
    if params is None:
        return [()]
    if not (isinstance(params, tuple) and params and isinstance(params[0], list)):
        params = (params,)
    return list(itertools.product(*params))


def cases(smallest: bool = False) -> list[Case]:
    """Every benchmark case; ``smallest``: only the first parameter combination."""
    out = []
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda i: i.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            methods = [m for m in vars(cls) if m.startswith(PREFIXES)]
            grid = _param_grid(cls)[:1] if smallest else _param_grid(cls)
            out += [Case(info.name, cls, m, p) for m in sorted(methods) for p in grid]
    return out


class Skip(Exception):
    """The case cannot run here (asv's NotImplementedError from setup)."""


def prepared(case: Case) -> tuple[Any, Any]:
    """(instance after ``setup(*params)``, bound method). Raises Skip."""
    obj = case.cls()
    try:
        if hasattr(obj, "setup"):
            obj.setup(*case.params)
    except NotImplementedError as err:
        raise Skip(str(err)) from err
    return obj, getattr(obj, case.method)


def finish(case: Case, obj: Any) -> None:
    if hasattr(obj, "teardown"):
        obj.teardown(*case.params)


def run_timeraw(code: str) -> float:
    """Seconds for a fresh interpreter to run ``code`` (asv ``timeraw_``)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start
