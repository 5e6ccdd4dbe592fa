"""Open the client under test once in a child process, before pytest-xdist starts workers.

The xdist controller runs no tests and opens no client (on a GPU a second client would
take a second share of its memory). A backend that cannot start would then fail in
every worker, and xdist would replace them one after another, each with a traceback.
:func:`check` opens the client in a child process
(:mod:`conformance.session.preflight_child`, started by :mod:`.runner`) and turns a
failure into one message, which the plugin raises as a ``pytest.UsageError`` (exit 2 in
``pjrt-conformance run``).
"""

from __future__ import annotations

import json
from typing import Any

from conformance.processes import runner

#: The child's output lines: why the client did not open; the opened client's facts.
MARK, INFO = "PJRT_PREFLIGHT ", "PJRT_PREFLIGHT_INFO "
#: The child (in ``session``: it opens the backend, which this layer may not import).
_CHILD = runner.Module("conformance.session.preflight_child")


def check(spec: Any, timeout: float = 300.0) -> str | None:
    """None when the client of ``spec`` (a
    :class:`conformance.session.backend.BackendSpec`) opens in a child process within
    ``timeout`` seconds; otherwise one line saying why not (its error, the signal that
    killed it, or the timeout)."""
    return describe(spec, timeout)[0]


def describe(spec: Any, timeout: float = 300.0) -> tuple[str | None, dict[str, Any]]:
    """(:func:`check`'s answer, the platform facts of the opened client:
    :func:`conformance.session.backend.describe`, ``{}`` when it did not open or could
    not say). The facts let a run that loses its workers (cancelled, killed) still record
    its device count, which the expected test count of its profile depends on."""
    # the spec on stdin: --plugin-options may be larger than an argument may be (128 KiB)
    child = runner.run_python(_CHILD, ["-"], timeout=timeout, stdin=spec.to_json())
    info: dict[str, Any] = {}
    for line in child.stdout.splitlines():
        if line.startswith(INFO):
            try:
                info = json.loads(line[len(INFO):])
            except ValueError:
                info = {}
    return _problem(child, timeout), info if isinstance(info, dict) else {}


def _problem(child: Any, timeout: float) -> str | None:
    for line in child.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):]).replace("\n", " ")
    if child.timed_out:
        return f"the client did not open within {timeout:g} s"
    if child.signal:
        return f"the backend killed the process with {child.signal} while opening the client"
    if child.returncode != 0:
        tail = child.stderr.strip().splitlines()
        return f"opening the client failed (exit {child.returncode}): " \
               f"{tail[-1] if tail else 'no message'}"
    return None
