"""``execute`` without the per-call Python work of jaxlib's ``LoadedExecutable.execute``.

jaxlib's ``execute`` is Python (``jaxlib/xla_client.py``): ``execute_sharded``
then ``disassemble_into_single_device_arrays``, which calls back into jax's Python
``make_single_device_sharding`` for every output. ``jax.jit`` instead hands the
results to C++ ``ResultHandler`` objects built once per executable. ``FastExecute``
does the same: on the first call it learns each output's aval and sharding through
the ordinary path, then builds one result handler per output
(``runtime._compat.result_handler``) and uses
``execute_sharded(...).consume_with_handlers`` from then on (docs/dispatch.md).
It is what ``runtime``'s ``LoadedExecutable.execute`` runs
(:mod:`runtime._loaded_executable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import _compat, _execute_guard
from runtime._compat import native
from runtime._validate import bad_type

_UNKNOWN = object()

#: ``ArrayImpl.is_deleted`` unbound: ``map`` calls it with no Python frame per argument
#: (1000 arguments: 40 us, where a ``for`` loop calling ``a.is_deleted()`` took 90 us,
#: which had made ``execute`` 1.3-1.45x slower at 100-1000 arguments; docs/dispatch.md).
#: A non-array raises TypeError (the descriptor refuses it): the full check names it.
_IS_DELETED = native.ArrayImpl.is_deleted


def _live(arguments: Any) -> bool:
    """True when every item of ``arguments`` is a live ``ArrayImpl``; False for a deleted
    one; TypeError for a non-array, or for ``arguments`` that cannot be iterated."""
    return not any(map(_IS_DELETED, arguments))


class FastExecute:
    """A callable ``f(arguments) -> list of arrays``, the results of
    ``executable.execute(arguments)`` (same values, shapes, dtypes, shardings,
    committedness); ``f.execute(arguments)`` is the same call.

    ``executable``: a jaxlib ``LoadedExecutable`` (``Client.compile_and_load``).
    Executables over more than one device keep jaxlib's ``execute`` (the fast path
    builds single-device handlers only). Raises TypeError naming ``executable`` for
    an object without ``execute_sharded``.

    Arguments are checked before jaxlib sees them (:mod:`runtime._execute_guard`):
    TypeError naming ``arguments`` when their count is not the program's parameter
    count (jaxlib 0.10.2 crashed on that over several devices) or one is not an array,
    ValueError naming ``arguments[i]`` for a deleted (or donated) array or an array of
    another client. Executables over several devices get every check before each call;
    on one device (the fast path) the count and liveness are checked before each call and
    the client only when jaxlib refuses the call (it does, without crashing, there). Programs that may run without end (a ``while`` loop,
    infeed/recv, a host callback) run on a helper thread, so that Ctrl-C raises
    KeyboardInterrupt at once; the program keeps running in the background until it
    ends, and its results are dropped.
    """

    def __init__(self, executable: Any):
        if not callable(getattr(executable, "execute_sharded", None)):
            raise bad_type("executable", "a LoadedExecutable", executable, "FastExecute")
        self.executable = executable
        self.handlers: list[Any] | None = None
        self.single_device = len(executable.local_devices()) == 1
        self._execute_sharded = executable.execute_sharded  # bound once, not per call
        self._num_parameters: Any = _UNKNOWN  # read from the program on the first call
        self._may_not_end = False

    def _learn_program(self) -> None:
        if self._num_parameters is _UNKNOWN:
            self._num_parameters, self._may_not_end = \
                _execute_guard.program_facts(self.executable)

    def _check(self, call: str, arguments: Any, live: bool = True) -> None:
        self._learn_program()
        _execute_guard.check_arguments(call, arguments, self._num_parameters,
                                       self.executable.client, live)

    def _cheap_checks_pass(self, arguments: Any) -> bool:
        """Count and liveness (what a single-device call must check before jaxlib)."""
        try:
            if len(arguments) != self._num_parameters and self._num_parameters is not None:
                return False
            return _live(arguments)
        except Exception:  # no len(), not an array...
            return False

    def _call(self, call: str, fn: Any, arguments: Any, *rest: Any) -> Any:
        """``fn(arguments, *rest)``, checked as ``execute`` is (see the class)."""
        self._learn_program()
        if not self.single_device or not self._cheap_checks_pass(arguments):
            self._check(call, arguments)  # the full check (jaxlib crashed on these)
        try:
            if self._may_not_end:
                return _execute_guard.call_interruptibly(fn, arguments, *rest)
            return fn(arguments, *rest)
        except (native.XlaRuntimeError, TypeError, ValueError) as err:
            try:  # jaxlib refused the call: say which argument, if one is the cause
                self._check(call, arguments, live=False)
            except (TypeError, ValueError) as clear:
                raise clear from err
            raise

    def execute(self, arguments: Sequence[Any], device: Any = None) -> list[Any]:
        """The executable's outputs for ``arguments`` (one array per parameter of the
        program), one array per output; ``device`` is ignored, as jaxlib does. Raises
        TypeError/ValueError naming ``arguments`` or ``arguments[i]`` (see the class)."""
        handlers = self.handlers
        if handlers is not None:  # the fast path: _call, inlined
            try:  # the cheap checks: count and liveness
                ok = (len(arguments) == self._num_parameters
                      or self._num_parameters is None) and _live(arguments)
            except Exception:  # no len(), not an array...
                ok = False
            if not ok:
                self._check("execute", arguments)
            try:
                if self._may_not_end:
                    results = _execute_guard.call_interruptibly(self._execute_sharded,
                                                                arguments)
                else:
                    results = self._execute_sharded(arguments)
            except (native.XlaRuntimeError, TypeError, ValueError) as err:
                try:  # jaxlib refused the call: say which argument, if one is the cause
                    self._check("execute", arguments, live=False)
                except (TypeError, ValueError) as clear:
                    raise clear from err
                raise
            return results.consume_with_handlers(handlers)
        outputs = self._call("execute", self.executable.execute, arguments)
        if self.single_device:
            self.handlers = [
                _compat.result_handler(_compat.shaped_array(x.shape, x.dtype),
                                       x.sharding, x.committed)
                for x in outputs]
        return outputs

    __call__ = execute
