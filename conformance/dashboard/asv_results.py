"""Reading an asv results directory (asv 0.6, results format version 2).

Layout read (what ``asv run`` writes under its ``results_dir``)::

    benchmarks.json                 {name: {type, unit, params, param_names, code, ...}}
    <machine>/machine.json          {machine, arch, cpu, num_cpu, os, ram, version}
    <machine>/<commit8>-<env>.json  {commit_hash, date (ms since epoch), params,
                                     requirements, result_columns, results, version}
    <machine>/<commit8>-pip-freeze.txt   optional (benchmarks/nightly.sh)

:func:`load` raises :class:`UsageError` when the directory is missing or holds no
result, :class:`MalformedInput` when ``benchmarks.json`` or a ``machine.json`` is
not what asv writes. A results file that is malformed, or names a benchmark that
``benchmarks.json`` does not list, is skipped and named in ``problems``.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import itertools
import math
from pathlib import Path
from typing import Any

from conformance import file_limits
from conformance.certification import jsontext
from conformance.dashboard.errors import MalformedInput, UsageError

_MACHINE_KEYS = ("arch", "cpu", "machine", "num_cpu", "os", "ram")


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """One entry of benchmarks.json. ``params`` holds asv's repr strings per
    parameter (e.g. ``"'built-in'"``, ``"1024"``); ``doc`` is the method's docstring."""

    name: str
    type: str
    unit: str
    param_names: tuple[str, ...]
    params: tuple[tuple[str, ...], ...]
    title: str
    doc: str


@dataclasses.dataclass(frozen=True)
class Run:
    """One results file: the values of one commit in one environment on one machine.
    ``values[name]`` maps a parameter combination (repr strings, in ``param_names``
    order) to the value in the benchmark's unit; failed/skipped cases are absent.
    ``release`` is the environment's jaxlib version (asv's ``requirements``, else the
    pip freeze beside the file), None when neither names it. ``ci[name][combo]`` is
    asv's stored 99% confidence interval ``(low, high)`` of that value (columns
    ``stats_ci_99_a``/``stats_ci_99_b``), absent where asv stored none. ``date`` is
    the commit's date (asv's ``date``); ``ran_at`` when the run measured (the latest
    ``started_at`` of its results), None when asv stored no start time."""

    machine: str
    commit: str
    date: datetime.datetime
    env: str
    source: Path
    values: dict[str, dict[tuple[str, ...], float]]
    release: str | None = None
    ci: dict[str, dict[tuple[str, ...], tuple[float, float]]] = dataclasses.field(
        default_factory=dict)
    ran_at: datetime.datetime | None = None


@dataclasses.dataclass
class ResultsDir:
    root: Path
    benchmarks: dict[str, Benchmark]
    machines: dict[str, dict[str, Any]]
    runs: list[Run]
    problems: list[str]


def _read_json(path: Path) -> Any:
    try:
        return jsontext.loads(file_limits.read_text(   # no FIFO or device, 256 MiB
            path, limit=file_limits.BUNDLE_FILE_LIMIT))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise MalformedInput(f"{path}: not readable JSON ({' '.join(str(err).split())})") \
            from err


def _need(doc: Any, key: str, kind: type | tuple[type, ...], where: Path) -> Any:
    if not isinstance(doc, dict):
        raise MalformedInput(f"{where}: expected a JSON object, got {type(doc).__name__}")
    if key not in doc:
        raise MalformedInput(f"{where}: missing key {key!r}")
    if not isinstance(doc[key], kind) or isinstance(doc[key], bool):
        raise MalformedInput(f"{where}: key {key!r} has the wrong type "
                             f"({type(doc[key]).__name__})")
    return doc[key]


def _docstring(code: str, name: str) -> str:
    """The docstring of method/function ``name`` in asv's ``code`` text, or ""."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return " ".join((ast.get_docstring(node) or "").split())
    return ""


def _benchmark(name: str, entry: Any, where: Path) -> Benchmark:
    at = where.with_name(f"{where.name}[{name!r}]")
    params = _need(entry, "params", list, at)
    names = _need(entry, "param_names", list, at)
    if len(params) != len(names) or not all(isinstance(p, list) for p in params):
        raise MalformedInput(f"{at}: key 'params' does not match 'param_names'")
    method = name.rsplit(".", 1)[-1]
    return Benchmark(name=name, type=_need(entry, "type", str, at),
                     unit=_need(entry, "unit", str, at),
                     param_names=tuple(map(str, names)),
                     params=tuple(tuple(map(str, p)) for p in params),
                     title=str(entry.get("pretty_name") or name),
                     doc=_docstring(str(entry.get("code", "")), method))


def _env_label(doc: dict[str, Any], freeze: Path) -> str:
    reqs = doc.get("requirements") or {}
    if isinstance(reqs, dict) and reqs:
        return ", ".join(f"{k.removeprefix('req-')} {v}" for k, v in sorted(reqs.items()))
    python = str((doc.get("params") or {}).get("python", doc.get("python", "?")))
    if "/" not in python:
        return f"python {python}"
    pins = []  # an existing environment: its versions from nightly.sh's pip freeze
    if freeze.is_file():
        lines = freeze.read_text(encoding="utf-8", errors="replace").splitlines()
        pins = [ln.replace("==", " ") for ln in lines if ln.startswith(("jax==", "jaxlib=="))]
    return "installed: " + (", ".join(sorted(pins)) if pins else python)


def _release(doc: dict[str, Any], freeze: Path) -> str | None:
    """The jaxlib version of a results file's environment, or None."""
    reqs = doc.get("requirements") or {}
    if isinstance(reqs, dict):
        for key in ("jaxlib", "req-jaxlib"):
            if reqs.get(key):
                return str(reqs[key])
    if freeze.is_file():
        for line in freeze.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("jaxlib=="):
                return line.split("==", 1)[1].strip()
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _values(bench: Benchmark, entry: Any, columns: list[str], where: str
            ) -> tuple[dict[tuple[str, ...], float],
                       dict[tuple[str, ...], tuple[float, float]]]:
    """(value, 99% interval) per parameter combination of one benchmark's result row."""
    if not isinstance(entry, list) or len(entry) < 2:
        raise MalformedInput(f"{where}: expected a list of result columns")
    row = dict(zip(columns, entry))
    result, params = row.get("result"), row.get("params")
    if not isinstance(params, list) or (result is not None and not isinstance(result, list)):
        raise MalformedInput(f"{where}: 'result' and 'params' must be lists")
    combos = list(itertools.product(*[list(map(str, p)) for p in params]))
    if result is None:
        return {}, {}
    if len(result) != len(combos):
        raise MalformedInput(f"{where}: {len(result)} values for {len(combos)} parameter "
                             "combinations")
    low, high = row.get("stats_ci_99_a"), row.get("stats_ci_99_b")
    bounds = list(zip(low, high)) if isinstance(low, list) and isinstance(high, list) \
        and len(low) == len(high) == len(combos) else [(None, None)] * len(combos)
    out, ci = {}, {}
    for combo, value, (lo, hi) in zip(combos, result, bounds):
        if _finite(value):
            out[tuple(combo)] = float(value)
            if _finite(lo) and _finite(hi) and lo <= value <= hi:
                ci[tuple(combo)] = (float(lo), float(hi))
    return out, ci


def _run(path: Path, machine: str, benchmarks: dict[str, Benchmark]) -> Run:
    doc = _read_json(path)
    commit = _need(doc, "commit_hash", str, path)
    date_ms = _need(doc, "date", (int, float), path)
    columns = _need(doc, "result_columns", list, path)
    results = _need(doc, "results", dict, path)
    if "result" not in columns or "params" not in columns:
        raise MalformedInput(f"{path}: key 'result_columns' lacks 'result' or 'params'")
    unknown = sorted(set(results) - set(benchmarks))
    if unknown:
        raise MalformedInput(f"{path}: benchmark {unknown[0]!r} is not in benchmarks.json"
                             + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    rows = {name: _values(benchmarks[name], entry, columns, f"{path}: results[{name!r}]")
            for name, entry in results.items()}
    date = datetime.datetime.fromtimestamp(date_ms / 1000, tz=datetime.timezone.utc)
    at = columns.index("started_at") if "started_at" in columns else None
    starts = [e[at] for e in results.values() if at is not None and isinstance(e, list)
              and len(e) > at and _finite(e[at])]
    ran_at = datetime.datetime.fromtimestamp(max(starts) / 1000, tz=datetime.timezone.utc) \
        if starts else None
    freeze = path.with_name(f"{commit[:8]}-pip-freeze.txt")
    return Run(machine=machine, commit=commit, date=date, env=_env_label(doc, freeze),
               source=path, values={n: v for n, (v, _) in rows.items()},
               release=_release(doc, freeze), ci={n: c for n, (_, c) in rows.items()},
               ran_at=ran_at)


def read_run(path: Path, machine: str, benchmarks: dict[str, Benchmark] | None = None
             ) -> Run:
    """One asv results file ``path`` of ``machine`` as a :class:`Run`; ``benchmarks``
    (benchmarks.json) None: benchmark names are not checked. Raises MalformedInput
    when the file is not an asv results file (or names a benchmark not in
    ``benchmarks``)."""
    if benchmarks is None:
        doc = _read_json(path)
        names = doc.get("results") if isinstance(doc, dict) else None
        benchmarks = {n: None for n in names} if isinstance(names, dict) else {}
    return _run(path, machine, benchmarks)


def read_benchmarks(index: Path) -> dict[str, Benchmark]:
    """The benchmarks of asv's ``benchmarks.json`` at ``index``, by name. Raises
    UsageError when the file is missing, MalformedInput when it is malformed."""
    index = Path(index)
    if not index.is_file():
        raise UsageError(f"{index.parent}: no benchmarks.json (not an asv results "
                         "directory, or asv run has not stored results yet)")
    doc = _read_json(index)
    if not isinstance(doc, dict):
        raise MalformedInput(f"{index}: expected a JSON object")
    return {name: _benchmark(name, entry, index) for name, entry in doc.items()
            if name != "version"}


def load(root: Path) -> ResultsDir:
    """Every run under the asv results directory ``root`` (see the module doc).

    Raises UsageError when ``root`` is not a directory or holds no results file;
    MalformedInput when benchmarks.json or a machine.json is malformed."""
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"{root}: no such asv results directory")
    benchmarks = read_benchmarks(root / "benchmarks.json")
    machines: dict[str, dict[str, Any]] = {}
    runs: list[Run] = []
    problems: list[str] = []
    for mfile in sorted(root.glob("*/machine.json")):
        info = _read_json(mfile)
        name = _need(info, "machine", str, mfile)
        machines[name] = {k: info[k] for k in _MACHINE_KEYS if k in info}
        for path in sorted(mfile.parent.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                runs.append(_run(path, name, benchmarks))
            except MalformedInput as err:
                problems.append(str(err))
    if not runs and not problems:
        raise UsageError(f"{root}: holds no asv results file (<machine>/<commit>-<env>.json)")
    return ResultsDir(root=root, benchmarks=benchmarks, machines=machines, runs=runs,
                      problems=problems)
