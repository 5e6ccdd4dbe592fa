"""Re-render a report bundle from its own records: ``pjrt-conformance rerender BUNDLE``.

A bundle's ``report.json`` keeps every result, every failure's facts and the evidence
its run gathered. When the rules that read them change (the attribution rule of issue
27: only the PJRT C API re-run, or a catalog defect above the C API, makes a failure the
framework's), or the renderers do, the bundle is rebuilt from those records, without
re-running anything:

- attribution is decided again (:func:`reattribute`) from the evidence items, as data,
  never their text: the sources recomputed from the shipped defect catalog (its entries
  that hold for the bundle's platform and jax/jaxlib versions, not the installed ones)
  and the failure message are consulted again
  (:func:`conformance.certification.attribution.attribution_sources.offline_sources`); the run's
  recorded re-runs (the ``recorded`` kinds of
  :data:`conformance.certification.attribution.attribution_sources.KINDS`) are read from their
  facts: a ``capi`` item keeps its outcome (correct through the C API: framework;
  wrong there too: plugin), a ``reference`` item is decided again from its
  ``reference_status`` under the current rule
  (:func:`conformance.certification.attribution.reference_rule.answer`: failing the
  same on the reference CPU client is never the framework's);
- a schema-2 bundle's evidence strings are legacy items
  (:func:`conformance.certification.attribution.attribution_sources.legacy_item`): those of the
  recomputed sources are dropped and recomputed; a ``capi`` or ``reference`` string
  is kept as it is, answering the attribution the bundle recorded for its result
  (its text is not read back, so a schema-2 re-run cannot be decided again under a
  new rule: re-run the suite for that); the bundle is written in the current schema;
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
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.certification.attribution import attribution_sources
from conformance.certification.attribution import attribution_check
from conformance.certification.bundle import bundle_files
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.certification.results import records
from conformance.certification.attribution import reference_rule
from conformance.certification.rendering import rendering_check
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog
from conformance.certification.bundle import signing
from conformance.certification.verdict import plugin_verdict
from conformance.certification.verdict import report


class RerenderError(ValueError):
    """The bundle cannot be re-rendered (not intact, or not a bundle)."""


def _catalog_entry(nodeid: str, entries: list[known_failures.Entry],
                   doc: dict[str, Any]) -> known_failures.Entry | None:
    """The first catalog entry matching ``nodeid`` whose defect holds for ``doc``."""
    return next((e for e in entries if e.matches(nodeid)
                 and attribution_check._holds_in(e.defect, doc)), None)


def _reference_again(entries: list[known_failures.Entry], doc: dict[str, Any]
                     ) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """The recorded reference differential decided again under the current rule, from
    its recorded ``status`` and ``reference_status`` (the reference client's own defect
    looked up in today's catalog, as it holds for the reference at the bundle's
    versions)."""
    ref_doc = {**doc, "requested_platform": reference_rule.REFERENCE,
               "platform": {**doc["platform"], "loaded": None}}
    own = [e for e in entries if e.defect.attribution == "plugin"]

    def again(found: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        ref_id = f"conformance/{reference_rule.key(record['nodeid'])}"
        mine = _catalog_entry(ref_id, own, ref_doc)
        return reference_rule.answer(found.get("status", record["status"]),
                                     found.get("reference_status"), mine,
                                     found.get("not_rerun", ""))
    return again


def _recorded_sources(old: dict[str, list[dict[str, Any]]], entries: list[known_failures.Entry],
                      doc: dict[str, Any]) -> list[attribution_sources.Source]:
    """One source per ``recorded`` kind of :data:`attribution.KINDS`, answering with the
    item the bundle recorded for the result: ``capi`` as it was (its answer follows its
    outcome), ``reference`` decided again (:func:`_reference_again`). A legacy item (a
    schema-2 string) keeps the answer it was read with: its text is not read."""
    again = {"capi": lambda found, record: attribution_sources.capi_facts(
                 found["check"], found["outcome"], found.get("detail", "")),
             "reference": _reference_again(entries, doc)}

    def source(kind: attribution_sources.Kind) -> attribution_sources.Source:
        def fn(record: dict[str, Any]) -> dict[str, Any] | None:
            found = next((e for e in old.get(record["nodeid"], [])
                          if e.get("source") == kind.name), None)
            if found is None or attribution_sources.is_legacy(found):
                return found
            return again[kind.name](found, record)
        return attribution_sources.Source(kind.name, fn)
    return [source(k) for k in attribution_sources.KINDS if k.recorded]


def _normalise_counts(doc: dict[str, Any]) -> None:
    """Every current status in every count table (zero where the bundle has none)."""
    tables = [doc["summary"]["by_status"], *doc["areas"].values(), *doc["tiers"].values(),
              *doc.get("kernel_families", {}).values()]
    for table in tables:
        for status in records.STATUSES:
            table.setdefault(status, 0)


def _status(r: dict[str, Any]) -> str:
    """The status the run attributed: a waived result's own (waivers apply after)."""
    return r.get("waived_from") or r["status"]


def reattribute(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of report document ``doc`` (schema 2 or 3) in the current schema, with the
    attribution of every failure decided again from its evidence items, its failures'
    tracebacks cut to their tails, and the derived fields (counts, stack findings,
    XLA-shared count, verdict) recomputed."""
    out = copy.deepcopy(doc)
    out["schema_version"] = report.SCHEMA_VERSION
    _normalise_counts(out)
    defects = defect_catalog.load()
    entries = defect_catalog.entries(defects)
    old = {r["nodeid"]: attribution_sources.items(r) for r in out["results"]}
    details = {f["nodeid"]: f for f in out["failures"]}
    mine = {r["nodeid"]: _catalog_entry(r["nodeid"], entries, out) for r in out["results"]
            if _status(r) not in attribution_sources.NOT_FAILURES}
    mine = {k: v for k, v in mine.items() if v is not None}
    sources = attribution_sources.offline_sources(mine) + _recorded_sources(old, entries, out)
    for r in out["results"]:
        for key in ("attribution", "evidence", "defect"):
            r.pop(key, None)
        status = _status(r)
        if status in attribution_sources.NOT_FAILURES:
            continue
        detail = details.get(r["nodeid"], {})
        record = {**detail, **r, "status": status, "message": detail.get("message") or ""}
        r["attribution"], r["evidence"] = attribution_sources.decide(record, sources)
        entry = mine.get(r["nodeid"])
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
    out["stack_findings"] = attribution_sources.stack_findings(out["results"])
    out["shared_with_xla"] = attribution_sources.shared_with_xla(out["results"],
                                                                 defect_catalog.xla_ids(defects))
    prof, problems = bundle_files._check_profile(out)   # not intact: verify says so
    prof = None if problems else prof
    out["verdict"], out["verdict_reasons"] = plugin_verdict.decide(
        out["results"], collected=out["summary"]["collected"], profile=prof,
        declared=out["declared_capabilities"],
        device_count=out["platform"].get("local_device_count", 1),
        errors=out["report_errors"], interrupted=out.get("interrupted"))
    return out


def _run_files(path: Path) -> tuple[str, ...]:
    """The manifest's names that the run wrote (results log, run.json): kept as they are."""
    listed = [line.partition("  ")[2] for line in
              (path / bundle_files.MANIFEST).read_text(encoding="utf-8").splitlines()]
    kept = [n for n in listed if n not in bundle_files.FILES and not n.startswith("repro/")]
    # An old bundle lists results.jsonl, stored as results.jsonl.xz (runlog.compress).
    return tuple(runlog.PACKED if n == runlog.LOG and not (path / n).is_file() else n
                 for n in kept)


def _repack_log(path: Path) -> None:
    """A results log stored byte for byte (an old bundle's manifest lists
    ``results.jsonl``, :func:`runlog.compress`) is packed as a run packs it now: each
    report slimmed to what ``finalize``, ``merge`` and ``durations`` read
    (:func:`runlog.slim`)."""
    listed = (path / bundle_files.MANIFEST).read_text(encoding="utf-8")
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
    problems = bundle_files._check_manifest(path)
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
    for name in (bundle_files.MANIFEST, signing.SIGNATURE, *bundle_files.FILES, "junit.xml.xz"):
        (path / name).unlink(missing_ok=True)
    shutil.rmtree(path / "repro", ignore_errors=True)
    bundle_files.write(doc, path, extra=extra)
    runlog.store_xz(path, "junit.xml")   # listed as junit.xml: manifest and signature hold
    if key is not None:
        signing.sign(path, key)
    return doc
