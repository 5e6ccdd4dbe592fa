"""Open the client under test once in a child process, before pytest-xdist starts workers.

The xdist controller runs no tests and opens no client (on a GPU a second client would
take a second share of its memory). A backend that cannot start would then fail in
every worker, and xdist would replace them one after another, each with a traceback.
:func:`check` opens the client in a child process (:mod:`.runner`) and turns a failure
into one message, which the plugin raises as a ``pytest.UsageError`` (exit 2 in
``pjrt-conformance run``).
"""

from __future__ import annotations

import json
from typing import Any

from conformance.processes import runner

_MARK, _INFO = "PJRT_PREFLIGHT ", "PJRT_PREFLIGHT_INFO "
_CHILD = f"""
import json, sys
from conformance.session import backend
spec = backend.BackendSpec.from_json(sys.argv[1])
try:
    spec.run_setup_files()
    spec.configure()
    client = spec.open()
except Exception as err:
    print({_MARK!r} + json.dumps(str(err)), flush=True)
    sys.exit(3)
try:
    print({_INFO!r} + json.dumps(backend.describe(client, spec)), flush=True)
except Exception:
    pass
"""


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
    child = runner.run_python(_CHILD, [spec.to_json()], timeout=timeout)
    info: dict[str, Any] = {}
    for line in child.stdout.splitlines():
        if line.startswith(_INFO):
            try:
                info = json.loads(line[len(_INFO):])
            except ValueError:
                info = {}
    return _problem(child, timeout), info if isinstance(info, dict) else {}


def _problem(child: Any, timeout: float) -> str | None:
    for line in child.stdout.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):]).replace("\n", " ")
    if child.timed_out:
        return f"the client did not open within {timeout:g} s"
    if child.signal:
        return f"the backend killed the process with {child.signal} while opening the client"
    if child.returncode != 0:
        tail = child.stderr.strip().splitlines()
        return f"opening the client failed (exit {child.returncode}): " \
               f"{tail[-1] if tail else 'no message'}"
    return None
