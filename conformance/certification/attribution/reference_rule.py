"""The reference differential's rule, as data: which reference re-run answers say whom
a failure belongs to (the PJRT C API boundary rule). No backend, no process: the run's
re-runs (:mod:`conformance.processes.reference_differential`) and ``rerender`` (re-deciding
a bundle's attribution from its recorded answers) share it.
"""

from __future__ import annotations

import re

from conformance.certification.attribution import sources as attribution
from conformance.certification.catalog import known_failures
from conformance.certification.verdict.profiles import _DEVICE_PARAM

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


def answer(status: str, ref: str | None, own: known_failures.Entry | None,
           why_none: str) -> tuple[str, str]:
    """The reference differential's answer for a result of ``status`` whose re-run on the
    reference had status ``ref`` (None: not re-run, ``why_none`` says why); ``own``: the
    reference client's own catalog defect that matches the test, if any.

    Failing the same on the reference is never evidence for the framework: jaxlib's CPU
    client is itself an XLA PJRT implementation, so the shared code may be XLA's
    compiler and kernels, which a plugin ships. A shared *cataloged* XLA defect is the
    plugin's (``shared with XLA``); an uncataloged one stays unattributed until the
    PJRT C API re-run puts it above the C API (:mod:`conformance.capi`)."""
    if ref is None:
        return attribution.UNATTRIBUTED, f"not re-run on {REFERENCE_NAME}: {why_none}"
    if ref == "pass":
        return "plugin", f"passes on {REFERENCE_NAME}"
    if ref != status:
        return attribution.UNATTRIBUTED, f"{ref} on {REFERENCE_NAME} (here {status})"
    if own is not None:
        return "plugin", (
            f"{attribution.SHARED_WITH_XLA}: fails the same on {REFERENCE_NAME}, where it is "
            f"the XLA defect {own.defect.id} ({own.defect.upstream}); a plugin that ships "
            f"XLA's compiler and kernels ships this defect")
    return attribution.UNATTRIBUTED, (
        f"fails the same on {REFERENCE_NAME} ({ref}): in code both share (XLA or jaxlib); "
        f"only a pass of the PJRT C API re-run puts it above the C API")
