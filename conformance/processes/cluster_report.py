"""The one report of a multi-host run, built by process 0 from every process's results.

Inputs (gathered by :mod:`conformance.processes.multihost`): each process's
``report.json`` of its per-process part (None where none arrived), each process's facts
(host, pid, environment), the global scenarios' per-process outcomes, and the processes
that were lost. :func:`build` merges them into one schema-2 document:

- a per-process test id keeps one result whose status is the worst over the processes
  that reported it (crash > timeout > fail_wrong_result > fail_error > flaky >
  not_supported > skipped > pass); its failure details come from the first process with
  that status, and ``ranks`` lists every process's status (``missing`` where a process
  has no result); ``scope`` is ``per_process``;
- a global check is ``conformance/test_multihost.py::test_global_mesh[NAME]`` with
  ``scope`` ``global`` and ``processes`` (each process's worker outcome);
- ``cluster`` records the topology (launcher, coordinator, process count, devices per
  process, the global mesh's device ids) and each process's environment and state.

A lost process, a global check that did not run, or a process whose part was cut short
makes the run ``incomplete`` (the reasons name the processes).
"""

from __future__ import annotations

from typing import Any

from conformance.certification.catalog.profiles import profile_id
from conformance.certification.results.records import FAILURE_FACTS, Result
from conformance.processes import mp_checks

SEVERITY = ("crash", "timeout", "fail_wrong_result", "fail_error", "flaky", "not_supported",
            "skipped", "waived", "pass")
GLOBAL_NODEID = "conformance/test_multihost.py::test_global_mesh[{}]"
HEADER_KEYS = ("suite", "platform", "requested_platform", "environment", "hypothesis",
               "known_failures", "command", "cpu_devices", "num_processes", "programs",
               "started_utc", "duration_s")


def global_nodeids() -> set[str]:
    """The test ids of the global checks (:data:`GLOBAL_NODEID` of each)."""
    return {GLOBAL_NODEID.format(c.name) for c in mp_checks.GLOBAL}


def _result(record: dict[str, Any], failure: dict[str, Any] | None, message: str) -> Result:
    """A :class:`Result` again from its report.json record (and failure entry)."""
    failure = failure or {}
    status = record.get("waived_from", record["status"]) if record["status"] == "waived" \
        else record["status"]
    return Result(record["nodeid"], record["area"], status, tier=record["tier"],
                  message=failure.get("message", message),
                  reproduction=failure.get("reproduction", ""),
                  command=failure.get("command", ""), duration_s=record["duration_s"],
                  known_failure=failure.get("known_failure", ""),
                  processes=record.get("processes"), capability=failure.get("capability"),
                  facts={k: failure.get(k) for k in FAILURE_FACTS},
                  attribution=record.get("attribution"), defect=record.get("defect"),
                  evidence=list(record.get("evidence", [])))


def merge_local(docs: dict[int, dict[str, Any] | None]) -> tuple[list[Result],
                                                                  dict[str, list[str]]]:
    """(one Result per per-process test id, test id -> status of each process)."""
    per: dict[str, dict[int, Result]] = {}
    for p, doc in sorted(docs.items()):
        if doc is None:
            continue
        failures = {f["nodeid"]: f for f in doc["failures"]}
        unsupported = {u["nodeid"]: u["message"] for u in doc["not_supported"]}
        for record in doc["results"]:
            nodeid = record["nodeid"]
            per.setdefault(nodeid, {})[p] = _result(record, failures.get(nodeid),
                                                    unsupported.get(nodeid, ""))
    merged, ranks = [], {}
    for nodeid, by_process in per.items():
        worst = min(by_process.items(), key=lambda kv: (SEVERITY.index(kv[1].status), kv[0]))
        p, result = worst
        if result.status != "pass" and len(docs) > 1:
            result.message = f"[process {p}] {result.message}"
        merged.append(result)
        ranks[nodeid] = [by_process[q].status if q in by_process else "missing"
                         for q in sorted(docs)]
    return merged, ranks


def global_results(outcomes: dict[str, list[dict[str, Any] | None]], tiers: dict[str, str],
                   lost: dict[int, str]) -> list[Result]:
    """One Result per global check that ran (a check with no outcome from any process
    did not run and has no result), not yet attributed (the pipeline that finishes the
    run does it: ``conformance.cli_multihost``); ``tiers``: the profile's test id ->
    tier; ``lost``: process -> why it was lost."""
    results = []
    for check in mp_checks.GLOBAL:
        per = outcomes.get(check.name) or []
        if not any(per):
            continue
        n = len(per)
        summaries = [o["summary"] if o else {
            "process": p, "status": "error", "returncode": None, "wall_s": 0.0,
            "error": lost.get(p, f"process {p} reported no outcome")} for p, o in enumerate(per)]
        problems = []
        if all(o and o["result"] is not None for o in per):
            problems = check.check([o["result"] for o in per], check.params())
        status = mp_checks.status_of([o["summary"] if o else None for o in per], problems)
        errors = [f"process {s['process']}: {s['error']}" for s in summaries if s["error"]]
        nodeid = GLOBAL_NODEID.format(check.name)
        results.append(Result(
            nodeid, "multihost", status, tier=tiers.get(profile_id(nodeid), "core"),
            message="\n".join(problems + errors)[:2000] if status != "pass" else "",
            duration_s=round(max((s["wall_s"] for s in summaries), default=0.0), 4),
            processes=summaries, capability="multi_process",
            reproduction=f"global scenario {check.scenario} on {n} process(es)"))
    return results


def topology(spec: dict[str, Any], docs: dict[int, Any], facts: dict[int, Any],
             outcomes: dict[str, list[Any]], lost: dict[int, str]) -> dict[str, Any]:
    """The ``cluster`` section of report.json (see docs/report-schema.md)."""
    view = outcomes.get("global_view") or []
    device_ids = [[d for d, _ in (o["result"] or {}).get("local_devices", [])] if o else None
                  for o in view]
    processes = []
    for p in range(spec["process_count"]):
        f, doc = facts.get(p) or {}, docs.get(p)
        processes.append({
            "process": p, "host": f.get("host"), "pid": f.get("pid"),
            "environment": {k: (f.get("environment") or {}).get(k)
                            for k in ("python", "jax", "jaxlib", "os")},
            "platform": (doc or {}).get("platform"),
            "local_device_count": ((doc or {}).get("platform") or {}).get("local_device_count"),
            "state": lost.get(p) or ("finished" if doc else "no per-process report"),
            "local_verdict": (doc or {}).get("verdict"),
            "local_wall_s": f.get("local_wall_s")})
    return {"mode": "multihost", "launcher": spec["launcher"],
            "coordinator": spec["coordinator"], "process_count": spec["process_count"],
            "devices_per_process": [p["local_device_count"] for p in processes],
            "global_mesh": {"axis_names": ["proc", "local"],
                            "shape": [spec["process_count"], mp_checks.DEVICES_PER_PROCESS],
                            "platform": "cpu", "device_ids": device_ids},
            "processes": processes}
