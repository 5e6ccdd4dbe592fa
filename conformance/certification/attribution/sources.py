"""Whose failure is it: the attribution of every result that is not a pass.

Attributions (README.md, the paragraph on attribution):

- ``plugin``: the PJRT implementation under test, including its compiler, kernels and
  runtime. For jaxlib's built-in CPU client, the client itself (XLA's CPU PJRT client
  compiled into jaxlib) is the plugin;
- ``framework``: jaxlib/jax above the PJRT C API (the Python/nanobind layer, PjRt-IFRT,
  the distributed runtime, jax's lowering), the same with every plugin;
- ``suite``: this project (a wrong check, a missing registration the suite should make);
- ``unattributed``: no evidence decides.

Evidence sources are functions ``EvidenceSource(record) -> (attribution, evidence) | None``
(``record``: the result's ``report.json["failures"]``-style entry: the ``results``
entry plus ``message``, ``reproduction``, ``known_failure`` and the failure facts). They are consulted strongest first (:data:`STRENGTH`); the first one
that names ``plugin``, ``framework`` or ``suite`` decides, every one that answers adds its
evidence line. A source may answer ``("unattributed", text)``: evidence, no decision.
Attribution annotates; it never changes a status.

Sources, strongest first: a catalog defect of the lowered program itself
(:func:`lowering_source`), a re-run below the framework through the PJRT C API
(:data:`CAPI`; :func:`conformance.capi.hook`, registered in
:mod:`conformance.session.evidence` for C API plugin runs), the reference differential (:mod:`conformance.processes.reference_differential`), and
the defect catalog (:func:`catalog_source`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from conformance.certification.catalog import known_failures

ATTRIBUTIONS = ("plugin", "framework", "suite", "unattributed")
#: Attributions that take a result out of the plugin verdict (stack findings).
STACK = ("framework", "suite")
UNATTRIBUTED = "unattributed"
#: Evidence tag of a plugin failure in XLA code the reference CPU client shares.
SHARED_WITH_XLA = "shared with XLA"
#: Layers of a catalog defect that back a ``framework`` attribution: the defect is
#: above the PJRT C API (jaxlib's Python/nanobind layer, IFRT, the distributed runtime)
#: or in the program jax lowered.
FRAMEWORK_LAYERS = ("framework", "lowering")
#: Statuses that are no failure and block nothing: they get no attribution (a skip or a
#: gracefully unsupported feature is nobody's defect).
NOT_FAILURES = ("pass", "skipped", "not_supported")
#: Strength of each source kind: lower is stronger.
LOWERING, CAPI, REFERENCE, CATALOG = -1, 0, 1, 2
STRENGTH = {"lowering": LOWERING, "registration": CAPI, "oracle": CAPI, "capi": CAPI,
            "reference": REFERENCE, "catalog": CATALOG}

EvidenceSource = Callable[[dict[str, Any]], "tuple[str, str] | None"]


@dataclasses.dataclass(frozen=True)
class Source:
    """A named evidence source: ``name`` (its evidence lines start with it), ``strength``
    (:data:`CAPI`, :data:`REFERENCE`, :data:`CATALOG`) and the function."""

    name: str
    strength: int
    fn: EvidenceSource


def _check_answer(source: Source, answer: Any) -> tuple[str, str]:
    if (not isinstance(answer, tuple) or len(answer) != 2 or answer[0] not in ATTRIBUTIONS
            or not isinstance(answer[1], str)):
        raise ValueError(f"evidence source {source.name!r} must return None or "
                         f"(one of {ATTRIBUTIONS}, str), got {answer!r}")
    return answer


def decide(record: dict[str, Any], sources: list[Source]) -> tuple[str, list[str]]:
    """(attribution, evidence lines) of one result ``record`` from ``sources``.
    ValueError when a source answers something other than None or (attribution, str)."""
    decided, evidence = None, []
    for source in sorted(sources, key=lambda s: s.strength):
        answer = source.fn(record)
        if answer is None:
            continue
        attribution, text = _check_answer(source, answer)
        evidence.append(f"{source.name}: {text}")
        if decided is None and attribution != UNATTRIBUTED:
            decided = attribution
    return decided or UNATTRIBUTED, evidence


def _defect_applies(entry: known_failures.Entry | None, status: str) -> bool:
    return entry is not None and entry.defect is not None and status in entry.defect.expected


def message_source(name: str, marker: str, attribution: str,
                   statuses: tuple[str, ...] = ()) -> Source:
    """An account given in the failure's own message as an evidence source: a result
    whose message has a line naming ``marker`` (and whose status is one of ``statuses``,
    when given) is ``attribution``'s, with that line (from the marker on) as evidence."""
    def source(record: dict[str, Any]) -> tuple[str, str] | None:
        if statuses and record["status"] not in statuses:
            return None
        line = next((ln for ln in (record.get("message") or "").splitlines()
                     if marker in ln), None)
        if line is None:
            return None
        return attribution, line[line.index(marker):][:300]
    return Source(name, STRENGTH[name], source)


def registration_source(marker: str) -> Source:
    """The framework's own account as an evidence source: a failure whose message names
    ``marker`` (``runtime.plugin_support.FRAMEWORK_MARKER``: a target that jax's lowering
    calls, such as a LAPACK FFI handler, could not be given to the plugin client) is the
    framework's, whatever the plugin does with the program otherwise."""
    return message_source("registration", marker, "framework")


def oracle_source(marker: str) -> Source:
    """The suite's own account: a ``fail_error`` whose message names ``marker``
    (``conformance.programs.interpreter.SUITE_MARKER``: the two oracles disagree while
    every device matches one of them) is the suite's defect."""
    return message_source("oracle", marker, "suite", statuses=("fail_error",))


def catalog_source(entries: dict[str, known_failures.Entry]) -> Source:
    """The defect catalog as an evidence source: ``entries`` maps node ids to their
    matching known-failure entry. A defect decides only when the result's status is one
    of its ``expected`` statuses."""
    def source(record: dict[str, Any]) -> tuple[str, str] | None:
        entry = entries.get(record["nodeid"])
        if entry is None:
            return None
        d = entry.defect
        if d is None:
            return UNATTRIBUTED, f"old-format known failure without attribution: {entry.label}"
        if record["status"] not in d.expected:
            return UNATTRIBUTED, (f"{d.id} matches the test id but expects "
                                  f"{'/'.join(d.expected)}, got {record['status']}")
        return d.attribution, f"{d.id} ({d.upstream}): {d.evidence or d.summary}"
    return Source("catalog", CATALOG, source)


def lowering_source(entries: dict[str, known_failures.Entry]) -> Source:
    """Catalog defects of ``layer = "lowering"`` (the defect is in the program jax
    lowered, such as a reducer that is not commutative) as the strongest source: the C
    API re-run and the reference differential execute that same program, so their answer
    (the plugin's result is wrong, the CPU client's is right) cannot clear the lowering.
    ``entries`` as in :func:`catalog_source`."""
    def source(record: dict[str, Any]) -> tuple[str, str] | None:
        entry = entries.get(record["nodeid"])
        if not _defect_applies(entry, record["status"]) or entry.defect.layer != "lowering":
            return None
        d = entry.defect
        return d.attribution, (f"{d.id}: the defect is in the program jax lowered; a re-run "
                               f"of the same program below the framework reproduces it")
    return Source("lowering", LOWERING, source)


def attribute(results: list[Any], sources: list[Source]) -> None:
    """Set ``attribution``, ``evidence`` and ``defect`` of every failure (a status not in
    :data:`NOT_FAILURES`; ``results``: :class:`conformance.certification.results.records.Result`)."""
    for r in results:
        if r.status in NOT_FAILURES:
            continue
        record = r.failure()
        r.attribution, r.evidence = decide(record, sources)
        if _defect_applies(r.known_entry, r.status):
            r.defect = r.known_entry.defect.as_dict()


def stack_findings(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The stack findings of ``records`` (``report.json["results"]``): one finding per
    catalog defect (or per test without one) attributed to the framework or the suite,
    with its tests and statuses; counts of defects per attribution and of those linked
    upstream; and the number of results per attribution."""
    findings: dict[str, dict[str, Any]] = {}
    counts = {a: 0 for a in ATTRIBUTIONS}
    for r in records:
        if "attribution" not in r:
            continue
        counts[r["attribution"]] += 1
        if r["attribution"] not in STACK:
            continue
        key = (r.get("defect") or {}).get("id") or r["nodeid"]
        f = findings.setdefault(key, {"attribution": r["attribution"],
                                      "defect": r.get("defect"), "tests": [], "statuses": {}})
        f["tests"].append(r["nodeid"])
        f["statuses"][r["status"]] = f["statuses"].get(r["status"], 0) + 1
    items = [findings[k] for k in sorted(findings)]
    linked = sum(1 for f in items if f["defect"] and f["defect"]["upstream"].startswith("http"))
    return {"framework": sum(1 for f in items if f["attribution"] == "framework"),
            "suite": sum(1 for f in items if f["attribution"] == "suite"),
            "linked_upstream": linked, "results_by_attribution": counts, "findings": items}


def shared_with_xla(records: list[dict[str, Any]], xla_defects: set[str]) -> dict[str, Any]:
    """The plugin failures of ``records`` (``report.json["results"]``) that are in XLA
    code: an evidence line tagged :data:`SHARED_WITH_XLA` (the reference CPU client fails
    the same with a cataloged XLA defect) or a catalog defect whose id is in
    ``xla_defects`` (the XLA components of the catalog). ``{"count": n, "defects":
    sorted ids}``; these count in the plugin verdict like every plugin failure."""
    tests, defects = 0, set()
    for r in records:
        if r.get("attribution") != "plugin":
            continue
        d = (r.get("defect") or {}).get("id")
        tagged = any(e.startswith(f"reference: {SHARED_WITH_XLA}") for e in r.get("evidence", []))
        if tagged or d in xla_defects:
            tests += 1
            if d:
                defects.add(d)
    return {"count": tests, "defects": sorted(defects)}
