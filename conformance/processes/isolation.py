"""Run a snippet against the backend in a child process, so a crash costs one test.

Used for calls known to crash some backends (use after delete, double donation). The
child, :mod:`conformance.session.isolation_child`, opens the client and runs the snippet;
it is started by :mod:`conformance.processes.runner` (its process group is killed at the
timeout).
"""

from __future__ import annotations

import textwrap
from typing import Any

from conformance.helpers.assertions import BackendCrash
from conformance.processes import runner

#: The child (in ``session``: it opens the backend, which this layer may not import).
_CHILD = runner.Module("conformance.session.isolation_child")


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
    proc = runner.run_python(_CHILD, ["-", str(device_index), textwrap.dedent(snippet)],
                             timeout=timeout, stdin=spec.to_json())   # may pass 128 KiB
    if proc.timed_out:
        raise BackendHang(f"no result within {timeout:g} s [{call}]")
    if proc.signal:
        raise BackendCrash(f"process killed by {proc.signal} instead of raising a Python error "
                           f"[{call}]\nstdout: {proc.stdout.strip()[-500:]}")
    if proc.returncode != 0:
        raise AssertionError(f"child exited with {proc.returncode} [{call}]\n"
                             f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout
