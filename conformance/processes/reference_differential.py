"""The reference differential: re-run failing tests on the reference backend.

The reference is jaxlib's built-in CPU client (``--platform=cpu`` without
``--plugin-library``). When the platform under test is another one, the failing test
ids are re-run there in one child pytest process (bounded by a time limit and a
number of ids), and the outcome becomes evidence for attribution
(:mod:`conformance.certification.attribution.attribution_sources`): a ``reference`` item with the
result's ``status``, the ``reference_status`` there (or ``not_rerun``: why none) and the
reference client's own cataloged defect (``reference_defect``). The answers follow the
PJRT C API boundary rule of
:func:`conformance.certification.attribution.reference_rule.decision` (a pass there:
``plugin``; failing the same is never evidence for the framework).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import conformance
from conformance.certification.attribution import attribution_sources
from conformance.certification.catalog import known_failures
from conformance.certification.results.records import FATAL
from conformance.certification.attribution.reference_rule import (REFERENCE, REFERENCE_NAME,  # noqa: F401
                                                      _FILE, answer, is_reference, key,
                                                      reference_nodeid)
from conformance.processes import runner

MAX_IDS = 200
_PYTEST_MAIN = runner.Module("pytest")


def targets(nodeids: list[str]) -> list[str]:
    """Child pytest arguments for ``nodeids``: ``--pyargs conformance.test_x::t[..]`` (with
    the suite's parent as rootdir) when every one is a test of the installed suite,
    wherever the run's rootdir was; else the node ids as they are (relative to the
    rootdir)."""
    suite = Path(conformance.__file__).parent
    names = [_FILE.match(n) for n in nodeids]
    if all(m and (suite / f"{m.group(1)}.py").is_file() for m in names):
        return [f"--rootdir={suite.parent}", "--pyargs"] + [
            f"conformance.{m.group(1)}::{reference_nodeid(n)[m.end():]}"
            for m, n in zip(names, nodeids)]
    return [reference_nodeid(n) for n in nodeids]


def rerun(nodeids: list[str], *, rootdir: Path, cpu_devices: int, num_processes: int,
          timeout_s: float) -> dict[str, str] | str:
    """Statuses (by :func:`key`) of ``nodeids`` run on the reference in a child pytest
    (one pytest-xdist worker, so a crash ends one test, not the re-run), or a string
    saying why there are none (timeout, no report). ``timeout_s``: seconds, > 0."""
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        args = [*targets(nodeids), f"--platform={REFERENCE}",
                f"--cpu-devices={cpu_devices}", f"--num-processes={num_processes}",
                "--profile=none", "--defects=none", "--reference-differential=off",
                f"--report-dir={out}", "-p", "no:cacheprovider", "-q", "-n", "1",
                "-o", "addopts="]
        child = runner.run_python(_PYTEST_MAIN, args, cwd=rootdir, timeout=timeout_s)
        if child.timed_out:
            return f"the re-run took longer than {timeout_s:g} s"
        try:
            doc = json.loads((out / "report.json").read_text())
        except (OSError, json.JSONDecodeError):
            return "the re-run wrote no report"
    return {key(r["nodeid"]): r["status"] for r in doc["results"]}


def source(results: list[Any], *, catalog: list[known_failures.Entry], rootdir: Path,
           cpu_devices: int, num_processes: int, timeout_s: float) -> attribution_sources.Source:
    """Re-run the failing ``results`` (status in FATAL, at most :data:`MAX_IDS`) on the
    reference and return the evidence source of their outcomes
    (:func:`conformance.certification.attribution.reference_rule.answer`). ``catalog``: the
    known-failure entries, to recognise the reference client's own defects."""
    failing = [r.nodeid for r in results if r.status in FATAL]
    chosen = failing[:MAX_IDS]
    ref_ids = {n: key(n) for n in chosen}
    found = rerun(chosen, rootdir=rootdir, cpu_devices=cpu_devices,
                  num_processes=num_processes, timeout_s=timeout_s) if chosen else {}
    statuses = found if isinstance(found, dict) else {}
    why = found if isinstance(found, str) else "not collected there"
    own_defects = [e for e in catalog if e.defect is not None
                   and e.defect.attribution == "plugin" and e.applies(REFERENCE, False)]
    own = {k: next((e for e in own_defects if e.matches(f"conformance/{k}")), None)
           for k in statuses}

    def evidence(record: dict[str, Any]) -> dict[str, Any] | None:
        nodeid = record["nodeid"]
        if record["status"] not in FATAL:
            return None
        if nodeid not in ref_ids:
            return answer(record["status"], None, None, f"over the limit of {MAX_IDS} tests")
        ref_id = ref_ids[nodeid]
        return answer(record["status"], statuses.get(ref_id), own.get(ref_id), why)
    return attribution_sources.Source("reference", evidence)
