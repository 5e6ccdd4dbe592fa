"""How a session's cancel handling meets the rest of the process.

A cancel that lands inside a gc callback is not lost (CI saw it: jax's
``_xla_gc_callback`` ran when SIGTERM came, Python ignored the KeyboardInterrupt raised
there and printed "Exception ignored in ..." with a traceback into the run's output).
:func:`conformance.processes.lifetime.raise_would_be_lost` finds such frames, and the
session's cancel handler delivers the signal again outside them."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.processes import lifetime

ROOT = Path(__file__).resolve().parents[1]


def test_a_gc_callback_or_del_frame_loses_a_raise_and_plain_code_does_not():
    seen = []

    def callback(phase, info):
        if phase == "start" and not seen:
            seen.append(lifetime.raise_would_be_lost(sys._getframe()))

    class Finalized:
        def __del__(self):
            seen.append(lifetime.raise_would_be_lost(sys._getframe()))

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)
    Finalized()
    assert seen == [True, True]
    assert lifetime.raise_would_be_lost(sys._getframe()) is False
    assert lifetime.raise_would_be_lost(None) is False


def test_sigterm_inside_a_gc_callback_still_cancels_without_a_traceback():
    """A child with the session's cancel handler (a stand-in config) gets SIGTERM inside
    a gc callback: the old handler raised there (lost, "Exception ignored"); now the
    KeyboardInterrupt reaches the main loop within a second."""
    code = textwrap.dedent(f"""
        import gc, os, signal, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from conformance.processes import lifetime

        class Stash(dict):
            def setdefault(self, k, v):
                return dict.setdefault(self, k, v)

        class PM:
            def register(self, *a): pass
            def getplugin(self, name): return None

        class Config:
            stash = Stash()
            pluginmanager = PM()

        lifetime.on_configure(Config(), merging=True)

        def callback(phase, info):   # the signal arrives while a gc callback runs
            if phase == "start" and not sent:
                sent.append(1)
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):  # bytecode: the handler runs here, in the callback
                    pass
        sent = []
        gc.callbacks.append(callback)
        try:
            gc.collect()
            t0 = time.monotonic()
            while time.monotonic() - t0 < 5:
                time.sleep(0.01)
            print("NOT CANCELLED", flush=True)
        except KeyboardInterrupt as err:
            print(f"CANCELLED {{err}}", flush=True)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert "CANCELLED cancelled by SIGTERM" in proc.stdout, proc.stdout + proc.stderr
    assert "Exception ignored" not in proc.stderr, proc.stderr


class _Config:
    """What lifetime.on_configure and _Restore use of a pytest Config."""

    def __init__(self):
        self.stash = {}
        self.plugins = []

        class _PM:
            def register(_, plugin, name=None):
                self.plugins.append(plugin)

            def getplugin(_, name):
                return None
        self.pluginmanager = _PM()


def test_a_cancelled_session_ignores_its_signals_until_the_process_exits():
    """After a cancel the session leaves SIGINT and SIGTERM ignored, so that a second one
    cannot kill the process while it exits (tests/test_double_cancel.py: plain pytest
    exits 2, not -2). An ignored SIGINT is inherited by every child the process starts:
    a test that starts a child expecting Ctrl-C to work sets Python's handler in it
    (test_probe_runtime.py's Ctrl-C tests)."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    config = _Config()
    try:
        lifetime.on_configure(config, merging=True)
        config.stash[lifetime._CANCELLED] = ["SIGTERM"]   # the session was cancelled
        (restore,) = config.plugins
        restore.pytest_unconfigure(config)
        assert {signal.getsignal(s) for s in before} == {signal.SIG_IGN}
        config.stash[lifetime._CANCELLED] = []            # one that was not: put back
        restore.pytest_unconfigure(config)
        assert {s: signal.getsignal(s) for s in before} == before
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
