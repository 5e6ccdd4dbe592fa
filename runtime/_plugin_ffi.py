"""Framework FFI targets for PJRT plugin clients (LAPACK, CSR sparse), as jax does for plugins.

jax lowers linalg on CPU to custom calls (``lapack_sgetrf_ffi`` ...) and the CSR
product to ``cpu_csr_sparse_dense_ffi``; jaxlib registers their XLA FFI handlers in
its own process-wide registry, which only its built-in CPU client reads. A plugin
library carries its own copy of XLA and so its own registry: the handlers must be
registered through the plugin's PJRT FFI extension (``PJRT_FFI_Extension.
register_handler``, ``xla/pjrt/c/pjrt_c_api_ffi_extension.h``), which is what this
module does with ctypes.

Where that is impossible (no FFI extension, an extension without
``register_handler``, an argument struct of another size, an error from the
plugin) nothing is guessed: the reason is recorded per target, and
:func:`missing_target_reason` gives the failure text, which starts with
:data:`FRAMEWORK_MARKER` so that attribution can tell it from a plugin defect.
"""

from __future__ import annotations

import ctypes
import dataclasses
import re
import threading
from typing import Any

#: How a failure caused by a framework target the runtime could not register begins.
FRAMEWORK_MARKER = "framework: LAPACK FFI target not registered for plugin client"
#: ``PJRT_Extension_Type_FFI`` in ``pjrt_c_api.h``'s ``PJRT_Extension_Type`` enum.
_EXTENSION_TYPE_FFI = 5
_HANDLER_ERROR = re.compile(r"No FFI handler registered for (\S+)")
_EXPECTED_SIZE = re.compile(r"expected (\d+)")


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                           ("next", ctypes.POINTER(_ExtensionBase))]


class _Api(ctypes.Structure):
    """The head of ``PJRT_Api``: header, version, then the PJRT_Error functions."""

    _fields_ = [("struct_size", ctypes.c_size_t),
                ("extension_start", ctypes.POINTER(_ExtensionBase)),
                ("version_struct_size", ctypes.c_size_t), ("version_extension", ctypes.c_void_p),
                ("major", ctypes.c_int), ("minor", ctypes.c_int),
                ("error_destroy", ctypes.c_void_p), ("error_message", ctypes.c_void_p)]


class _FfiExtension(ctypes.Structure):
    _fields_ = [("base", _ExtensionBase), ("type_id_register", ctypes.c_void_p),
                ("user_data_add", ctypes.c_void_p), ("register_handler", ctypes.c_void_p)]


class _RegisterHandlerArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("handler", ctypes.c_void_p),
                ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_uint)]


class _ErrorArgs(ctypes.Structure):
    """``PJRT_Error_Message_Args`` (``PJRT_Error_Destroy_Args`` is its first 3 fields)."""

    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_void_p),
                ("message_size", ctypes.c_size_t)]


_CALL = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
#: PJRT's struct size: up to the end of the last field, no tail padding (52 bytes).
_ARGS_SIZE = _RegisterHandlerArgs.traits.offset + ctypes.sizeof(ctypes.c_uint)
_ERROR_DESTROY_ARGS_SIZE = 3 * ctypes.sizeof(ctypes.c_void_p)


@dataclasses.dataclass(frozen=True)
class TargetRegistration:
    """What :func:`register_framework_targets` did for one plugin: ``registered``
    target names, ``failed``: target name -> why it could not be registered, and the
    plugin's PJRT C API ``api_version`` (major, minor)."""

    plugin_name: str
    platform_name: str
    registered: tuple[str, ...]
    failed: dict[str, str]
    api_version: tuple[int, int] = (0, 0)


_lock = threading.Lock()
_done: dict[str, TargetRegistration] = {}


def _pointer(capsule: Any) -> int:
    """The pointer a PyCapsule holds. Raises TypeError for anything else."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"expected a PyCapsule, got {type(capsule).__name__}")
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
    return int(get_pointer(capsule, get_name(capsule)) or 0)


def _error_text(api: _Api, error: int) -> str:
    """The message of a ``PJRT_Error*`` (destroyed afterwards)."""
    args = _ErrorArgs(ctypes.sizeof(_ErrorArgs), None, error, None, 0)
    _CALL(api.error_message)(ctypes.addressof(args))
    text = ctypes.string_at(args.message, args.message_size).decode("utf-8", "replace") \
        if args.message else "(no message)"
    destroy = _ErrorArgs(_ERROR_DESTROY_ARGS_SIZE, None, error)
    _CALL(api.error_destroy)(ctypes.addressof(destroy))
    return text


def _ffi_extension(api: _Api) -> _FfiExtension:
    """The plugin's FFI extension; ValueError saying why there is none usable."""
    ext = api.extension_start
    while ext:
        if ext.contents.type == _EXTENSION_TYPE_FFI:
            if ext.contents.struct_size < ctypes.sizeof(_FfiExtension):
                raise ValueError(f"its PJRT FFI extension ({ext.contents.struct_size} bytes) "
                                 "predates register_handler")
            ffi = ctypes.cast(ext, ctypes.POINTER(_FfiExtension)).contents
            if not ffi.register_handler:
                raise ValueError("its PJRT FFI extension has no register_handler")
            return ffi
        ext = ext.contents.next
    raise ValueError("the plugin has no PJRT FFI extension")


def _register(api: _Api, ffi: _FfiExtension, name: str, handler: int, platform: str,
              struct_size: int) -> str | None:
    """Register one handler; None on success, else the plugin's error text."""
    target, plat = name.encode(), platform.encode()
    args = _RegisterHandlerArgs(struct_size, target, len(target), handler, plat, len(plat), 0)
    error = _CALL(ffi.register_handler)(ctypes.addressof(args))
    return _error_text(api, error) if error else None


def _check_layout(api: _Api, ffi: _FfiExtension) -> None:
    """Ask the plugin which ``PJRT_FFI_Register_Handler_Args`` size it expects (a
    1-byte struct is refused before any other field is read); ValueError unless it
    is the layout written here."""
    ours = _ARGS_SIZE
    text = _register(api, ffi, "", 0, "", 1) or ""
    match = _EXPECTED_SIZE.search(text)
    if match is None or int(match.group(1)) != ours:
        raise ValueError(f"its PJRT_FFI_Register_Handler_Args is not the {ours}-byte layout "
                         f"this runtime writes (the plugin said: {text[:200]!r})")


def framework_targets() -> list[tuple[str, Any]]:
    """(name, XLA_FFI_Handler capsule) of every jaxlib CPU kernel jax may lower to
    (LAPACK and CSR sparse; all typed FFI, api_version 1)."""
    from runtime import cpu_sparse, lapack

    return [(name, fn) for module in (lapack, cpu_sparse)
            for name, fn, api_version in module.registrations()["cpu"] if api_version == 1]


def register_framework_targets(plugin_name: str, c_api: Any,
                               platform_name: str = "Host") -> TargetRegistration:
    """Register :func:`framework_targets` with the plugin loaded as ``plugin_name``
    (its ``PJRT_Api`` capsule ``c_api``) for XLA platform ``platform_name``.

    Once per plugin and process (the plugin's registry is process-wide); later calls
    return the first result. Never raises for a plugin that cannot take them: every
    target is then in ``failed`` with the reason. Raises TypeError when ``c_api`` is
    not a capsule.
    """
    with _lock:
        if plugin_name in _done:
            return _done[plugin_name]
        api = _Api.from_address(_pointer(c_api))
        targets = framework_targets()
        registered, failed = [], {}
        try:
            ffi = _ffi_extension(api)
            _check_layout(api, ffi)
        except ValueError as err:
            failed = {name: str(err) for name, _ in targets}
        else:
            for name, fn in targets:
                error = _register(api, ffi, name, _pointer(fn), platform_name, _ARGS_SIZE)
                if error is None:
                    registered.append(name)
                else:
                    failed[name] = error
        _done[plugin_name] = TargetRegistration(plugin_name, platform_name, tuple(registered),
                                                failed, (api.major, api.minor))
        return _done[plugin_name]


def registrations() -> dict[str, TargetRegistration]:
    """Plugin name -> its :class:`TargetRegistration`, for plugins registered so far."""
    with _lock:
        return dict(_done)


def missing_target_reason(error_text: str) -> str | None:
    """For an error ``No FFI handler registered for <target> ...`` where ``<target>``
    is a framework target of a plugin client: the failure text (starting with
    :data:`FRAMEWORK_MARKER`, then the plugin and why). That covers a target the
    plugin refused, and one it accepted without error but does not find (seen with
    xla-cpu-pjrt, C API 0.81: its ``register_handler`` drops the error of XLA's
    ``XLA_FFI_Handler_Register``, so a handler it cannot keep looks registered).
    None for any other error or target."""
    if not isinstance(error_text, str):
        raise TypeError(f"missing_target_reason: argument 'error_text' must be a str, got "
                        f"{type(error_text).__name__}")
    match = _HANDLER_ERROR.search(error_text)
    if match is None:
        return None
    target = match.group(1)
    for reg in registrations().values():
        version = ".".join(map(str, reg.api_version))
        if target in reg.failed:
            return (f"{FRAMEWORK_MARKER}: {target} could not be registered with plugin "
                    f"{reg.plugin_name!r} (PJRT C API {version}): {reg.failed[target]}")
        if target in reg.registered:
            return (f"{FRAMEWORK_MARKER}: {target} was registered with plugin "
                    f"{reg.plugin_name!r} (PJRT C API {version}) without error, but the "
                    "plugin does not find it: its FFI registry did not keep jaxlib's handler")
    return None
