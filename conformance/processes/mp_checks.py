"""Checks of the scenarios that run on a global mesh over every process, shared by the
loopback areas (``multi_process``, ``multihost``) and the multi-host mode of
``pjrt-conformance run`` (:mod:`conformance.processes.multihost`).

Each check takes the scenario results of processes 0..n-1 (the JSON dicts that
:mod:`conformance.processes.mp_scenarios` / :mod:`~conformance.processes.mh_scenarios`
return) and returns a list of problems (empty: the check passed). :data:`GLOBAL` is the
deterministic scenario list every process of a cluster runs in the same order (SPMD).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from conformance.programs import sharded_programs

#: Devices of each process in the global-mesh scenarios (CPU clients, ``--cpu-devices``
#: does not apply: every process contributes the same number).
DEVICES_PER_PROCESS = 2


def global_view(results: list[dict[str, Any]], per_process: int) -> list[str]:
    """Every process sees the same global device list of ``len(results) * per_process``
    distinct ids, its own ``process_index`` and local devices that are its own, and the
    local lists partition the global one."""
    n, first = len(results), results[0]["devices"]
    ids = [d for d, _ in first]
    problems = [] if len(set(ids)) == len(ids) == n * per_process else [
        f"global device ids {ids}: expected {n * per_process} distinct ids"]
    union = []
    for pid, r in enumerate(results):
        where = f"process {pid} of {n}"
        if r["devices"] != first:
            problems.append(f"global device list {r['devices']} differs from process 0's "
                            f"{first} [{where}]")
        if r["process_index"] != pid:
            problems.append(f"process_index()={r['process_index']} [{where}]")
        if r["device_count"] != len(first) or r["local_device_count"] != per_process:
            problems.append(f"device_count={r['device_count']}, local_device_count="
                            f"{r['local_device_count']} [{where}]")
        if not all(p == pid for _, p in r["local_devices"]):
            problems.append(f"local devices {r['local_devices']} belong to other processes "
                            f"[{where}]")
        union += r["local_devices"]
    if sorted(union) != sorted(first):
        problems.append(f"local device lists {union} do not partition the global list {first}")
    return problems


def collectives(results: list[dict[str, Any]], cases: list[dict[str, Any]],
                per_process: int) -> list[str]:
    """Every case's output shards match NumPy in every process, every device holds one
    output shard, and replicas of one index agree across processes."""
    problems, n = [], len(results)
    for c, case in enumerate(cases):
        digests: dict[str, set[str]] = {}
        covered = 0
        for pid, r in enumerate(results):
            res = r["results"][c]
            if res["mismatches"]:
                problems.append(f"{case['collective']} over {case['axis']} ({case['dtype']}) "
                                f"differs from NumPy in process {pid}: {res['mismatches'][:3]}")
            for shard in res["shards"]:
                digests.setdefault(str(shard["index"]), set()).add(shard["digest"])
                covered += 1
        if covered != per_process * n:
            problems.append(f"{case['collective']}: {covered} output shards for "
                            f"{per_process * n} devices")
        split = {k: v for k, v in digests.items() if len(v) > 1}
        if split:
            problems.append(f"{case['collective']}: replicas of one index differ: {split}")
    return problems


def global_arrays(results: list[dict[str, Any]], per_process: int) -> list[str]:
    """The global array has the global shape and is not fully addressable (n > 1); each
    process's shards after ``batched_device_put``, after
    ``make_array_from_single_device_arrays`` and after ``reorder_shards`` hold their
    slices; every device's copy of the global sum is right; the reordered array is over the
    requested device order."""
    problems, n = [], len(results)
    for pid, r in enumerate(results):
        where = f"process {pid} of {n}"
        if r["fully_addressable"] != (n == 1):
            problems.append(f"is_fully_addressable={r['fully_addressable']} with {n} "
                            f"process(es) [{where}]")
        for step, error in (("make_array_from_single_device_arrays", r["make_error"]),
                            ("reorder_shards", r["reorder_error"])):
            if error:
                problems.append(f"{step} raised {error} [{where}]")
        for step in ("put", "made", "reorder"):
            bad, shards = r.get(f"{step}_mismatches") or [], r.get(f"{step}_shards") or []
            problems += [f"{step}: {m} [{where}]" for m in bad[:3]]
            if len(shards) != per_process and f"{step}_shards" in r:
                problems.append(f"{step}: {len(shards)} addressable shards, expected "
                                f"{per_process} [{where}]")
        wrong = [s for s in r["sums"] if s != r["expected_sum"]]
        if wrong or len(r["sums"]) != per_process:
            problems.append(f"global sum on this process's devices: {r['sums']}, expected "
                            f"{r['expected_sum']} on each of {per_process} [{where}]")
        if r.get("reorder_devices") not in (None, r.get("expected_reorder_devices")):
            problems.append(f"reorder_shards gave devices {r['reorder_devices']}, expected "
                            f"{r['expected_reorder_devices']} [{where}]")
    return problems


def collective_cases() -> list[dict[str, Any]]:
    """Every collective over the cross-process axis ``proc`` (and the in-process axis
    ``local`` except all_to_all), int32, with fixed seeds: the same cases in every run."""
    return [{"collective": name, "axis": axis, "k0": 1, "k1": 2, "dtype": "int32",
             "seed": 1000 + i}
            for i, (name, axis) in enumerate(
                (name, axis) for name in sharded_programs.COLLECTIVES for axis in ("proc", "local")
                if not (name == "all_to_all" and axis == "local"))]


@dataclasses.dataclass(frozen=True)
class GlobalCheck:
    """One scenario of the global list: its name, params and check(results) -> problems."""

    name: str
    scenario: str
    params: Callable[[], dict[str, Any]]
    check: Callable[[list[dict[str, Any]], dict[str, Any]], list[str]]
    timeout_s: float = 120.0


GLOBAL = (
    GlobalCheck("global_view", "global_view", dict,
                lambda rs, p: global_view(rs, DEVICES_PER_PROCESS)),
    GlobalCheck("collectives", "collectives", lambda: {"cases": collective_cases()},
                lambda rs, p: collectives(rs, p["cases"], DEVICES_PER_PROCESS)),
    GlobalCheck("global_arrays", "global_arrays", dict,
                lambda rs, p: global_arrays(rs, DEVICES_PER_PROCESS)),
)
BY_NAME = {c.name: c for c in GLOBAL}


def status_of(outcomes: list[dict[str, Any] | None], problems: list[str]) -> str:
    """The result status of a global check from each process's worker summary (None: the
    process never reported) and the check's problems: ``crash`` (a process missing or
    ended by a signal), ``timeout`` (killed at the scenario's timeout), ``fail_error``
    (a scenario raised), ``fail_wrong_result`` (problems), else ``pass``."""
    if any(o is None or (o["returncode"] or 0) < 0 for o in outcomes):
        return "crash"
    if any(o["returncode"] is None for o in outcomes):
        return "timeout"
    if any(o["status"] != "pass" for o in outcomes):
        return "fail_error"
    return "fail_wrong_result" if problems else "pass"
