"""Below the framework: re-run a failure directly through the PJRT C API.

:func:`evidence` takes one failure record of ``report.json`` (``failures[i]``) and
the report (its ``platform.loaded`` names the plugin library and its create
options) and re-runs the failing operation on the plugin through ``pypjrt`` (ctypes
on the plugin's ``GetPjrtApi``; no jaxlib) in a child process
(:mod:`conformance.capi.child`, started by :mod:`conformance.processes.runner`), so a
plugin crash never takes the caller down. ``docs/capi-path.md`` says why pypjrt.

Correct there means the framework's layer above the C API made the failure;
wrong there (or a crash) means the plugin did. A partitioned program is re-run
partitioned, with the placement the test recorded (``failures[].arrays.sharding``);
one recorded without it is not re-run at all (outcome ``declined``, no evidence): a
re-run on one device is not the failing configuration.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.helpers import partitioned
from conformance.certification.attribution import attribution_sources
from conformance.certification import local_paths
from conformance.certification.rendering import repro
from conformance.processes import runner

#: The attribution strings this module returns (the shared data model's names).
#: The child's module, run as ``python -m`` by :mod:`conformance.processes.runner`.
_CHILD = runner.Module("conformance.capi.child")
_WRONG_RESULT = "fail_wrong_result"
#: The outcome of a re-run that was not made (no evidence either way).
DECLINED = "declined"
#: test_lifecycle.py tests -> the C API operation on a deleted buffer that they exercise
#: (on_device_size_in_bytes and execute have no defined C API error to check).
LIFETIME_OPERATIONS = {
    "test_delete_then_is_deleted": "is_deleted",
    "test_double_delete_is_harmless": "double_delete",
    "test_use_after_delete_raises[is_ready]": "ready",
    "test_use_after_delete_raises[block_until_ready]": "ready",
    "test_use_after_delete_raises[asarray]": "to_host",
    "test_use_after_delete_raises[clone]": "clone"}
_TRANSFER_AREAS = ("transfer", "host_buffer_semantics")


def plugin_of(header: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(library_path, create_options)`` of the run's C API plugin, or None when the
    run did not load one (jaxlib's built-in clients have no C API to call) or the
    library is not on this machine. Raises TypeError for a ``header`` that is not a dict."""
    if not isinstance(header, dict):
        raise TypeError(f"plugin_of: argument 'header' must be the report dict, "
                        f"got {type(header).__name__}")
    loaded = (header.get("platform") or {}).get("loaded") or {}
    if loaded.get("how") != "PJRT C API plugin":
        return None
    # a bundle's report names the library by its package (local_paths.for_bundle)
    path = local_paths.find_library(loaded)
    if path is None:
        return None
    return path, dict(loaded.get("options") or {})


def plan(record: dict[str, Any], header: dict[str, Any]) -> dict[str, Any] | None:
    """The check for ``record`` (a ``failures[]`` entry), or None when none applies:
    no C API plugin, or nothing recorded that the C API can re-run.

    ``execute`` for a wrong result with its program, inputs and comparison recorded;
    ``transfer`` for a wrong result of the transfer areas with its inputs recorded;
    ``lifetime`` for the delete tests of :data:`LIFETIME_OPERATIONS`. An ``execute`` of
    a program of several partitions recorded without its placement carries
    ``declined`` (why it is not re-run: :func:`run` answers :data:`DECLINED`). Raises TypeError
    for a ``record`` that is not a dict."""
    if not isinstance(record, dict):
        raise TypeError(f"plan: argument 'record' must be a failures[] dict, "
                        f"got {type(record).__name__}")
    found = plugin_of(header)
    if found is None:
        return None
    base = {"library_path": found[0], "options": found[1], "nodeid": record.get("nodeid")}
    arrays = record.get("arrays") or {}
    wrong = record.get("status") == _WRONG_RESULT
    if wrong and record.get("program_text") and arrays.get("inputs") and arrays.get("expected"):
        found = {**base, "check": "execute", "program": record["program_text"], "arrays": arrays}
        n = repro.partitions(record)
        if n > 1 and not arrays.get("sharding"):
            found["declined"] = partitioned.declined_detail(n)
        return found
    if wrong and record.get("area") in _TRANSFER_AREAS and arrays.get("inputs"):
        return {**base, "check": "transfer", "arrays": arrays}
    path, _, name = str(record.get("nodeid")).partition("::")
    if path.endswith("test_lifecycle.py") and name in LIFETIME_OPERATIONS:
        return {**base, "check": "lifetime", "operation": LIFETIME_OPERATIONS[name]}
    return None


def run(check: dict[str, Any], *, timeout: float = 120.0) -> tuple[str, str]:
    """Run a :func:`plan` in a child process: ``("correct" | "wrong" | "undecided" |
    "declined", detail)``; a child killed by a signal is ``"wrong"`` (the plugin
    crashed), one past ``timeout`` seconds ``"undecided"``; a plan that carries
    ``declined`` starts no child (``"declined"``, its reason)."""
    if check.get("declined"):
        return DECLINED, check["declined"]
    fd, path = tempfile.mkstemp(prefix="pjrt-capi-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(check, f)
        child = runner.run_python(_CHILD, [path], timeout=timeout)
    finally:
        os.unlink(path)
    if child.timed_out:
        return "undecided", f"the C API check ran past {timeout:g} s"
    if child.signal:
        return "wrong", (f"the plugin killed the process ({child.signal}) in the "
                         f"{check['check']} check")
    lines = [ln for ln in child.stdout.splitlines() if ln.startswith("{")]
    try:
        found = json.loads(lines[-1])
        return found["verdict"], found["detail"]
    except (IndexError, ValueError, KeyError):
        tail = (child.stderr or child.stdout).strip().splitlines()[-1:] or [""]
        return "undecided", f"the C API check exited {child.returncode}: {tail[0]}"


def evidence(record: dict[str, Any], header: dict[str, Any], *,
             timeout: float = 120.0) -> dict[str, Any] | None:
    """Attribution of one failure by re-running it below the framework.

    ``record``: a ``report.json["failures"]`` entry; ``header``: the report (its
    ``platform.loaded``). Returns the ``capi`` evidence item's facts
    (:func:`conformance.certification.attribution.attribution_sources.capi_facts`): ``answer``
    ``framework`` when the plugin gets it right on its own (``outcome`` ``correct``),
    ``plugin`` when it does not, a crash included (``wrong``), with the ``check`` and the
    child's ``detail``; None when this check cannot decide (no C API plugin, nothing
    recorded to re-run, an op or dtype the check does not handle, an undecided re-run,
    a declined one: a partitioned program recorded without its placement).
    ``timeout``: seconds for the child process. Raises TypeError for a ``record`` or
    ``header`` that is not a dict.
    """
    check = plan(record, header)
    if check is None:
        return None
    outcome, detail = run(check, timeout=timeout)
    return attribution_sources.capi_facts(check["check"], outcome, detail)


def hook(header: dict[str, Any], *, timeout: float = 120.0
         ) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """:func:`evidence` bound to one report: the ``Callable[[record], facts | None]``
    form of an attribution source (``Source("capi", hook(header))``). Each call starts
    one child process (about 1-3 s on CPU plugins). Raises TypeError for a ``header``
    that is not a dict."""
    plugin_of(header)  # TypeError now, not at the first call
    return functools.partial(evidence, header=header, timeout=timeout)
