"""Re-render a report bundle from its own records: ``pjrt-conformance rerender BUNDLE``.

A bundle's ``report.json`` keeps every result, every failure's facts and the evidence
its run gathered. When the rules that read them change (the attribution rule of issue
27: only the PJRT C API re-run, or a catalog defect above the C API, makes a failure the
framework's), or the renderers do, the bundle is rebuilt from those records, without
re-running anything:

- attribution is decided again (:func:`reattribute`) from the shipped defect catalog
  (its entries that hold for the bundle's platform and jax/jaxlib versions, not the
  installed ones), the framework's own account in the failure message, and the run's
  recorded re-run evidence: ``capi:`` lines keep their answer (correct through the C
  API: framework; wrong there too: plugin), ``reference:`` lines are read again under
  the current rule (:func:`conformance.certification.attribution.reference_rule.answer`:
  failing the same on the reference CPU client is never the framework's);
- the counts get every current status (an old bundle has no ``flaky`` column), the
  stack findings, the XLA-shared count and the verdict are recomputed;
- each traceback keeps its last :data:`records.TRACEBACK_CHARS` characters, and a
  results log an old bundle stored byte for byte is packed as a run packs it now
  (:func:`runlog.slim`: the fields ``finalize``, ``merge`` and ``durations`` read);
- report.json, report.md, report.html, junit.xml and repro/ are written again and the
  manifest lists them with the run's own files (results log, run.json), unchanged;
- junit.xml is stored as junit.xml.xz, its exact bytes (:func:`runlog.store_xz`: the
  manifest lists junit.xml; ``xz -dk junit.xml.xz`` gives it back), which keeps a
  committed bundle under its size budget (tests/test_repo_size.py).

The old signature no longer matches the new manifest: it is removed, and the bundle is
signed again when a key is given.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path
from typing import Any

from conformance.certification.attribution import sources as attribution
from conformance.certification.attribution import check as attribution_check
from conformance.certification.bundle import files as bundle
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.certification.results import records
from conformance.certification.attribution import reference_rule as reference
from conformance.certification.rendering import rendering_check
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog
from conformance.certification.bundle import signing
from conformance.certification.verdict import decide as certification
from conformance.programs import interpreter
from runtime import plugin_support

#: Evidence prefixes of the run's re-runs, replayed (the others are recomputed).
CAPI, REFERENCE = "capi: ", "reference: "
_CAPI_ANSWERS = (("correct through the PJRT C API", "framework"),
                 ("wrong through the PJRT C API too", "plugin"))
_REF_STATUS = re.compile(r"^(?:fails the same on .*\((?P<same>[a-z_]+)\)"
                         r"|(?P<other>[a-z_]+) on .* \(here [a-z_]+\))$")


class RerenderError(ValueError):
    """The bundle cannot be re-rendered (not intact, or not a bundle)."""


def _catalog_entry(nodeid: str, entries: list[known_failures.Entry],
                   doc: dict[str, Any]) -> known_failures.Entry | None:
    """The first catalog entry matching ``nodeid`` whose defect holds for ``doc``."""
    return next((e for e in entries if e.matches(nodeid)
                 and attribution_check._holds_in(e.defect, doc)), None)


def _recorded(lines: list[str], prefix: str) -> str | None:
    return next((e[len(prefix):] for e in lines if e.startswith(prefix)), None)


def _capi_source(old: dict[str, list[str]]) -> attribution.Source:
    def source(record: dict[str, Any]) -> tuple[str, str] | None:
        text = _recorded(old.get(record["nodeid"], []), CAPI)
        if text is None:
            return None
        found = next((a for start, a in _CAPI_ANSWERS if text.startswith(start)),
                     attribution.UNATTRIBUTED)
        return found, text
    return attribution.Source("capi", attribution.CAPI, source)


def _reference_source(old: dict[str, list[str]], entries: list[known_failures.Entry],
                      doc: dict[str, Any]) -> attribution.Source:
    """The recorded reference differential, read under the current rule."""
    ref_doc = {**doc, "requested_platform": reference.REFERENCE,
               "platform": {**doc["platform"], "loaded": None}}
    own = [e for e in entries if e.defect.attribution == "plugin"]

    def source(record: dict[str, Any]) -> tuple[str, str] | None:
        text = _recorded(old.get(record["nodeid"], []), REFERENCE)
        if text is None:
            return None
        if text.startswith(("passes on ", attribution.SHARED_WITH_XLA)):
            return "plugin", text
        m = _REF_STATUS.match(text)
        if m is not None:
            ref_status = m.group("same") or m.group("other")
        elif text.startswith("fails the same on "):   # an older wording of the same answer
            ref_status = record["status"]
        else:   # not re-run, or a line this reader does not know: no decision
            return attribution.UNATTRIBUTED, text
        ref_id = f"conformance/{reference.key(record['nodeid'])}"
        mine = _catalog_entry(ref_id, own, ref_doc)
        return reference.answer(record["status"], ref_status, mine, "")
    return attribution.Source("reference", attribution.REFERENCE, source)


def _normalise_counts(doc: dict[str, Any]) -> None:
    """Every current status in every count table (zero where the bundle has none)."""
    tables = [doc["summary"]["by_status"], *doc["areas"].values(), *doc["tiers"].values(),
              *doc.get("kernel_families", {}).values()]
    for table in tables:
        for status in records.STATUSES:
            table.setdefault(status, 0)


def reattribute(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of report document ``doc`` (schema 2) with the attribution of every failure
    decided again, its failures' tracebacks cut to their tails, and the derived fields
    (counts, stack findings, XLA-shared count, verdict) recomputed."""
    out = copy.deepcopy(doc)
    _normalise_counts(out)
    defects = defect_catalog.load()
    entries = defect_catalog.entries(defects)
    old = {r["nodeid"]: list(r.get("evidence") or []) for r in out["results"]}
    details = {f["nodeid"]: f for f in out["failures"]}
    mine = {r["nodeid"]: _catalog_entry(r["nodeid"], entries, out) for r in out["results"]
            if r["status"] not in attribution.NOT_FAILURES}
    mine = {k: v for k, v in mine.items() if v is not None}
    sources = [attribution.catalog_source(mine), attribution.lowering_source(mine),
               attribution.registration_source(plugin_support.FRAMEWORK_MARKER),
               attribution.oracle_source(interpreter.SUITE_MARKER),
               _capi_source(old), _reference_source(old, entries, out)]
    for r in out["results"]:
        for key in ("attribution", "evidence", "defect"):
            r.pop(key, None)
        if r["status"] in attribution.NOT_FAILURES:
            continue
        detail = details.get(r["nodeid"], {})
        record = {**detail, **r, "message": detail.get("message") or ""}
        r["attribution"], r["evidence"] = attribution.decide(record, sources)
        entry = mine.get(r["nodeid"])
        status = r.get("waived_from") or r["status"]
        if entry is not None and status in entry.defect.expected:
            r["defect"] = entry.defect.as_dict()
    by_id = {r["nodeid"]: r for r in out["results"]}
    for f in out["failures"]:
        for key in ("attribution", "evidence", "defect"):
            f.pop(key, None)
            if key in by_id.get(f["nodeid"], {}):
                f[key] = copy.deepcopy(by_id[f["nodeid"]][key])
        if isinstance(f.get("traceback"), str):
            f["traceback"] = f["traceback"][-records.TRACEBACK_CHARS:]
    out["stack_findings"] = attribution.stack_findings(out["results"])
    out["shared_with_xla"] = attribution.shared_with_xla(out["results"],
                                                         defect_catalog.xla_ids(defects))
    prof, problems = bundle._check_profile(out)   # not intact: verify says so
    prof = None if problems else prof
    out["verdict"], out["verdict_reasons"] = certification.decide(
        out["results"], collected=out["summary"]["collected"], profile=prof,
        declared=out["declared_capabilities"],
        device_count=out["platform"].get("local_device_count", 1),
        errors=out["report_errors"], interrupted=out.get("interrupted"))
    return out


def _run_files(path: Path) -> tuple[str, ...]:
    """The manifest's names that the run wrote (results log, run.json): kept as they are."""
    listed = [line.partition("  ")[2] for line in
              (path / bundle.MANIFEST).read_text(encoding="utf-8").splitlines()]
    kept = [n for n in listed if n not in bundle.FILES and not n.startswith("repro/")]
    # An old bundle lists results.jsonl, stored as results.jsonl.xz (runlog.compress).
    return tuple(runlog.PACKED if n == runlog.LOG and not (path / n).is_file() else n
                 for n in kept)


def _repack_log(path: Path) -> None:
    """A results log stored byte for byte (an old bundle's manifest lists
    ``results.jsonl``, :func:`runlog.compress`) is packed as a run packs it now: each
    report slimmed to what ``finalize``, ``merge`` and ``durations`` read
    (:func:`runlog.slim`)."""
    listed = (path / bundle.MANIFEST).read_text(encoding="utf-8")
    packed = path / runlog.PACKED
    if f"  {runlog.LOG}\n" in listed and packed.is_file() and not (path / runlog.LOG).is_file():
        runlog.write_packed(runlog.records(packed), path, mtime_ns=packed.stat().st_mtime_ns)


def rerender(path: Path, key: Path | None = None, keep_log: bool = False) -> dict[str, Any]:
    """Rebuild bundle ``path`` in place from its report.json (see the module docstring)
    and sign it with the OpenSSH private ``key`` when given; return the new document.
    ``keep_log``: leave a byte-for-byte results log as it is (not packed).
    Raises RerenderError for a bundle whose files are not intact (manifest, links,
    report.md/report.html of another report; its signature aside: a re-render replaces
    it, and what it decides again -- attribution under today's catalog, counts, verdict --
    may differ), signing.SigningError when signing fails."""
    path = Path(path)
    # Intact files (manifest, no links, report.md/html of this report.json); not what a
    # re-render decides again (attribution against today's catalog, counts, verdict).
    problems = bundle._check_manifest(path)
    if not problems:
        try:
            problems = rendering_check.problems(path, reportfile.load(path))
        except reportfile.MalformedReport as err:
            problems = [str(err)]
    if problems:
        raise RerenderError(f"{path}: not intact, refusing to re-render it: {problems[0]}")
    doc = reattribute(reportfile.load(path))
    if not keep_log:
        _repack_log(path)
    extra = _run_files(path)
    for name in (bundle.MANIFEST, signing.SIGNATURE, *bundle.FILES, "junit.xml.xz"):
        (path / name).unlink(missing_ok=True)
    shutil.rmtree(path / "repro", ignore_errors=True)
    bundle.write(doc, path, extra=extra)
    runlog.store_xz(path, "junit.xml")   # listed as junit.xml: manifest and signature hold
    if key is not None:
        signing.sign(path, key)
    return doc
