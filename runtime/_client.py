"""``Client``: the xla_client API's client over a native jaxlib PJRT client.

jaxlib's native ``Client`` no longer has ``buffer_from_pyval`` and does not derive
a device assignment from ``executable_devices``. ``Client`` adds both and
delegates everything else (``live_arrays``, ``heap_profile``, ...) unchanged.
Devices and arrays stay native objects, so they work with every native function.
"""

from __future__ import annotations

from typing import Any

from runtime import _compile, _custom_calls, _executables, _loaded_executable, _transfer
from runtime._compat import native


class Client:
    """A PJRT client (``xla_client.Client``).

    Attributes ``platform``, ``platform_version`` and ``runtime_type`` are strings
    read from the native client. ``native`` is the wrapped jaxlib client; a
    ``Device``'s ``client`` attribute is that native client, and
    ``device.client == client`` holds for this wrapper too.
    """

    def __init__(self, native_client: Any):
        if not isinstance(native_client, native.Client):
            raise TypeError(f"Client: argument 'native_client' must be a jaxlib Client, "
                            f"got {type(native_client).__name__}")
        self._native = native_client
        if native_client.platform == "cpu":  # LAPACK and sparse custom calls, as jax does
            _custom_calls.register_cpu_kernels()

    @property
    def native(self) -> Any:
        return self._native

    @property
    def platform(self) -> str:
        return self._native.platform

    @property
    def platform_version(self) -> str:
        return self._native.platform_version

    @property
    def runtime_type(self) -> str:
        return self._native.runtime_type

    def devices(self) -> list[Any]:
        """All devices of the client, across processes."""
        return list(self._native.devices())

    def local_devices(self) -> list[Any]:
        """Devices addressable from this process."""
        return list(self._native.local_devices())

    def device_count(self) -> int:
        return self._native.device_count()

    def local_device_count(self) -> int:
        return self._native.local_device_count()

    def process_index(self) -> int:
        return self._native.process_index()

    def host_id(self) -> int:
        return self._native.host_id()

    def buffer_from_pyval(self, argument: Any, device: Any = None, force_copy: bool = False,
                          host_buffer_semantics: Any = None) -> Any:
        """Copy a host value to one device and return a single-device ``ArrayImpl``.

        ``xla_client.Client.buffer_from_pyval``. ``argument``: numpy array, numpy or
        Python scalar, or nested list, of any XLA element type (bool, int4..int64,
        uint4..uint64, float8 variants, bfloat16, float16..float64, complex64/128);
        the dtype is kept exactly (no 64->32 bit canonicalization). ``device``:
        a device of this client, default ``local_devices()[0]``.
        ``host_buffer_semantics`` defaults to ``HostBufferSemantics.ZERO_COPY``,
        under which the device array may alias the host memory.

        Raises TypeError for object/string data, unsupported dtypes or a wrong
        argument type; ValueError for a deleted array or a device of another
        client. The caller's array is never modified.
        """
        return _transfer.buffer_from_pyval(self, argument, device, force_copy,
                                           host_buffer_semantics)

    def compile_and_load(self, computation: Any, executable_devices: Any,
                         compile_options: Any = None, host_callbacks: Any = ()) -> Any:
        """Compile StableHLO and load it onto ``executable_devices``.

        ``xla_client.Client.compile_and_load``. ``computation``: StableHLO text
        (str) or MLIR bytecode (bytes). ``executable_devices``: a non-empty
        ``DeviceList`` or sequence of this client's devices; partition ``i`` runs
        on ``executable_devices[i]`` unless ``compile_options`` sets its own
        device assignment. Returns a ``runtime.xla_client.LoadedExecutable`` (the
        native one, its ``execute(arguments)`` on jaxlib's C++ result handlers after
        the first call, docs/dispatch.md) whose ``execute(arguments)`` returns a list
        of arrays.

        Raises TypeError/ValueError naming the bad argument (malformed StableHLO
        included) and ``XlaRuntimeError`` for backend compile failures. StableHLO text
        nested deeper than jaxlib survives is a ValueError naming ``computation``:
        ``{`` (module, functions, regions) over 64 deep, ``<`` (tuple types) over 64 deep,
        brackets of any kind over 1024 deep (``runtime._nesting``; bytecode not checked).
        """
        return _loaded_executable.wrap(_compile.compile_and_load(
            self, computation, executable_devices, compile_options, host_callbacks))

    def compile(self, computation: Any, executable_devices: Any,
                compile_options: Any = None) -> _executables.Executable:
        """Compile StableHLO without loading it (``xla_client.Client.compile``).

        Arguments as for ``compile_and_load``. Returns an ``Executable`` with the
        compiled program's metadata and ``serialize()``; see
        ``runtime._executables`` for backends without compile-only support.
        Raises TypeError/ValueError naming the bad argument (the nesting limits of
        ``compile_and_load`` included).
        """
        return _executables.compile(self, computation, executable_devices, compile_options)

    def serialize_executable(self, executable: Any) -> bytes:
        """Bytes of a ``LoadedExecutable`` (or ``Executable``) for
        ``deserialize_executable`` on a client of the same platform and jaxlib."""
        return _executables.serialize_executable(self, _loaded_executable.unwrap(executable))

    def deserialize_executable(self, serialized: Any, executable_devices: Any,
                               compile_options: Any = None, host_callbacks: Any = ()) -> Any:
        """Load an executable from ``serialize_executable`` bytes onto
        ``executable_devices`` (a ``DeviceList`` or sequence of this client's
        devices). Returns a ``LoadedExecutable`` (as ``compile_and_load``). Raises TypeError
        for non-bytes and ValueError for empty or corrupt bytes, naming ``serialized``.
        Never pass untrusted bytes: loading an executable may run its code.
        """
        return _loaded_executable.wrap(_executables.deserialize_executable(
            self, serialized, executable_devices, compile_options, host_callbacks))

    def live_buffers(self) -> list[Any]:
        """Device buffers alive in this client: one entry per
        single-device buffer, so a sharded array counts once per shard."""
        return list(self._native.live_buffers())

    def live_arrays(self) -> list[Any]:
        """Arrays (``ArrayImpl``) alive and not deleted in this client."""
        return list(self._native.live_arrays())

    def live_executables(self) -> list[Any]:
        """``LoadedExecutable``s alive in this client: the objects
        ``compile_and_load`` returned while they live, native ones otherwise."""
        return [_loaded_executable.as_listed(x) for x in self._native.live_executables()]

    def heap_profile(self) -> bytes:
        """A serialized pprof ``Profile`` protobuf (bytes, not compressed) of the
        live device buffers."""
        return self._native.heap_profile()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_native":
            raise AttributeError(name)
        return getattr(self._native, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Client):
            return self._native is other._native
        return other is self._native

    def __hash__(self) -> int:
        return hash(self._native)

    def __repr__(self) -> str:
        return (f"Client(platform={self.platform!r}, "
                f"devices={self.local_device_count()}/{self.device_count()})")
