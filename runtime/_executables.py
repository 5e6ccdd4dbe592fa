"""Unloaded compilation and executable serialization (``xla_client.Client``).

``Client.compile`` returns an :class:`Executable`: the compiled program with
its metadata (``hlo_modules``, ``cost_analysis``, ``get_compiled_memory_stats``,
output shardings, memory kinds and layouts, ``serialize``) but nothing to run.
jaxlib 0.10's CPU client has no compile-only path (``NOT_FOUND: No compiler
factory for platform: cpu``); there the program is compiled and loaded and the
``Executable`` reads the loaded program's metadata, which is the same compiled
module.
"""

from __future__ import annotations

from typing import Any

from runtime import _compat, _compile
from runtime._compat import native
from runtime._validate import bad_type, bad_value

_METADATA = ("cost_analysis", "get_compiled_memory_stats", "get_output_layouts",
             "get_output_memory_kinds", "get_output_shardings", "get_parameter_layouts",
             "get_parameter_shardings", "hlo_modules", "serialize")


class Executable:
    """A compiled, unloaded program (``xla_client.Executable``, from ``Client.compile``).

    Methods: ``hlo_modules()``, ``cost_analysis()`` (dict of floats: ``flops``,
    ``bytes accessed``...), ``get_compiled_memory_stats()`` (sizes in bytes),
    ``get_output_memory_kinds()``, ``get_output_shardings()``,
    ``get_parameter_shardings()``, the layouts, and ``serialize()`` (bytes that
    ``Client.deserialize_executable`` loads). ``native`` is the jaxlib object
    (an ``Executable``, or the ``LoadedExecutable`` on backends without
    compile-only support, see the module docstring). ``loaded`` says which.
    """

    def __init__(self, native_executable: Any):
        if not isinstance(native_executable, (native.Executable, native.LoadedExecutable)):
            raise bad_type("native_executable", "a jaxlib Executable or LoadedExecutable",
                           native_executable, "Executable")
        self._native = native_executable

    @property
    def native(self) -> Any:
        return self._native

    @property
    def loaded(self) -> bool:
        """True when the program was loaded to devices because the backend cannot
        compile without loading."""
        return isinstance(self._native, native.LoadedExecutable)

    def __getattr__(self, name: str) -> Any:
        if name in _METADATA:
            return getattr(self._native, name)
        raise AttributeError(f"Executable has no attribute {name!r}: an unloaded executable "
                             f"has {', '.join(_METADATA)}; load it with "
                             f"Client.deserialize_executable(executable.serialize(), ...) "
                             f"to run it")

    def __repr__(self) -> str:
        return f"Executable({'loaded' if self.loaded else 'unloaded'})"


def compile(client: Any, computation: Any, executable_devices: Any,
            compile_options: Any = None) -> Executable:
    """See ``Client.compile``."""
    call = "compile"
    computation = _compile.check_computation(computation, call)
    devices, compile_options = _compile.placement(client, executable_devices, compile_options,
                                                  call)
    try:
        module = _compat.parse_stablehlo(computation)
    except Exception as err:  # MLIR raises its own error types
        raise bad_value("computation", "a valid StableHLO module", computation, call,
                        f"The parser said: {str(err).splitlines()[0] if str(err) else err}"
                        ) from err
    try:
        return Executable(client.native.compile(module, devices, compile_options))
    except native.XlaRuntimeError as err:
        if "No compiler factory" not in str(err):
            raise
    return Executable(_compile.compile_and_load(client, computation, devices, compile_options))


def serialize_executable(client: Any, executable: Any) -> bytes:
    """See ``Client.serialize_executable``."""
    if isinstance(executable, Executable):
        return executable.serialize()
    if not isinstance(executable, native.LoadedExecutable):
        raise bad_type("executable", "a LoadedExecutable or Executable", executable,
                       "serialize_executable")
    return client.native.serialize_executable(executable)


def deserialize_executable(client: Any, serialized: Any, executable_devices: Any,
                           compile_options: Any = None, host_callbacks: Any = ()) -> Any:
    """See ``Client.deserialize_executable``."""
    call = "deserialize_executable"
    if not isinstance(serialized, (bytes, bytearray, memoryview)):
        raise bad_type("serialized", "bytes from serialize_executable", serialized, call)
    serialized = bytes(serialized)
    if not serialized:
        raise bad_value("serialized", "non-empty bytes from serialize_executable", serialized,
                        call)
    # Partition i goes on executable_devices[i] unless compile_options say otherwise.
    devices, compile_options = _compile.placement(client, executable_devices, compile_options,
                                                  call)
    callbacks = (list(host_callbacks),) if host_callbacks else ()
    try:
        return client.native.deserialize_executable(serialized, devices, compile_options,
                                                    *callbacks)
    except native.XlaRuntimeError as err:
        text = str(err)
        if "INVALID_ARGUMENT" in text or "deserializ" in text.lower() or "parse" in text.lower():
            raise bad_value("serialized", f"an executable serialized by a "
                            f"{client.platform} client of this jaxlib", f"{len(serialized)} bytes",
                            call, f"The backend said: {text.splitlines()[0]}") from err
        raise
