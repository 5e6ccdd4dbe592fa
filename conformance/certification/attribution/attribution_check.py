"""``verify``'s check of a report's attributions, their evidence and the stack findings.

Every evidence item is re-checked against the facts it carries, by its source (one
re-check per kind of :data:`attribution.KINDS`, :data:`RECHECK`), and every result's
attribution must be the one its items decide (the first answer other than
``unattributed``, strongest first):

- ``capi``: the answer follows the outcome (``correct``: framework, ``wrong``: plugin);
- ``reference``: the item's ``status`` is the result's, and the answer is the PJRT C API
  boundary rule's for its ``reference_status`` and ``reference_defect``
  (:func:`reference_rule.decision`);
- ``registration``/``oracle``: the ``quote`` is in the failure's message and the answer
  is ``framework``/``suite``;
- ``lowering``/``catalog``: a deciding item names the result's ``defect``; an item of
  another status names one whose ``expected`` statuses leave the result's out.

A legacy item (a schema-2 evidence string, :func:`attribution.legacy_item`) has no
facts to re-check: it is taken as the run recorded it (its source and place unchecked,
as schema 2's strings were).

A result attributed to the framework or the suite leaves the plugin verdict, so that
attribution must be backed by evidence ``verify`` can check:

- a ``defect`` of the shipped catalog
  (:mod:`conformance.certification.catalog.defect_catalog`) that has the same id, link
  and summary, matches the test id, has that attribution, expects the result's status
  and applies to the report's platform and its jax/jaxlib versions, and, for
  ``framework``, a ``layer`` above the PJRT C API (:data:`attribution.FRAMEWORK_LAYERS`);
  or
- for ``framework``, a ``capi`` item answering ``framework`` (failing the same on the
  reference CPU client is no evidence for the framework, since that client is itself
  XLA), or a ``registration`` item whose quote the failure message holds (the
  framework's own account of a target it could not give a plugin client);
- for ``suite``, an ``oracle`` item whose quote the failure message holds.

The stated ``stack_findings`` must equal those recomputed from the results, and every
``failures[]`` entry must state what its ``results[]`` entry states (status,
attribution, defect, evidence, tier, area): an attribution flipped only in
``failures[]`` (what report.md and report.html show) was called intact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from packaging.requirements import Requirement

from conformance.certification.attribution import reference_rule
from conformance.certification.attribution import attribution_sources
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures

#: The items that back a stack attribution without a catalog defect: (attribution,
#: source) pairs; ``registration`` and ``oracle`` only with their quote in the message.
BACKING = {("framework", "capi"), ("framework", "registration"), ("suite", "oracle")}
#: Sources whose item backs an attribution only when the failure message holds its quote.
QUOTED = ("registration", "oracle")


def _holds_in(defect: defect_catalog.Defect, doc: dict[str, Any]) -> bool:
    """The defect applies to the report's platform, loading and jax/jaxlib versions
    (the measured bounds when the entry has some; requirements on other distributions are not recorded in reports: not checked)."""
    if defect.platform and defect.platform != doc.get("requested_platform"):
        return False
    from_library = (doc["platform"].get("loaded") or {}).get("source") == "--plugin-library"
    if defect.plugin_library is not None and defect.plugin_library != from_library:
        return False
    for text in defect.range:
        req = Requirement(text)
        version = doc["environment"].get(req.name)
        if req.name in ("jax", "jaxlib") and (
                version is None or not req.specifier.contains(version, prereleases=True)):
            return False
    return True


def _backing(r: dict[str, Any], doc: dict[str, Any],
             catalog: dict[str, defect_catalog.Defect], message: str = "") -> str | None:
    """Why the framework/suite attribution of result ``r`` is not backed (None: it is)."""
    for e in attribution_sources.items(r):
        if (r["attribution"], e.get("source")) in BACKING and e.get("answer") == r["attribution"]:
            quote = e.get("legacy") if attribution_sources.is_legacy(e) else e.get("quote")
            if e["source"] not in QUOTED or (isinstance(quote, str) and quote in message):
                return None
    d = r.get("defect")
    if d is None:
        return "has neither a catalog defect nor a re-run as evidence"
    known = catalog.get(d["id"])
    if known is None:
        return f"names defect {d['id']!r}, which is not in the shipped catalog"
    status = r.get("waived_from") or r["status"]
    if known.as_dict() != d:
        return f"states defect {d['id']!r} differently from the shipped catalog"
    if not any(known_failures.Entry(t, "*", "", "").matches(r["nodeid"]) for t in known.tests):
        return f"is not a test of defect {d['id']!r}"
    if known.attribution != r["attribution"]:
        return f"is attributed {r['attribution']!r}; defect {d['id']!r} says {known.attribution!r}"
    if known.attribution == "framework" and known.layer not in attribution_sources.FRAMEWORK_LAYERS:
        return (f"defect {d['id']!r} is attributed to the framework without a layer above the "
                f"PJRT C API ({'/'.join(attribution_sources.FRAMEWORK_LAYERS)})")
    if status not in known.expected:
        return f"has status {status}; defect {d['id']!r} expects {'/'.join(known.expected)}"
    if not _holds_in(known, doc):
        return f"defect {d['id']!r} does not apply to this report's platform and versions " \
               f"({known.requirement})"
    return None


def _answers(e: dict[str, Any], *allowed: str) -> str | None:
    if e["answer"] not in allowed:
        return f"answers {e['answer']!r}; its facts give {' or '.join(map(repr, allowed))}"
    return None


def _recheck_capi(e: dict[str, Any], r: dict[str, Any], message: str) -> str | None:
    if e.get("outcome") not in attribution_sources.CAPI_ANSWERS:
        return f"has outcome {e.get('outcome')!r}, which decides nothing"
    return _answers(e, attribution_sources.CAPI_ANSWERS[e["outcome"]])


def _recheck_reference(e: dict[str, Any], r: dict[str, Any], message: str) -> str | None:
    status = r.get("waived_from") or r["status"]
    if e.get("status") != status:
        return f"states status {e.get('status')!r}; the result's is {status!r}"
    ref = e.get("reference_status")
    if (ref is None) != ("not_rerun" in e):
        return "states a reference status and why it has none" if ref is not None \
            else "states neither a reference status nor why it has none"
    if e.get("reference_defect") and ref != status:
        return "names the reference client's defect though the re-run did not fail the same"
    return _answers(e, reference_rule.decision(status, ref, bool(e.get("reference_defect"))))


def _recheck_quote(answer: str) -> Callable[[dict[str, Any], dict[str, Any], Any], str | None]:
    def recheck(e: dict[str, Any], r: dict[str, Any], message: str | None) -> str | None:
        if message is not None and (not e.get("quote") or e["quote"] not in message):
            return "quotes a line the failure message does not hold"
        if e["source"] == "oracle" and (r.get("waived_from") or r["status"]) \
                not in attribution_sources.ORACLE_STATUSES:
            return (f"is the oracles' account, which only a "
                    f"{'/'.join(attribution_sources.ORACLE_STATUSES)} gives")
        return _answers(e, answer)
    return recheck


def _recheck_defect(e: dict[str, Any], r: dict[str, Any], message: str) -> str | None:
    status = r.get("waived_from") or r["status"]
    stated = (r.get("defect") or {}).get("id")
    if "known_failure" in e or "expected" in e:   # a catalog item that decides nothing
        if "expected" in e and status in e["expected"]:
            return f"says defect {e.get('defect')!r} does not expect {status}, but it lists it"
        return _answers(e, attribution_sources.UNATTRIBUTED)
    if e.get("defect") != stated:
        return f"names defect {e.get('defect')!r}; the result states {stated!r}"
    return None


#: ``verify``'s re-check of one evidence item of each kind of :data:`attribution.KINDS`
#: (``(item, result, failure message or None) -> problem | None``).
RECHECK: dict[str, Callable[[dict[str, Any], dict[str, Any], Any], str | None]] = {
    "lowering": _recheck_defect,
    "registration": _recheck_quote("framework"),
    "oracle": _recheck_quote("suite"),
    "capi": _recheck_capi,
    "reference": _recheck_reference,
    "catalog": _recheck_defect,
}


def evidence_problems(r: dict[str, Any], message: str | None = "") -> list[str]:
    """What is wrong with the evidence of result ``r`` (a ``report.json["results"]``
    entry; ``message``: its failure's, None when it has no ``failures[]`` entry, such
    as a ``flaky`` result, whose quotes are then not looked up): an item of an unknown source, out of the order
    of :data:`attribution.KINDS`, whose answer its facts do not give (:data:`RECHECK`),
    or an attribution other than the one the items decide."""
    found, ranks = [], []
    evidence = attribution_sources.items(r)
    for i, e in enumerate(evidence):
        where = f"evidence {i} ({e.get('source')}) of {r['nodeid']}"
        if attribution_sources.is_legacy(e):   # schema 2's prose: nothing to re-check, as before
            continue
        if e.get("source") not in attribution_sources.SOURCES:
            found.append(f"{where} names no evidence source of this suite")
            continue
        ranks.append(attribution_sources.NAMES.index(e["source"]))
        recheck = RECHECK.get(e["source"])
        why = "has no re-check" if recheck is None else recheck(e, r, message)
        if why:
            found.append(f"{where} {why}")
    if ranks != sorted(ranks):
        found.append(f"evidence of {r['nodeid']} is not strongest first")
    if "attribution" in r and r["attribution"] != attribution_sources.decided(evidence):
        found.append(f"attribution {r['attribution']} of {r['nodeid']} is not the one its "
                     f"evidence decides ({attribution_sources.decided(evidence)})")
    return found


#: Fields a ``failures[]`` entry repeats from its ``results[]`` entry.
REPEATED = ("status", "attribution", "defect", "evidence", "tier", "area", "test_id")


def failure_problems(doc: dict[str, Any]) -> list[str]:
    """``failures[]`` entries that are no result's, or state a repeated field
    (:data:`REPEATED`) differently from their result."""
    results = {r["nodeid"]: r for r in doc["results"]}
    found = []
    for f in doc.get("failures", []):
        r = results.get(f.get("nodeid"))
        if r is None:
            found.append(f"failures[] names {f.get('nodeid')!r}, which has no result")
            continue
        differ = [k for k in REPEATED if k in f and f[k] != r.get(k)]
        if differ:
            found.append(f"failures[] entry of {r['nodeid']} states {', '.join(differ)} "
                         f"differently from its result ({differ[0]}: {f[differ[0]]!r} vs "
                         f"{r.get(differ[0])!r})")
    return found


def problems(doc: dict[str, Any]) -> list[str]:
    """What is wrong with the attributions, their evidence (:func:`evidence_problems`)
    and the stack findings of report ``doc`` (:func:`failure_problems` included)."""
    found = failure_problems(doc)
    catalog = {d.id: d for d in defect_catalog.load()}
    messages = {f["nodeid"]: f.get("message") or "" for f in doc.get("failures", [])}
    for r in doc["results"]:
        if "attribution" in r or r.get("evidence"):
            found += evidence_problems(r, messages.get(r["nodeid"]))
        if r.get("attribution") in attribution_sources.STACK:
            why = _backing(r, doc, catalog, messages.get(r["nodeid"], ""))
            if why:
                found.append(f"attribution {r['attribution']} of {r['nodeid']} is not backed: "
                             f"{why}")
    if "stack_findings" in doc and doc["stack_findings"] != attribution_sources.stack_findings(
            doc["results"]):
        found.append("stated stack_findings differ from those recomputed from the results")
    if "shared_with_xla" in doc and doc["shared_with_xla"] != attribution_sources.shared_with_xla(
            doc["results"], defect_catalog.xla_ids(catalog.values())):
        found.append("stated shared_with_xla differs from the one recomputed from the results")
    return found
