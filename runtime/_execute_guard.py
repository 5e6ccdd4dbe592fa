"""Checks of ``execute`` arguments before jaxlib sees them, and execution that Ctrl-C
interrupts.

jaxlib 0.10.2 crashes (SIGSEGV) when an executable over several devices gets more or
fewer arguments than its program takes, or an array of another client, and answers a
deleted array or one of another client with texts such as "Buffer ... is on device
cpu:0, but replica is assigned to device cpu:0". :func:`check_arguments` raises first:
TypeError naming ``arguments`` for a wrong count (``expected N, got M``) and for a
non-array, ValueError naming ``arguments[i]`` for a deleted (or donated) array or an
array of another client.

jaxlib's CPU client runs a program on the calling thread, in C++, where Python never
sees a SIGINT: a ``while`` loop that does not end could not be interrupted.
:func:`call_interruptibly` runs the call on a helper thread while the main thread waits
in Python, so that Ctrl-C raises KeyboardInterrupt in the caller at once. While it waits,
SIGINT under Python's default handler is noted and raised by the wait itself (one raised
inside a gc callback would be ignored by Python, and the Ctrl-C lost). The program
itself cannot be stopped: it keeps running (a CPU core busy) until it ends, and its
results are dropped; donated arguments stay consumed. :func:`program_facts` says which
programs take that path: those with a ``while`` loop, infeed/recv or a host callback
(the only ones that may run without end); others run inline, the fast path unchanged.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from typing import Any

from runtime._compat import native, native_jax
from runtime._validate import check_arrays

#: HLO that may run without end: loops, waits for the host, host callbacks.
_MAY_NOT_END = re.compile(r"\bwhile\(|\binfeed\(|\brecv\(|custom_call_target=\"[^\"]*callback")
_ENTRY = re.compile(r"^ENTRY [^\n]*\{\n(.*?)^\}", re.MULTILINE | re.DOTALL)
_PARAMETER = re.compile(r"= (\S+) parameter\(\d+\)")


def program_facts(executable: Any) -> tuple[int | None, bool]:
    """(number of arguments ``executable`` takes or None when unknown, whether it may
    run without end) of a jaxlib ``LoadedExecutable``, read from its compiled HLO."""
    try:
        texts = [m.to_string() for m in executable.hlo_modules()]
    except Exception:  # a plugin without HLO access: no checks rather than no execute
        texts = []
    try:
        count: int | None = len(executable.get_parameter_layouts())
    except Exception:  # token parameters have no layout in jaxlib 0.10
        count = None
        entry = _ENTRY.search(texts[0]) if texts else None
        if entry is not None:
            kinds = _PARAMETER.findall(entry.group(1))
            count = None if any(k.startswith("(") for k in kinds) else len(kinds)
    return count, any(_MAY_NOT_END.search(t) for t in texts)


def check_arguments(call: str, arguments: Any, expected: int | None, client: Any,
                    live: bool = True) -> None:
    """Raise TypeError naming ``arguments`` unless it is a sequence of ``expected``
    arrays (any count when None), ValueError naming ``arguments[i]`` for an array of
    another client than ``client`` (a jaxlib client) and, when ``live``, for a deleted one."""
    check_arrays(call, "arguments", arguments, native.ArrayImpl,
                 "an array (ArrayImpl) of this executable's client")
    if expected is not None and len(arguments) != expected:
        raise TypeError(f"{call}: argument 'arguments' must hold {expected} arrays, one per "
                        f"parameter of the program, got {len(arguments)}")
    for i, a in enumerate(arguments):
        if a.is_deleted():
            if not live:
                continue  # deleted by the failed call itself (donated): not the cause
            raise ValueError(f"{call}: argument 'arguments[{i}]' must be a live array, got a "
                             f"deleted array (deleted, or donated to an earlier execute)")
        devices = _devices(a)
        if any(getattr(d, "client", client) is not client for d in devices):
            raise ValueError(f"{call}: argument 'arguments[{i}]' must be an array of this "
                             f"executable's client, got an array on {sorted(map(str, devices))}"
                             f" of another client; copy it over first, e.g. "
                             f"client.buffer_from_pyval(np.asarray(x), device)")


def _devices(array: Any) -> list[Any]:
    try:
        return list(array.sharding._device_assignment)
    except Exception:
        return list(array.devices())


# Helper threads: idle workers wait for a job; a caller takes one (or starts one), hands
# it the job and waits in Python. A worker whose job never ends is never reused.
_MAIN = threading.main_thread()
_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()
_GET_STREAM = getattr(native_jax, "get_execution_stream_id", None)
_SET_STREAM = getattr(native_jax, "set_execution_stream_id", None)
#: How often the waiting main thread returns to Python (where signal handlers run).
_POLL_S = 0.1


class _Job:
    __slots__ = ("fn", "args", "stream", "done", "result", "error")

    def __init__(self, fn: Any, args: tuple[Any, ...]):
        self.fn, self.args = fn, args
        self.stream = _GET_STREAM() if _GET_STREAM is not None else None
        self.done = threading.Lock()
        self.done.acquire()
        self.result: Any = None
        self.error: BaseException | None = None


class _Worker:
    def __init__(self) -> None:
        self.jobs: list[_Job] = []
        self.ready = threading.Semaphore(0)
        threading.Thread(target=self._loop, name="runtime-execute", daemon=True).start()

    def submit(self, job: _Job) -> None:
        self.jobs.append(job)
        self.ready.release()

    def _loop(self) -> None:
        while True:
            self.ready.acquire()
            job = self.jobs.pop()
            try:
                if job.stream is not None and _SET_STREAM is not None:
                    _SET_STREAM(job.stream)  # the caller's thread-local stream id
                job.result = job.fn(*job.args)
            except BaseException as err:  # handed to the caller
                job.error = err
            job.fn = job.args = None
            with _IDLE_LOCK:
                _IDLE.append(self)
            job.done.release()


def _wait(job: _Job) -> None:
    """Wait for ``job`` in Python; SIGINT raises KeyboardInterrupt here. Python's own
    SIGINT handler raises wherever the main thread is, and an exception raised inside a
    gc callback (jax registers one) is ignored ("Exception ignored in ..."): the Ctrl-C
    would be lost and the wait go on. So while it waits, a SIGINT under Python's default
    handler is only noted, and raised by this loop; any other handler is left alone."""
    previous = signal.getsignal(signal.SIGINT)
    noting = previous is signal.default_int_handler
    got: list[int] = []
    if noting:
        signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        while not job.done.acquire(timeout=_POLL_S):
            if got:
                raise KeyboardInterrupt
    finally:
        if noting:
            signal.signal(signal.SIGINT, previous)
    if got:
        raise KeyboardInterrupt


def _forget_workers() -> None:  # a forked child has none of the parent's threads
    _IDLE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def call_interruptibly(fn: Any, *args: Any) -> Any:
    """``fn(*args)``, run on a helper thread while the main thread waits in Python, so
    that SIGINT raises KeyboardInterrupt here at once; ``fn`` itself keeps running to its
    end in the background, its result dropped. Called from another thread (which never
    gets signals), ``fn`` runs inline."""
    if threading.current_thread() is not _MAIN:
        return fn(*args)
    with _IDLE_LOCK:
        worker = _IDLE.pop() if _IDLE else None
    if worker is None:
        worker = _Worker()
    job = _Job(fn, args)
    worker.submit(job)
    _wait(job)
    if job.error is not None:
        error, job.error = job.error, None
        raise error
    return job.result
