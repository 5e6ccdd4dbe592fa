"""Host -> device transfer of one array: ``Client.buffer_from_pyval`` (seed 003).

Recent jaxlib dropped ``Client.buffer_from_pyval``; it is rebuilt here on
``batched_device_put`` with a ``SingleDeviceSharding``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import _compat, _dtypes
from runtime._compat import native
from runtime._validate import bad_type, bad_value

_CALL = "buffer_from_pyval"


def host_array(argument: Any) -> np.ndarray:
    """Convert ``argument`` to a numpy array without changing the caller's data.

    Raises TypeError for object/string arrays and dtypes XLA cannot hold, and
    ValueError for deleted device arrays.
    """
    if isinstance(argument, native.ArrayImpl):
        if argument.is_deleted():
            raise bad_value("argument", "a live array", "<deleted array>", _CALL,
                            "The array was deleted or donated; keep a clone() instead.")
    if isinstance(argument, (str, bytes)):
        raise bad_type("argument", "a numeric array, scalar or nested list", argument, _CALL)
    try:
        host = np.asarray(argument)
    except (ValueError, TypeError) as err:  # ragged lists and the like
        raise bad_type("argument", "a numeric array, scalar or nested list", argument,
                       _CALL) from err
    if not _dtypes.is_supported_dtype(host.dtype):
        raise bad_type(
            "argument",
            f"an array of an XLA element type ({', '.join(_dtypes.supported_dtype_names())})",
            host, _CALL)
    return host


#: Arrays at least this large are staged (smaller ones gain nothing measurable).
STAGE_MIN_BYTES = 1 << 20
_SUBBYTE = {"int4", "uint4", "int2", "uint2", "float4_e2m1fn"}


def staged_copy(host: np.ndarray) -> np.ndarray:
    """A copy of ``host`` in a new 64-byte aligned buffer (C order)."""
    raw = np.empty(host.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + host.nbytes].view(host.dtype).reshape(host.shape)
    np.copyto(out, host)
    return out


def _stage_on_cpu(native_client: Any, host: np.ndarray, force_copy: Any,
                  semantics: Any) -> bool:
    """Whether a copying transfer to jaxlib's built-in CPU client should be staged.

    jaxlib 0.10's CPU client copies a host array twice on the copying paths
    (IMMUTABLE_ONLY_DURING_CALL, IMMUTABLE_UNTIL_TRANSFER_COMPLETES, force_copy):
    about 2.2x numpy's allocate+copy for 64 MiB (benchmarks/bench_transfer.py).
    Its ZERO_COPY path aliases a 64-byte aligned array, so one private copy
    followed by ZERO_COPY keeps the semantics (the caller's array is read only
    during the call) at the cost of one copy. Plugins (PJRT C API) and sub-byte
    dtypes keep jaxlib's own path.
    """
    copying = bool(force_copy) or semantics != native.HostBufferSemantics.ZERO_COPY
    return (copying and host.nbytes >= STAGE_MIN_BYTES and native_client.platform == "cpu"
            and "PJRT C API" not in native_client.platform_version
            and host.dtype.name not in _SUBBYTE)


def buffer_from_pyval(client: Any, argument: Any, device: Any = None, force_copy: bool = False,
                      host_buffer_semantics: Any = None) -> Any:
    """Copy ``argument`` to ``device`` of ``client``; see ``Client.buffer_from_pyval``."""
    native_client = client.native
    if device is None:
        device = native_client.local_devices()[0]
    elif not isinstance(device, native.Device):
        raise bad_type("device", "a Device of this client or None", device, _CALL)
    elif device.client is not native_client:
        raise bad_value("device", f"a Device of this {native_client.platform} client", device,
                        _CALL, f"Available: {native_client.local_devices()}.")
    if host_buffer_semantics is None:
        host_buffer_semantics = native.HostBufferSemantics.ZERO_COPY
    elif not isinstance(host_buffer_semantics, native.HostBufferSemantics):
        raise bad_type("host_buffer_semantics", "a HostBufferSemantics", host_buffer_semantics,
                       _CALL)
    host = host_array(argument)
    if _stage_on_cpu(native_client, host, force_copy, host_buffer_semantics):
        # One copy into a private, 64-byte aligned buffer that the device array then
        # aliases: half the time of jaxlib's copying path, the same semantics.
        host, force_copy = staged_copy(host), False
        host_buffer_semantics = native.HostBufferSemantics.ZERO_COPY
    sharding = native.SingleDeviceSharding(device)
    return native.batched_device_put(
        _compat.shaped_array(host.shape, host.dtype), sharding, [host], [device],
        True, bool(force_copy), host_buffer_semantics, **_compat.device_put_kwargs())
