"""Mutants of the state a backend keeps across calls: only a sequence of calls shows them.

Each wraps the loaded executables of an unbroken CPU client; a single execution on fresh
buffers is right on every one of them, so the single-call areas cannot kill them.

* ``seq-allocator-reuses-live-buffer``: an execution's result is also written into the
  buffer of an earlier result of the same executable that is still alive (an allocator
  that hands out a buffer still in use).
* ``seq-donation-keeps-input``: executions run on copies of their arguments, so a
  donated input is never invalidated (it stays live and readable).
* ``seq-stale-overlapping-output``: an execution issued while the previous execution's
  results are still alive returns those results again (a stale output when two
  executions overlap).
* ``seq-output-aliases-input``: an execution writes its first result into its first
  argument's buffer as well, so the input changes across executions without donation.

They write device memory through ``unsafe_buffer_pointer`` (the CPU client's buffers are
host memory), after waiting for the execution.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

from runtime._client import Client
from tests.mutants.base import put
from tests.mutants.catalog import add

TARGET = "test_sequences"


def _write(dst, src) -> None:
    """Copy ``src``'s device bytes over ``dst``'s device buffer (same size)."""
    src.block_until_ready()
    dst.block_until_ready()
    ctypes.memmove(dst.unsafe_buffer_pointer(), src.unsafe_buffer_pointer(), src.nbytes)


def _single_device(arrays) -> bool:
    return all(len(a.devices()) == 1 for a in arrays)


class _Wrapped:
    """A loaded executable whose ``execute`` is ``mutate(executable, arguments)``."""

    def __init__(self, exe, client, mutate):
        self._exe, self._client, self._mutate = exe, client, mutate
        self._previous: list = []

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def execute(self, arguments):
        if not _single_device(arguments):
            return self._exe.execute(arguments)
        return self._mutate(self, list(arguments))


def _wrapping(mutate, doc: str) -> type:
    class WrapsExecutables(Client):
        def compile_and_load(self, computation, executable_devices, compile_options=None,
                             *args, **kwargs):
            exe = super().compile_and_load(computation, executable_devices, compile_options,
                                           *args, **kwargs)
            return _Wrapped(exe, self, mutate)
    WrapsExecutables.__doc__ = doc
    return WrapsExecutables


def _alive(refs):
    found = [r() for r in refs]
    return [a for a in found if a is not None and not a.is_deleted()]


def _reuse_live_buffer(wrapped, arguments):
    outs = wrapped._exe.execute(arguments)
    earlier = [a for a in _alive(wrapped._previous)
               if outs and a.nbytes == outs[0].nbytes and a.devices() == outs[0].devices()]
    if earlier:
        _write(earlier[0], outs[0])
    wrapped._previous = [weakref.ref(o) for o in outs]
    return outs


def _donation_keeps_input(wrapped, arguments):
    copies = [put(wrapped._client, np.asarray(a), next(iter(a.devices()))) for a in arguments]
    return wrapped._exe.execute(copies)


def _stale_when_overlapping(wrapped, arguments):
    earlier = _alive(wrapped._previous)
    if earlier and len(earlier) == len(wrapped._previous):
        return [put(wrapped._client, np.asarray(a), next(iter(a.devices()))) for a in earlier]
    outs = wrapped._exe.execute(arguments)
    wrapped._previous = [weakref.ref(o) for o in outs]
    return outs


def _output_into_input(wrapped, arguments):
    outs = wrapped._exe.execute(arguments)
    if outs and arguments and not arguments[0].is_deleted() \
            and arguments[0].nbytes == outs[0].nbytes:
        _write(arguments[0], outs[0])
    return outs


def _register() -> None:
    for name, mutate, doc in [
            ("seq-allocator-reuses-live-buffer", _reuse_live_buffer,
             "An execution's result is also written into an earlier, still live result "
             "of the same executable (an allocator reusing a buffer in use)."),
            ("seq-donation-keeps-input", _donation_keeps_input,
             "Executions run on copies of their arguments: a donated input stays live."),
            ("seq-stale-overlapping-output", _stale_when_overlapping,
             "An execution issued while the previous one's results are alive returns "
             "those results again (a stale output)."),
            ("seq-output-aliases-input", _output_into_input,
             "An execution writes its first result into its first argument's buffer too "
             "(an output aliasing an input across executions).")]:
        add(name, "transfer", _wrapping(mutate, doc), TARGET)


_register()
