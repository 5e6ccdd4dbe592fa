"""The rules of a merge of shard bundles, and the merged report built from the parts.

The parts are the ``report.json`` documents of ``pjrt-conformance run --shard I/N``
bundles (``doc["shard"]``, :func:`conformance.certification.bundle.shards.record`).
:func:`problems` says, one line each naming the part, why they cannot be merged: they
must come from the same suite, profile, platform, plugin and environment, cover the
selection they were split from exactly once (every shard ``1..N`` once, no test in two
parts, their union *is* the selection) and be complete. :func:`combine` builds the
merged document: the results of every part, their counts and the verdict recomputed
by :func:`conformance.certification.verdict.plugin_verdict`. ``verify`` of a merged bundle
(:func:`verify_embedded`) re-reads the parts it embeds (``parts/<k>/report.json`` and
``parts/<k>/MANIFEST.sha256``), checks them the same way and checks that the merged
report equals their combination, so a status edited after the merge is found.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from conformance.certification.attribution import attribution_sources
from conformance.certification.results import coverage_records
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import profiles
from conformance.certification.results import records
from conformance.certification.verdict import report
from conformance.certification.bundle import shards
from conformance.certification.bundle import signing
from conformance.certification.verdict import plugin_verdict
from conformance.certification.catalog import waivers
from conformance.programs import coverage

PARTS_DIR = "parts"
#: What every part must agree on: (what, key path into report.json).
AGREE = (("suite version", ("suite", "version")), ("suite commit", ("suite", "git_sha")),
         ("suite wheel RECORD", ("suite", "record_sha256")), ("modified suite", ("suite", "dirty")),
         ("profile", ("profile", "sha256")), ("platform", ("requested_platform",)),
         ("platform name", ("platform", "name")),
         ("platform version", ("platform", "platform_version")),
         ("device kinds", ("platform", "device_kinds")),
         ("device count", ("platform", "device_count")),
         ("local device count", ("platform", "local_device_count")),
         ("plugin library sha256", ("platform", "loaded", "library_sha256")),
         ("plugin options", ("platform", "loaded", "options")),
         ("PJRT C API version", ("platform", "pjrt_c_api_version")),
         ("Hypothesis settings", ("hypothesis",)), ("--cpu-devices", ("cpu_devices",)),
         ("--num-processes", ("num_processes",)),
         ("declared capabilities", ("declared_capabilities",)), ("waivers", ("waivers",)),
         ("shard count", ("shard", "count")), ("selection", ("shard", "selection_sha256")),
         ("durations", ("shard", "durations_sha256")), ("algorithm", ("shard", "algorithm")))


def label(k: int, doc: dict[str, Any]) -> str:
    """``'part 2 (shard 2/3)'``: the 1-based position ``k`` of a part and its shard."""
    s = doc.get("shard") or {}
    return f"part {k} (shard {s.get('index', '?')}/{s.get('count', '?')})"


def _get(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _agreement(docs: list[dict[str, Any]]) -> list[str]:
    out = []
    base = docs[0]
    env = sorted(k for k in base["environment"] if k != "os")
    fields = AGREE + tuple((k, ("environment", k)) for k in env)
    catalog = [(e["pattern"], e["requirement"], e["source"]) for e in base["known_failures"]]
    for k, doc in enumerate(docs[1:], 2):
        for what, path in fields:
            a, b = _get(doc, path), _get(base, path)
            if a != b:
                out.append(f"{label(k, doc)}: {what} {_text(a)} != {_text(b)} in part 1")
        if [(e["pattern"], e["requirement"], e["source"]) for e in doc["known_failures"]] \
                != catalog:
            out.append(f"{label(k, doc)}: its defect catalog differs from part 1's")
    return out


def problems(docs: list[dict[str, Any]]) -> list[str]:
    """Why the parts ``docs`` (report.json documents, in the order given) cannot be
    merged, one line each naming the part; empty when they can."""
    if len(docs) < 2:
        return [f"a merge needs at least 2 parts, got {len(docs)}"]
    out = [f"{label(k, d)}: not a shard run (no 'shard' in report.json; run it with "
           "--shard I/N)" for k, d in enumerate(docs, 1) if not d.get("shard")]
    if out:
        return out
    out = _agreement(docs)
    seen_shard: dict[int, int] = {}
    seen_test: dict[str, int] = {}
    for k, doc in enumerate(docs, 1):
        s, where = doc["shard"], label(k, doc)
        if doc.get("interrupted"):
            out.append(f"{where}: the run is incomplete ({doc['interrupted']}); run that "
                       "shard again")
        elif len(doc["results"]) != s["assigned"]:
            out.append(f"{where}: {len(doc['results'])} results, but the shard was assigned "
                       f"{s['assigned']} tests")
        if s["index"] in seen_shard:
            out.append(f"{where}: shard {s['index']}/{s['count']} is also part "
                       f"{seen_shard[s['index']]}")
        seen_shard.setdefault(s["index"], k)
        twice = [r["nodeid"] for r in doc["results"] if r["nodeid"] in seen_test]
        if twice:
            out.append(f"{where}: {len(twice)} test(s) also in part {seen_test[twice[0]]}, "
                       f"e.g. {twice[0]}")
        for r in doc["results"]:
            seen_test.setdefault(r["nodeid"], k)
    count = docs[0]["shard"]["count"]
    missing = [i for i in range(1, count + 1) if i not in seen_shard]
    if missing:
        given = ", ".join(f"{label(k, d)}" for k, d in enumerate(docs, 1))
        out.append(f"shard {', '.join(f'{i}/{count}' for i in missing)} missing (given: "
                   f"{given})")
    selection = docs[0]["shard"]
    if not out and shards.selection_sha256(seen_test) != selection["selection_sha256"]:
        out.append(f"the parts' {len(seen_test)} tests are not the {selection['selection_count']}"
                   f" tests they were split from (selection sha256 "
                   f"{selection['selection_sha256'][:12]})")
    return out


def _errors(docs: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[str]:
    """The parts' report errors, once each; a waiver that matched no test of one part
    but a test of another is no error of the whole."""
    matched = {waivers.unmatched_error(w) for w in (
        waivers.Waiver(d["test"], d["issue"], datetime.date.fromisoformat(d["expires"]),
                       d["reason"]) for d in docs[0]["waivers"])
               if any(w.matches(r["test_id"]) for r in results)}
    out: list[str] = []
    for doc in docs:
        out += [e for e in doc["report_errors"] if e not in out and e not in matched]
    return out


def _coverage(docs: list[dict[str, Any]], results: list[dict[str, Any]],
              not_supported: list[dict[str, Any]]) -> dict[str, Any]:
    matrix: dict[str, dict[str, dict[str, int]]] = {}
    declined: dict[str, str] = {}
    for doc in docs:
        for op, cells in (doc.get("coverage") or {}).items():
            for dtype, counts in cells.items():
                cell = matrix.setdefault(op, {}).setdefault(
                    dtype, {"compiled": 0, "executed": 0, "compared": 0})
                for key in cell:
                    cell[key] += counts.get(key, 0)
    for entry in not_supported:
        coverage_records.collect({}, declined, entry["nodeid"], [(
            records.OUTCOME_PROPERTY, {"status": "not_supported",
                                              "message": entry["message"]})])
    return coverage.section(matrix, declined)


def combine(docs: list[dict[str, Any]], parts: list[dict[str, Any]], command: str
            ) -> dict[str, Any]:
    """The merged report.json of the parts ``docs`` (which :func:`problems` accepted):
    the first part's header, every part's results (sorted by test id), counts, coverage
    and the verdict recomputed from them; ``merge`` records ``parts`` (one object per
    part, from the caller: ``index``, ``path``, ``manifest_sha256``, ...) and the
    selection; ``command``: the merge's command line."""
    base = docs[0]
    results = sorted((r for d in docs for r in d["results"]), key=lambda r: r["nodeid"])
    collected = sum(d["summary"]["collected"] for d in docs)
    summary = report.summarize(results, collected)
    prof = profiles.load(base["profile"]["name"]) if base["profile"] else None
    errors = _errors(docs, results)
    decision, reasons = plugin_verdict.decide(
        results, collected=collected, profile=prof, declared=base["declared_capabilities"],
        device_count=base["platform"].get("local_device_count", 1), errors=errors)
    not_supported = sorted((n for d in docs for n in d["not_supported"]),
                           key=lambda n: n["nodeid"])
    known = [dict(e, matched=sum(d["known_failures"][i]["matched"] for d in docs))
             for i, e in enumerate(base["known_failures"])]
    shard = base["shard"]
    doc = {k: v for k, v in base.items() if k != "shard"}
    doc.update({
        "command": command, "known_failures": known,
        "started_utc": min(d["started_utc"] for d in docs),
        "duration_s": max(d["duration_s"] for d in docs),
        "programs": {k: sum(d["programs"].get(k, 0) for d in docs) for k in base["programs"]},
        "report_errors": errors,
        "summary": {"collected": collected, "reported": summary["reported"],
                    "expected": base["summary"]["expected"], "by_status": summary["by_status"]},
        "areas": summary["areas"], "kernel_families": report.kernel_families(summary["areas"]),
        "tiers": summary["tiers"], "results": results,
        "failures": sorted((f for d in docs for f in d["failures"]), key=lambda f: f["nodeid"]),
        "not_supported": not_supported, "interrupted": None,
        "verdict": decision, "verdict_reasons": reasons,
        "stack_findings": attribution_sources.stack_findings(results),
        **({"shared_with_xla": attribution_sources.shared_with_xla(
            results, defect_catalog.xla_ids(defect_catalog.load()))}
           if all("shared_with_xla" in d for d in docs) else {}),
        "merge": {"shard_count": shard["count"], "algorithm": shard["algorithm"],
                  "durations_sha256": shard["durations_sha256"],
                  "selection_count": shard["selection_count"],
                  "selection_sha256": shard["selection_sha256"], "parts": parts},
    })
    doc.update(_coverage(docs, results, not_supported))
    return doc


def _listed_sha256(manifest: Path, name: str) -> str | None:
    for line in manifest.read_text(encoding="utf-8").splitlines():
        digest, _, listed = line.partition("  ")
        if listed == name and re.fullmatch(r"[0-9a-f]{64}", digest):
            return digest
    return None


def verify_embedded(path: Path, doc: dict[str, Any]) -> list[str]:
    """Problems of a merged bundle ``path`` (``doc``: its report.json): every embedded
    part is intact (its report.json has the sha256 its own manifest lists, that manifest
    the sha256 the merge recorded, a signature matches it), the parts pass
    :func:`problems`, and ``doc`` equals :func:`combine` of them (``command`` aside)."""
    from conformance.certification.bundle import reportfile

    out, docs = [], []
    for k, part in enumerate(doc["merge"]["parts"], 1):
        where = f"part {k} (shard {part.get('index', '?')}/{doc['merge']['shard_count']})"
        pdir = path / PARTS_DIR / str(k)
        manifest = pdir / signing.MANIFEST
        try:
            if shards.sha256_of(manifest) != part.get("manifest_sha256"):
                out.append(f"{where}: {manifest.relative_to(path)} differs from the sha256 the "
                           "merge recorded")
            elif _listed_sha256(manifest, "report.json") != shards.sha256_of(
                    pdir / "report.json"):
                out.append(f"{where}: its report.json is not the one its manifest lists")
            sig = signing.status(pdir)
            if sig.state == "bad":
                out.append(f"{where}: {sig.detail}")
            docs.append(reportfile.load(pdir))
        except (OSError, reportfile.MalformedReport, signing.SigningError) as err:
            out.append(f"{where}: {err}")
    if out:
        return out
    out = problems(docs)
    if out:
        return out
    expected = combine(docs, doc["merge"]["parts"], doc["command"])
    return [f"report.json {key} differs from the merge of its parts" for key in
            sorted(set(expected) | set(doc)) if key != "command"
            and expected.get(key) != doc.get(key)]
