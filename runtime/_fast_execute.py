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

from runtime import _compat
from runtime._validate import bad_type


class FastExecute:
    """A callable ``f(arguments) -> list of arrays``, the results of
    ``executable.execute(arguments)`` (same values, shapes, dtypes, shardings,
    committedness); ``f.execute(arguments)`` is the same call.

    ``executable``: a jaxlib ``LoadedExecutable`` (``Client.compile_and_load``).
    Executables over more than one device keep jaxlib's ``execute`` (the fast path
    builds single-device handlers only). Raises TypeError naming ``executable`` for
    an object without ``execute_sharded``.
    """

    def __init__(self, executable: Any):
        if not callable(getattr(executable, "execute_sharded", None)):
            raise bad_type("executable", "a LoadedExecutable", executable, "FastExecute")
        self.executable = executable
        self.handlers: list[Any] | None = None
        self.single_device = len(executable.local_devices()) == 1
        self._execute_sharded = executable.execute_sharded  # bound once, not per call

    def execute(self, arguments: Sequence[Any], device: Any = None) -> list[Any]:
        """The executable's outputs for ``arguments`` (one array per argument of the
        program), one array per output; ``device`` is ignored, as jaxlib does."""
        handlers = self.handlers
        if handlers is not None:
            return self._execute_sharded(arguments).consume_with_handlers(handlers)
        outputs = self.executable.execute(arguments)
        if self.single_device:
            self.handlers = [
                _compat.result_handler(_compat.shaped_array(x.shape, x.dtype),
                                       x.sharding, x.committed)
                for x in outputs]
        return outputs

    __call__ = execute
