"""The report document (report.json), built once from the merged test records.

Schema ``schema_version`` 3: ``docs/report-schema.md`` and the JSON Schema
``conformance/schema/report-v3.schema.json``. :func:`header` gathers the facts
of the run, :func:`build` adds the results, counts and the verdict
(:func:`conformance.certification.verdict.plugin_verdict`). The renderers
(:mod:`~conformance.certification.rendering.report_md`, :mod:`~conformance.certification.rendering.report_html`,
:func:`conformance.certification.bundle.bundle_files.render_junit`) only render this document.
"""

from __future__ import annotations

import collections
import datetime
import platform as _platform
import shlex
from pathlib import Path
from typing import Any

from conformance.certification.attribution import attribution_sources
from conformance.certification.catalog import defect_catalog
from conformance.certification import provenance
from conformance.certification.verdict import plugin_verdict
from conformance.certification.verdict import next_steps
from conformance.certification.catalog import known_failures
from conformance.certification.catalog.known_failures import Entry
from conformance.certification.catalog.profiles import Profile
from conformance.certification.results.records import (  # noqa: F401  (the names of the schema)
    FATAL, PROCESSES_PROPERTY, STATUSES, TIER_PROPERTY, Result, area_of)
from conformance.certification.catalog.waivers import Waiver
import conformance.certification.catalog.waivers

SCHEMA_VERSION = 3
KERNEL_AREA_PREFIX = "kernels_"


def environment() -> dict[str, str]:
    """Versions of python, jax, jaxlib, numpy, scipy, ml_dtypes, hypothesis, pytest; the OS."""
    import hypothesis
    import ml_dtypes
    import numpy as np
    import pytest
    import scipy

    from runtime import versions

    return {"python": _platform.python_version(), "jax": versions.JAX_VERSION,
            "jaxlib": versions.JAXLIB_VERSION, "numpy": np.__version__,
            "scipy": scipy.__version__, "ml_dtypes": ml_dtypes.__version__,
            "hypothesis": hypothesis.__version__, "pytest": pytest.__version__,
            "os": _platform.platform()}


def header(*, platform: str, platform_info: dict[str, Any], known: list[Entry],
           argv: list[str], cpu_devices: int, num_processes: int, programs: dict[str, int],
           started: datetime.datetime, duration_s: float,
           hypothesis_seed: int | None = None,
           plugin_library: bool = False,
           float_controls: dict[str, Any] | None = None,
           hypothesis_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Report header: what is needed to reproduce and trust the report.

    ``platform``: the ``--platform`` name; ``platform_info``: the backend's facts
    (empty when no client was opened); ``known``: the known-failure entries after
    :func:`conformance.certification.catalog.known_failures.match`; ``argv``: the command
    line; ``programs``: ``compiles`` and ``cache_hits`` summed over processes;
    ``started``: an aware UTC datetime; ``duration_s``: seconds;
    ``hypothesis_seed``: the ``--hypothesis-seed`` of a random-seed run (None: none given);
    ``plugin_library``: the backend was loaded from ``--plugin-library`` (a catalog condition);
    ``float_controls``: the denormal handling declared for the run
    (:func:`conformance.helpers.float_control_modes.record`; None: not resolved);
    ``hypothesis_settings``: the Hypothesis settings the run recorded (``run.json``, read by
    ``finalize``; None: this process's, with ``hypothesis_seed``).
    """
    import hypothesis

    prof = hypothesis.settings.default
    return {
        "suite": provenance.suite_identity(),
        "platform": platform_info or {"name": platform},
        "requested_platform": platform,
        "environment": environment(),
        "hypothesis": hypothesis_settings or {
            "profile": hypothesis.settings._current_profile,
            "max_examples": prof.max_examples, "derandomize": prof.derandomize,
            "seed": hypothesis_seed},
        "known_failures": [_known(e, platform, plugin_library) for e in known],
        "command": shlex.join([Path(argv[0]).name] + list(argv[1:])),
        "cpu_devices": cpu_devices,
        "num_processes": num_processes,
        "programs": dict(programs),
        "started_utc": started.isoformat(timespec="seconds"),
        "duration_s": round(duration_s, 2),
        "float_controls": float_controls,
    }


def _known(e: Entry, platform: str, plugin_library: bool) -> dict[str, Any]:
    """A known-failure entry in the header; ``fixed_in``: the release its catalog defect
    was measured fixed in, when the installed one is at or after it (the entry is then
    inactive and its tests are expected to pass)."""
    out = {"pattern": e.pattern, "requirement": e.requirement, "reason": e.reason,
           "source": e.source, "matched": e.matched,
           "active": e.applies(platform, plugin_library)}
    d = e.defect
    fixed = d.fixed_in(known_failures.installed_version(d.measured.package)) \
        if d is not None and d.measured is not None else None
    if fixed:
        out["fixed_in"] = fixed
    return out


def summarize(records: list[dict[str, Any]], collected: int) -> dict[str, Any]:
    """Status counts overall, per area and per tier."""
    def table(key: str) -> dict[str, dict[str, int]]:
        rows: dict[str, dict[str, int]] = collections.defaultdict(
            lambda: {s: 0 for s in STATUSES})
        for r in records:
            rows[r[key]][r["status"]] += 1
        return dict(sorted(rows.items()))

    by_status = {s: 0 for s in STATUSES}
    for r in records:
        by_status[r["status"]] += 1
    return {"collected": collected, "reported": len(records), "by_status": by_status,
            "areas": table("area"), "tiers": table("tier")}


def kernel_families(areas: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Status counts of the kernel families (areas ``kernels_<family>``), by family."""
    return {a[len(KERNEL_AREA_PREFIX):]: counts for a, counts in areas.items()
            if a.startswith(KERNEL_AREA_PREFIX)}


def build(results: list[Result], *, collected: int, header: dict[str, Any],
          profile: Profile | None = None, declared: tuple[str, ...] = (),
          waivers: tuple[Waiver, ...] = (), device_count: int = 1,
          today: datetime.date | None = None, interrupted: str | None = None,
          report_errors: tuple[str, ...] = (),
          record_facts: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report.json document (schema 3): ``header`` (see :func:`header`), the
    results with waivers applied, the counts, the verdict and its reasons.
    ``interrupted``: why the run stopped early (verdict ``incomplete``), None if it did not;
    ``report_errors``: problems of the run's inputs, stated after the waivers' and
    counted by the verdict; ``record_facts``: test id -> keys added last to its record."""
    records = [r.record() for r in results]
    errors = conformance.certification.catalog.waivers.apply(list(waivers), records,
                                                             today or datetime.date.today())
    errors += list(report_errors)
    by_id = {r["nodeid"]: r for r in records}
    summary = summarize(records, collected)
    decision, reasons = plugin_verdict.decide(records, collected=collected, profile=profile,
                                              declared=list(declared),
                                              device_count=device_count, errors=errors,
                                              interrupted=interrupted)
    counts = profile.expected_counts(device_count) if profile else None
    failures = [{**r.failure(), "status": by_id[r.nodeid]["status"]} for r in results
                if r.status in FATAL]
    catalog = defect_catalog.load()
    doc = {
        "schema_version": SCHEMA_VERSION,
        **header,
        "profile": profile.header() if profile else None,
        "declared_capabilities": list(declared),
        "waivers": [w.as_dict() for w in waivers],
        "report_errors": errors,
        "summary": {"collected": collected, "reported": summary["reported"],
                    "expected": sum(counts.values()) if counts else None,
                    "by_status": summary["by_status"]},
        "areas": summary["areas"],
        "kernel_families": kernel_families(summary["areas"]),
        "tiers": summary["tiers"],
        "results": records,
        "failures": failures,
        "next_steps": next_steps.build(failures, catalog),
        "not_supported": [{"nodeid": r.nodeid, "message": r.message} for r in results
                          if r.status == "not_supported"],
        "interrupted": interrupted,
        "verdict": decision,
        "verdict_reasons": reasons,
        "stack_findings": attribution_sources.stack_findings(records),
        "shared_with_xla": attribution_sources.shared_with_xla(
            records, defect_catalog.xla_ids(catalog)),
    }
    for r in records:   # last: what the counts and findings above read is the record's own
        r.update((record_facts or {}).get(r["nodeid"], {}))
    return doc
