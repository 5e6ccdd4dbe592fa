"""Run a snippet against the backend in a child process, so a crash costs one test.

Used for calls known to crash some backends (use after delete, double donation). The
child is started by :mod:`conformance.processes.runner` (its process group is killed at
the timeout).
"""

from __future__ import annotations

import textwrap
from typing import Any

from conformance.helpers.assertions import BackendCrash
from conformance.processes import runner

_PRELUDE = """
import sys
import numpy as np
from conformance.session import backend
from runtime import xla_client
spec = backend.BackendSpec.from_json({spec_json!r})
spec.run_setup_files()
spec.configure()
client = spec.open()
device = client.local_devices()[{device_index}]
from conformance.session import api
xc = api.module_api(spec.platform)
"""


class BackendHang(AssertionError):
    """The child process did not finish within its timeout."""


def run_snippet(snippet: str, *, spec: Any, device_index: int, call: str,
                timeout: float = 120.0) -> str:
    """Run ``snippet`` with ``client`` and ``device`` bound; return its stdout.

    ``spec`` is the :class:`conformance.session.backend.BackendSpec` of the backend
    under test; ``device_index`` indexes its local devices.

    Raises BackendCrash if the child dies from a signal (SIGSEGV, SIGABRT...),
    BackendHang after ``timeout`` seconds, AssertionError on any other non-zero
    exit (with the child's stderr).
    """
    code = _PRELUDE.format(spec_json=spec.to_json(),
                           device_index=device_index) + textwrap.dedent(snippet)
    proc = runner.run_python(code, timeout=timeout)
    if proc.timed_out:
        raise BackendHang(f"no result within {timeout:g} s [{call}]")
    if proc.signal:
        raise BackendCrash(f"process killed by {proc.signal} instead of raising a Python error "
                           f"[{call}]\nstdout: {proc.stdout.strip()[-500:]}")
    if proc.returncode != 0:
        raise AssertionError(f"child exited with {proc.returncode} [{call}]\n"
                             f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout
