"""StableHLO -> loaded executable: ``Client.compile_and_load`` (xla_client API)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from runtime._compat import native
from runtime._nesting import check_module_nesting
from runtime._validate import bad_type, bad_value

_CALL = "compile_and_load"
#: Words of a parser's complaint; whole words, so that a target name such as
#: ``cpu_csr_sparse_dense_ffi`` in "No FFI handler registered" is not one.
_PARSER_ERROR = re.compile(r"\b(parse|parsing|expected)\b", re.IGNORECASE)
#: Errors of the compiler's own passes on a module that parsed (the HLO verifier after
#: SPMD partitioning, a RET_CHECK): the backend's failure, never the caller's input.
_COMPILER_PASS_ERROR = re.compile(r"hlo verifier|Failed after|RET_CHECK", re.IGNORECASE)


def is_parse_error(text: str) -> bool:
    """True when a compile error's ``text`` says the module did not parse or verify as
    StableHLO (the caller's input), False for an error of the compiler's own passes."""
    return bool(_PARSER_ERROR.search(text)) and not _COMPILER_PASS_ERROR.search(text)


def device_list(client: Any, executable_devices: Any, call: str = _CALL) -> Any:
    """Validate ``executable_devices`` and return it as a native ``DeviceList``."""
    if isinstance(executable_devices, native.DeviceList):
        devices = tuple(executable_devices)
    elif isinstance(executable_devices, (list, tuple)):
        devices = tuple(executable_devices)
    else:
        raise bad_type("executable_devices", "a DeviceList or a sequence of Devices",
                       executable_devices, call)
    if not devices:
        raise bad_value("executable_devices", "a non-empty DeviceList or sequence of Devices",
                        executable_devices, call,
                        f"Pass e.g. client.local_devices()[:1]; available: "
                        f"{client.native.local_devices()}.")
    for d in devices:
        if not isinstance(d, native.Device) or d.client is not client.native:
            raise bad_value("executable_devices", "Devices of this client", d, call,
                            f"Available: {client.native.local_devices()}.")
    if len(set(d.id for d in devices)) != len(devices):
        raise bad_value("executable_devices", "distinct Devices", devices, call)
    return native.DeviceList(devices)


def default_compile_options(devices: Any) -> Any:
    """CompileOptions that place partition ``i`` on ``devices[i]`` (one replica).

    jaxlib does not derive the device assignment from ``executable_devices``: left
    unset, a single-device program always runs on device 0.
    """
    opts = native.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = len(devices)
    opts.device_assignment = native.DeviceAssignment.create(
        np.array([[d.id for d in devices]], dtype=np.int64))
    if len(devices) > 1:
        opts.executable_build_options.use_spmd_partitioning = True
        opts.executable_build_options.use_shardy_partitioner = True  # jax's default
    return opts


def placement(client: Any, executable_devices: Any, compile_options: Any,
              call: str = _CALL) -> tuple[Any, Any]:
    """(DeviceList, CompileOptions) for a program on ``executable_devices``;
    ``compile_options`` None places partition ``i`` on ``executable_devices[i]``.
    Raises TypeError/ValueError naming the bad argument."""
    devices = device_list(client, executable_devices, call)
    if compile_options is None:
        return devices, default_compile_options(devices)
    if not isinstance(compile_options, native.CompileOptions):
        raise bad_type("compile_options", "a CompileOptions or None", compile_options, call)
    return devices, compile_options


def check_computation(computation: Any, call: str = _CALL) -> Any:
    """``computation`` if it is non-empty StableHLO text or bytes nested no deeper than
    ``runtime._nesting``'s limits (deeper nesting crashes jaxlib); TypeError/ValueError
    naming ``computation`` otherwise."""
    if not isinstance(computation, (str, bytes)):
        raise bad_type("computation", "StableHLO text (str) or MLIR bytecode (bytes)",
                       computation, call)
    if not computation or (isinstance(computation, str) and not computation.strip()):
        raise bad_value("computation", "a non-empty StableHLO module", computation, call)
    check_module_nesting(computation, call)
    return computation


def compile_and_load(client: Any, computation: Any, executable_devices: Any,
                     compile_options: Any = None, host_callbacks: Any = ()) -> Any:
    """See ``Client.compile_and_load``."""
    computation = check_computation(computation)
    devices, compile_options = placement(client, executable_devices, compile_options)
    callbacks = (list(host_callbacks),) if host_callbacks else ()
    try:
        return client.native.compile_and_load(computation, devices, compile_options, *callbacks)
    except native.XlaRuntimeError as err:
        text = str(err)
        if is_parse_error(text):
            raise bad_value("computation", "a valid StableHLO module", computation, _CALL,
                            f"The parser said: {text.splitlines()[0] if text else text}") from err
        raise
