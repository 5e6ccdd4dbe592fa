"""``verify``'s check of a report's attributions and stack findings.

A result attributed to the framework or the suite leaves the plugin verdict, so that
attribution must be backed by evidence ``verify`` can check:

- a ``defect`` of the shipped catalog (:mod:`conformance.certification.catalog.defect_catalog`)
  that has the same id, link and summary, matches the test id, has that attribution,
  expects the result's status and applies to the report's platform and its jax/jaxlib
  versions; or
  and, for ``framework``, a ``layer`` above the PJRT C API
  (:data:`attribution.FRAMEWORK_LAYERS`); or
- an evidence line of the C API re-run (``capi: ...``): failing the same on the
  reference CPU client is no evidence for the framework, since that client is itself
  XLA; or
- a ``registration: ...`` evidence line whose text the result's failure message holds
  (the framework's own account of a target it could not give a plugin client).

The stated ``stack_findings`` must equal those recomputed from the results, and every
``failures[]`` entry must state what its ``results[]`` entry states (status,
attribution, defect, evidence, tier, area): an attribution flipped only in
``failures[]`` (what report.md and report.html show) was called intact.
"""

from __future__ import annotations

from typing import Any

from packaging.requirements import Requirement

from conformance.certification.attribution import sources as attribution
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures

RERUN_EVIDENCE = ("capi: ",)
REGISTRATION = "registration: "
#: Evidence of a ``suite`` attribution: the suite's own exception, its message recorded.
ORACLE = "oracle: "


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
    if any(e.startswith(RERUN_EVIDENCE) for e in r.get("evidence", [])) \
            and r["attribution"] == "framework":
        return None
    for attributed, prefix in (("framework", REGISTRATION), ("suite", ORACLE)):
        if r["attribution"] == attributed and any(
                e.startswith(prefix) and e[len(prefix):] in message
                for e in r.get("evidence", [])):
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
    if known.attribution == "framework" and known.layer not in attribution.FRAMEWORK_LAYERS:
        return (f"defect {d['id']!r} is attributed to the framework without a layer above the "
                f"PJRT C API ({'/'.join(attribution.FRAMEWORK_LAYERS)})")
    if status not in known.expected:
        return f"has status {status}; defect {d['id']!r} expects {'/'.join(known.expected)}"
    if not _holds_in(known, doc):
        return f"defect {d['id']!r} does not apply to this report's platform and versions " \
               f"({known.requirement})"
    return None


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
    """What is wrong with the attributions and stack findings of report ``doc``
    (:func:`failure_problems` included)."""
    found = failure_problems(doc)
    catalog = {d.id: d for d in defect_catalog.load()}
    messages = {f["nodeid"]: f.get("message") or "" for f in doc.get("failures", [])}
    for r in doc["results"]:
        if r.get("attribution") in attribution.STACK:
            why = _backing(r, doc, catalog, messages.get(r["nodeid"], ""))
            if why:
                found.append(f"attribution {r['attribution']} of {r['nodeid']} is not backed: "
                             f"{why}")
    if "stack_findings" in doc and doc["stack_findings"] != attribution.stack_findings(
            doc["results"]):
        found.append("stated stack_findings differ from those recomputed from the results")
    if "shared_with_xla" in doc and doc["shared_with_xla"] != attribution.shared_with_xla(
            doc["results"], defect_catalog.xla_ids(catalog.values())):
        found.append("stated shared_with_xla differs from the one recomputed from the results")
    return found
