"""``pjrt-conformance run`` cancelled at any moment: SIGTERM or SIGINT ends it with exit 4.

Python's default SIGTERM action kills the process (exit 143, no bundle), and its SIGINT
raises KeyboardInterrupt wherever the program is (a traceback during the imports). So
the run sets its own handler first (:func:`install`): ``python -m conformance.cli run``
and the ``pjrt-conformance run`` script set it at the top of :mod:`conformance.cli`,
before the suite's imports (:func:`wanted`); :func:`conformance.cli.run` sets it when
called in-process.

- Until :func:`arm` (the imports), a signal is only noted; :func:`arm` raises it.
- Armed, the first signal raises ``KeyboardInterrupt("cancelled by SIGTERM")`` where the
  run is (option checks, signing, printing the outcome). While pytest starts up
  (:func:`hold`) a signal is only noted, and the suite's plugin raises it when it
  configures the session (:func:`check`), at a safe point.
  Python ignores an exception raised while it runs a gc callback or a ``__del__``
  ("Exception ignored in ..."), so the run also asks at each of its steps
  (:func:`check`; the suite's plugin when it configures the session).
- While pytest runs the session, :mod:`conformance.processes.lifetime` has its own
  handler (it stops the xdist workers and has the session write the incomplete bundle)
  and puts this one back at the end of a session that was not cancelled;
  :func:`note_session` notes each signal it gets (:func:`session_signals`), so that a
  cancel whose KeyboardInterrupt was lost still ends the run as cancelled.
- :func:`disarm`: while the cancelled run writes what it keeps, a later signal prints
  one line (:data:`ALREADY`) and is otherwise ignored, until the process exits.

What a cancel leaves (:func:`conformance.cli.run`): before the run claimed its output
directory (``run.json`` is written once every option, the directory and the backend
were checked), nothing (a directory the run made is removed); from then on, the
``incomplete`` bundle of the results finished so far. Either way the exit status is 4.
This module imports nothing of the suite: it must be cheap to set up.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: The one line that a signal prints while a cancelled run writes what it keeps.
ALREADY = ("pjrt-conformance: already cancelling: writing what the run keeps (SIGKILL "
           "stops at once; 'pjrt-conformance finalize DIR' then builds the bundle)")
_SESSION_KEY = "pjrt_conformance_cancel_signals"   # config.stash would need pytest here


class _State:
    installed = False
    program = False      # set up for the whole process (python -m / the script)
    armed = False        # a signal raises KeyboardInterrupt
    cancelling = False   # the run was cancelled and writes what it keeps
    printed = False      # ALREADY was printed
    got: list[str] = []
    previous: dict[int, Any] = {}
    unraisable: Any = None   # sys.unraisablehook before install()


def wanted(module_name: str, argv: list[str]) -> bool:
    """True in ``python -m conformance.cli run ...`` (``module_name`` ``__main__``) and in
    the ``pjrt-conformance run ...`` script: the process is a run from its start."""
    return (module_name == "__main__" or Path(argv[0] if argv else "").name ==
            "pjrt-conformance") and argv[1:2] == ["run"]


def _handler(signum: int, frame: Any) -> None:
    name = signal.Signals(signum).name
    _State.got.append(name)
    if _State.cancelling:
        if not _State.printed:
            _State.printed = True
            print(f"\n{ALREADY}", file=sys.stderr, flush=True)
    elif _State.armed:
        raise KeyboardInterrupt(f"cancelled by {name}")


def install(*, program: bool = False) -> None:
    """Handle SIGTERM and SIGINT from now on (main thread only; once). ``program``: for
    the whole process (they stay handled when the run returns)."""
    if _State.installed or threading.current_thread() is not threading.main_thread():
        return
    _State.installed, _State.program, _State.got = True, program, []
    _State.armed = _State.cancelling = _State.printed = False
    _State.previous = {s: signal.signal(s, _handler) for s in SIGNALS}
    _State.unraisable = sys.unraisablehook
    sys.unraisablehook = _unraisable


def _unraisable(event: Any) -> None:
    """Python's report of an exception it ignored: silent for a cancel's
    KeyboardInterrupt raised inside a gc callback or ``__del__`` (:func:`check` takes the
    cancel up at the run's next step), the usual report for anything else."""
    if isinstance(event.exc_value, KeyboardInterrupt) and \
            str(event.exc_value).startswith("cancelled by "):
        return
    (_State.unraisable or sys.__unraisablehook__)(event)


def arm() -> None:
    """Raise KeyboardInterrupt for a signal from now on, at once for one already noted."""
    _State.armed = True
    check()


def hold() -> None:
    """Only note a signal from now on (pytest starts up: a KeyboardInterrupt raised inside
    an import or a compile can end in an INTERNALERROR); the suite's plugin takes it up
    at a safe point (:func:`check` when it configures the session), :func:`arm` after."""
    _State.armed = False


def check() -> None:
    """Raise KeyboardInterrupt when a signal came and the run is not yet cancelling (its
    KeyboardInterrupt was lost, or came before :func:`arm`)."""
    if _State.installed and _State.got and not _State.cancelling:
        raise KeyboardInterrupt(f"cancelled by {_State.got[0]}")


def disarm() -> None:
    """The run is cancelled and writes what it keeps: a later signal prints one line."""
    _State.armed, _State.cancelling = False, True


def signal_name() -> str | None:
    """The first signal this handler got ('SIGTERM', 'SIGINT'), None if none."""
    return _State.got[0] if _State.got else None


def release() -> str | None:
    """Give the signals back to their previous handlers (a run that handles them itself,
    such as ``--multihost``); return the signal already noted, None if none."""
    if _State.installed and threading.current_thread() is threading.main_thread():
        for s, previous in _State.previous.items():
            signal.signal(s, previous)
        if sys.unraisablehook is _unraisable:
            sys.unraisablehook = _State.unraisable or sys.__unraisablehook__
        _State.installed = False
    return signal_name()


def finish() -> None:
    """The run returned: in-process, put the previous handlers back; in the program,
    ignore what comes until the exit (the default SIGTERM would kill it mid-exit)."""
    _State.armed = False
    if not _State.installed or threading.current_thread() is not threading.main_thread():
        return
    if _State.program:
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        return
    for s, previous in _State.previous.items():
        signal.signal(s, previous)
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = _State.unraisable or sys.__unraisablehook__
    _State.installed, _State.got = False, []


def note_session(config: Any) -> None:
    """In the process that merges a session's results, after
    :func:`conformance.processes.lifetime.on_configure`: note each SIGTERM and SIGINT
    (:func:`session_signals`) before its handler runs. Main thread only."""
    got: list[str] = []
    setattr(config, _SESSION_KEY, got)
    if threading.current_thread() is not threading.main_thread():
        return
    for s in SIGNALS:
        handler = signal.getsignal(s)
        if not callable(handler):
            continue

        def noting(signum: int, frame: Any, handler: Any = handler) -> None:
            got.append(signal.Signals(signum).name)
            handler(signum, frame)

        signal.signal(s, noting)


def session_signals(config: Any) -> list[str]:
    """The signals the session got (:func:`note_session`), first first."""
    return list(getattr(config, _SESSION_KEY, []))
