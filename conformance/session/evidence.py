"""The evidence sources of a run, in one place (:mod:`conformance.certification.attribution.sources`).

The process that merges the results calls :func:`sources` once, after the known
failures are matched and before the report is built. To add a source, append an
``attribution.Source(name, strength, fn)`` here; ``fn(record)`` returns None or
``(attribution, evidence text)``.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance import capi
from conformance.certification.attribution import sources as attribution
from conformance.processes import reference_differential
from conformance.programs import interpreter
from conformance.session import state as session_state
from runtime import plugin_support


def offline_sources(results: list[Any]) -> list[attribution.Source]:
    """The sources that need no backend: the defect catalog (the ``known_entry`` of each
    of ``results``, its lowering defects first), the framework's own account of a
    target it could not give a plugin client, and the suite's own account of two
    oracles that disagree (``OracleDisagreement``)."""
    entries = {r.nodeid: r.known_entry for r in results if r.known_entry is not None}
    return [attribution.catalog_source(entries), attribution.lowering_source(entries),
            attribution.registration_source(plugin_support.FRAMEWORK_MARKER),
            attribution.oracle_source(interpreter.SUITE_MARKER)]


def sources(config: pytest.Config, results: list[Any]) -> list[attribution.Source]:
    """The defect catalog; the framework's own account of a target it could not give
    a plugin client (:func:`attribution.registration_source`); the re-run below the framework through the PJRT C API
    (:func:`conformance.capi.hook`) when the backend is a C API plugin library; and the
    reference differential when ``--reference-differential=auto`` and the platform under
    test is not the reference (it re-runs the failing ``results`` in a child process,
    bounded by ``--reference-timeout`` seconds)."""
    state = session_state.of(config)
    found = offline_sources(results)
    header = {"platform": state.platform_info}
    if capi.plugin_of(header) is not None:
        found.append(attribution.Source("capi", attribution.CAPI, capi.hook(header)))
    if config.getoption("reference_differential") == "auto" and \
            not reference_differential.is_reference(state.platform, state.plugin_library):
        found.append(reference_differential.source(
            results, catalog=state.known, rootdir=config.rootpath,
            cpu_devices=state.cpu_devices, num_processes=config.getoption("num_processes"),
            timeout_s=config.getoption("reference_timeout")))
    return found
