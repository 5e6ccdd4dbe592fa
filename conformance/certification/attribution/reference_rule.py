"""The reference differential's rule, as data: which reference re-run outcomes say whom
a failure belongs to (the PJRT C API boundary rule). No backend, no process: the run's
re-runs (:mod:`conformance.processes.reference_differential`), ``rerender`` (re-deciding
a bundle's attribution from the recorded ``reference_status``) and ``verify``'s re-check
(:mod:`conformance.certification.attribution.attribution_check`) share it.

``_FILE`` is the test file of a node id (``a/b/test_x.py::t`` -> ``test_x``): ids, not
evidence text.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.certification.attribution import attribution_sources
from conformance.certification.catalog import known_failures
from conformance.certification.catalog.profiles import _DEVICE_PARAM

REFERENCE = "cpu"
REFERENCE_NAME = "the reference backend (jaxlib's built-in CPU client)"
_FILE = re.compile(r"^(?:.*/)?(test_[A-Za-z0-9_]+)\.py::")


def is_reference(platform: str, plugin_library: bool) -> bool:
    """The platform under test is the reference itself (no differential)."""
    return platform == REFERENCE and not plugin_library


def reference_nodeid(nodeid: str) -> str:
    """``test_x.py::t[cuda:3-int8]`` -> ``test_x.py::t[cpu:3-int8]``."""
    return _DEVICE_PARAM.sub(lambda m: f"{REFERENCE}:{m.group(0).rsplit(':', 1)[1]}", nodeid)


def key(nodeid: str) -> str:
    """The test file's name, the test and its parameters on the reference
    (``a/b/test_x.py::t[cuda:1]`` -> ``test_x.py::t[cpu:1]``): the same in both runs."""
    return _FILE.sub(r"\1.py::", reference_nodeid(nodeid), count=1)


def decision(status: str, ref: str | None, own_defect: bool) -> str:
    """The attribution the reference differential answers for a result of ``status``
    whose re-run on the reference had status ``ref`` (None: not re-run); ``own_defect``:
    the reference client's own cataloged (XLA) defect matches the test there.

    Failing the same on the reference is never evidence for the framework: jaxlib's CPU
    client is itself an XLA PJRT implementation, so the shared code may be XLA's
    compiler and kernels, which a plugin ships. A shared *cataloged* XLA defect is the
    plugin's (``shared with XLA``); an uncataloged one stays unattributed until the
    PJRT C API re-run puts it above the C API (:mod:`conformance.capi`)."""
    if ref == "pass" or (ref == status and own_defect):
        return "plugin"
    return attribution_sources.UNATTRIBUTED


def answer(status: str, ref: str | None, own: known_failures.Entry | None,
           why_none: str) -> dict[str, Any]:
    """The reference differential's evidence facts (with their ``answer``,
    :func:`decision`) for a result of ``status`` whose re-run on the reference had
    status ``ref`` (None: not re-run, ``why_none`` says why: ``not_rerun``); ``own``:
    the reference client's own catalog entry that matches the test, if any
    (``reference_defect``: its id and upstream, kept only when the re-run failed the
    same)."""
    shared = own if ref is not None and ref == status else None
    return {"answer": decision(status, ref, shared is not None), "status": status,
            "reference_status": ref,
            "reference_defect": ({"id": shared.defect.id, "upstream": shared.defect.upstream}
                                 if shared is not None else None),
            "not_rerun": why_none if ref is None else None}
