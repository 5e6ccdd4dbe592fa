"""No process of a run outlives it, and a cancel is a cancel.

- :func:`die_with_parent`: the calling process gets SIGKILL when its parent dies
  (Linux ``prctl(PR_SET_PDEATHSIG)``; a no-op elsewhere). pytest-xdist workers call it
  (:func:`on_configure`), and so does every child of :mod:`.runner` before anything else
  (it starts in :mod:`.child_start`, where the function is),
  so a SIGKILL or OOM kill of the controller takes the workers, and a worker's death
  takes its multi-process and isolation children, even though those run in their own
  process groups.
- :func:`on_configure`: in the process that merges results, SIGTERM and SIGINT cancel
  the run (the xdist workers are killed at once, pytest stops, the finished results
  are written as an ``incomplete`` bundle); a second SIGINT or SIGTERM while that
  bundle is written prints one line (:data:`ALREADY_CANCELLING`) and is otherwise
  ignored (a double Ctrl-C gave tracebacks and no bundle); in xdist workers SIGTERM
  does nothing, so a cancel sent to the whole process group ends the run through the
  controller, which stops them. :func:`cancelled_by` says which signal cancelled the run.
"""

from __future__ import annotations

import _thread
import gc
import signal
import sys
import threading
from typing import Any

import pytest

from conformance.processes.child_start import die_with_parent

_CANCELLED = pytest.StashKey[list]()


def _leave_to_the_controller(signum: int, frame: Any) -> None:
    """An xdist worker's SIGTERM handler: the controller cancels the run and kills it."""


class _Restore:
    """Puts the SIGTERM and SIGINT handlers back at the end of the session, unless the
    run was cancelled: then both are ignored until the process exits (the default
    handler would kill it while it exits)."""

    def __init__(self, previous: dict[int, Any]):
        self.previous = previous

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if config.stash.get(_CANCELLED, []):
            # Ignored, not handled: Python's finalization puts a handled signal back to
            # the default (a late Ctrl-C would kill the process mid-exit), an ignored one not.
            for signum in self.previous:
                signal.signal(signum, signal.SIG_IGN)
            return
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


#: The one line a second cancel prints (the first one is already writing the bundle).
ALREADY_CANCELLING = ("pjrt-conformance: already cancelling: writing the incomplete bundle "
                      "of the finished results (SIGKILL stops at once; 'pjrt-conformance "
                      "finalize DIR' then builds it)")


def on_configure(config: pytest.Config, *, merging: bool) -> None:
    """Set up the process of a conformance run (``merging``: the controller, or the only
    process; otherwise an xdist worker). Main thread only."""
    config.stash[_CANCELLED] = []
    if not merging:
        die_with_parent()
        # A handler that does nothing, not SIG_IGN: an ignored signal stays ignored in
        # every child the worker starts, a handled one is reset to the default at exec.
        signal.signal(signal.SIGTERM, _leave_to_the_controller)
        return

    def cancel(signum: int, frame: Any) -> None:
        if raise_would_be_lost(frame):  # take it up again outside the gc callback
            again = threading.Timer(_REDELIVER_S, _thread.interrupt_main, (signum,))
            again.daemon = True
            again.start()
            return
        got = config.stash[_CANCELLED]
        got.append(signal.Signals(signum).name)
        if len(got) > 1:   # a second Ctrl-C must not break the writing of the bundle
            if len(got) == 2:
                print(f"\n{ALREADY_CANCELLING}", file=sys.stderr, flush=True)
            return
        kill_xdist_workers(config)
        raise KeyboardInterrupt(f"cancelled by {signal.Signals(signum).name}")

    previous = {s: signal.signal(s, cancel) for s in (signal.SIGTERM, signal.SIGINT)}
    config.pluginmanager.register(_Restore(previous), "pjrt-conformance-sigterm")


def stop(config: pytest.Config, why: str) -> None:
    """Cancel the run from inside it (a full disk): as a SIGTERM does, the xdist workers
    are killed and pytest stops with KeyboardInterrupt; :func:`cancelled_by` gives
    ``why``. A second stop while the first is handled does nothing."""
    got = config.stash.setdefault(_CANCELLED, [])
    got.append(why)
    if len(got) > 1:
        return
    kill_xdist_workers(config)
    raise KeyboardInterrupt(f"cancelled: {why}")


#: Seconds after which a signal that arrived inside a gc callback or ``__del__`` is
#: delivered to the main thread again (:func:`raise_would_be_lost`).
_REDELIVER_S = 0.05


def raise_would_be_lost(frame: Any) -> bool:
    """True when an exception raised by a signal handler in ``frame`` (the frame the
    signal interrupted) would be lost: Python ignores one raised inside a gc callback
    (jax registers one) or a ``__del__`` method, printing "Exception ignored in ...".
    A cancel that lands there is delivered again a moment later
    (``_thread.interrupt_main``), outside it."""
    callbacks = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def kill_xdist_workers(config: pytest.Config) -> int:
    """SIGKILL the pytest-xdist workers of this controller now (a cancel must not wait
    for their tests, nor for xdist's 10 s shutdown); return how many. Reaches into
    execnet's gateway (``_io.kill``); without it, xdist stops them as usual."""
    dsession = config.pluginmanager.getplugin("dsession")
    group = getattr(getattr(dsession, "nodemanager", None), "group", None)
    killed = 0
    for gateway in list(group or ()):
        kill = getattr(getattr(gateway, "_io", None), "kill", None)
        if kill is not None:
            try:
                kill()
                killed += 1
            except OSError:
                pass
    return killed


def cancelled_by(config: pytest.Config) -> str:
    """What first cancelled the run: 'SIGTERM', the reason given to :func:`stop`, else
    'SIGINT' (a KeyboardInterrupt)."""
    got = config.stash.get(_CANCELLED, [])
    return got[0] if got else "SIGINT"
