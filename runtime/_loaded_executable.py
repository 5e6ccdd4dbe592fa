"""``LoadedExecutable``: what ``Client.compile_and_load`` and ``deserialize_executable``
return (``xla_client.LoadedExecutable``).

A jaxlib ``LoadedExecutable`` whose ``execute`` takes the fast path of
:mod:`runtime._fast_execute` (C++ result handlers after the first call; about
``jax.jit``'s dispatch cost, docs/dispatch.md). Everything else (``execute_sharded``,
``hlo_modules``, ``cost_analysis``, ``client``, ...) is the native executable's,
unchanged; ``native`` is that object, and ``exe.native.execute(arguments)`` is
jaxlib's own (Python) ``execute``.
"""

from __future__ import annotations

import weakref
from typing import Any

from runtime._compat import native
from runtime._fast_execute import FastExecute
from runtime._validate import bad_type

#: id(native executable) -> its live wrapper. A wrapper keeps its native executable
#: alive, so an id here is never reused while its entry exists.
_WRAPPERS: weakref.WeakValueDictionary[int, LoadedExecutable] = weakref.WeakValueDictionary()


class LoadedExecutable(FastExecute):
    """A loaded executable (``xla_client.LoadedExecutable``): ``execute(arguments)``
    returns a list of arrays, one per output, as jaxlib's does.

    ``native_executable``: a jaxlib ``LoadedExecutable``; raises TypeError naming it
    for anything else. Compares equal to (and hashes as) its native executable.
    """

    def __init__(self, native_executable: Any):
        if not isinstance(native_executable, native.LoadedExecutable):
            raise bad_type("native_executable", "a jaxlib LoadedExecutable",
                           native_executable, "LoadedExecutable")
        super().__init__(native_executable)

    @property
    def native(self) -> Any:
        return self.executable

    # The members the xla_client API documents, named here so that they are the class's
    # (others: __getattr__).
    @property
    def client(self) -> Any:
        """The jaxlib client the executable is loaded on (as jaxlib's)."""
        return self.executable.client

    def execute_sharded(self, arguments: Any, with_tokens: bool = False) -> Any:
        """jaxlib's ``execute_sharded``: an ``ExecuteResults`` of one array per device.

        ``arguments``: one array per parameter of the program, each of this client and
        not deleted; raises TypeError naming ``arguments`` (count, non-arrays) and
        ValueError naming ``arguments[i]`` (deleted, another client's), checked as
        ``execute`` checks them. Programs that may run without end run so that Ctrl-C
        interrupts the wait (see ``execute``)."""
        return self._call("execute_sharded", self._execute_sharded, arguments, with_tokens)

    def hlo_modules(self) -> list[Any]:
        """The compiled ``HloModule``s."""
        return self.executable.hlo_modules()

    def get_output_memory_kinds(self) -> list[list[str]]:
        """Memory kind of each output, per program."""
        return self.executable.get_output_memory_kinds()

    def get_compiled_memory_stats(self) -> Any:
        """``CompiledMemoryStats`` (sizes in bytes) of the compiled program."""
        return self.executable.get_compiled_memory_stats()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("executable", "handlers", "single_device",
                                             "_execute_sharded", "_num_parameters",
                                             "_may_not_end"):
            raise AttributeError(name)
        return getattr(self.executable, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LoadedExecutable):
            return self.executable is other.executable
        return other is self.executable

    def __hash__(self) -> int:
        return hash(self.executable)

    def __repr__(self) -> str:
        return f"LoadedExecutable({self.executable!r})"


def wrap(native_executable: Any) -> LoadedExecutable:
    """The one ``LoadedExecutable`` of ``native_executable`` (made on first use)."""
    wrapper = _WRAPPERS.get(id(native_executable))
    if wrapper is None or wrapper.executable is not native_executable:
        wrapper = LoadedExecutable(native_executable)
        _WRAPPERS[id(native_executable)] = wrapper
    return wrapper


def unwrap(executable: Any) -> Any:
    """The jaxlib executable of a ``LoadedExecutable``; anything else unchanged."""
    return executable.executable if isinstance(executable, LoadedExecutable) else executable


def as_listed(native_executable: Any) -> Any:
    """``native_executable``'s live wrapper if one exists, else the native object
    (for ``Client.live_executables``, so that ``id(exe)`` of a loaded program is listed)."""
    wrapper = _WRAPPERS.get(id(native_executable))
    return wrapper if wrapper is not None and wrapper.executable is native_executable \
        else native_executable
