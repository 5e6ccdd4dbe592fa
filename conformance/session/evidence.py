"""The evidence sources of a run (the kinds of
:data:`conformance.certification.attribution.attribution_sources.KINDS`), bound to the run.

The process that merges the results calls :func:`sources` once, after the known
failures are matched and before the report is built. A source's ``fn(record)``
returns None or its facts with their ``answer``
(:class:`conformance.certification.attribution.attribution_sources.Source`); to add a source, add
its kind to ``KINDS`` (with its renderer in
:mod:`conformance.certification.rendering.failure_view` and its re-check in
:mod:`conformance.certification.attribution.attribution_check`) and bind it here.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance import capi
from conformance.certification.attribution import attribution_sources
from conformance.processes import reference_differential
from conformance.session import session_state
from conformance.session.run_options import run_options


def offline_sources(results: list[Any]) -> list[attribution_sources.Source]:
    """The sources that need no backend
    (:func:`conformance.certification.attribution.attribution_sources.offline_sources`), with the
    ``known_entry`` of each of ``results`` as its catalog entry."""
    entries = {r.nodeid: r.known_entry for r in results if r.known_entry is not None}
    return attribution_sources.offline_sources(entries)


def capi_source(header: dict[str, Any], *, timeout: float = 120.0) -> attribution_sources.Source:
    """The re-run below the framework through the plugin's PJRT C API: for each
    failure that :func:`conformance.capi.plan` can check, one child process
    (:func:`conformance.capi.run`, about 1-3 s on CPU plugins); its ``check``, outcome
    and detail are the ``capi`` item (:func:`attribution.capi_facts`), an undecided
    re-run gives none. ``header``: the report (its ``platform.loaded``); TypeError when
    it is not a dict."""
    return attribution_sources.Source("capi", capi.hook(header, timeout=timeout))


def sources(config: pytest.Config, results: list[Any]) -> list[attribution_sources.Source]:
    """The offline sources (:func:`offline_sources`); the re-run below the framework
    through the PJRT C API (:func:`capi_source`) when the backend is a C API plugin
    library; and the reference differential when ``--reference-differential=auto`` and
    the platform under test is not the reference (it re-runs the failing ``results`` in
    a child process, bounded by ``--reference-timeout`` seconds)."""
    state = session_state.of(config)
    opts = run_options(config)
    found = offline_sources(results)
    header = {"platform": state.platform_info}
    if capi.plugin_of(header) is not None:
        found.append(capi_source(header))
    if opts.reference_differential == "auto" and \
            not reference_differential.is_reference(state.platform, state.plugin_library):
        found.append(reference_differential.source(
            results, catalog=state.known, rootdir=config.rootpath,
            cpu_devices=state.cpu_devices, num_processes=opts.num_processes,
            timeout_s=opts.reference_timeout))
    return found
