"""A cancel that lands inside a gc callback is not lost (CI saw it: jax's
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
