"""Host -> device transfer of one array: ``Client.buffer_from_pyval`` (xla_client API).

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


#: jaxlib's CPU client aliases a ZERO_COPY host array only at this alignment (bytes).
ALIAS_ALIGNMENT = 64


def aliasable(host: np.ndarray) -> bool:
    """Whether jaxlib's CPU client can alias ``host`` (ZERO_COPY without a copy).

    It can when the data is C-contiguous and starts on a ``ALIAS_ALIGNMENT``-byte
    boundary; numpy places large arrays 16 bytes past a page boundary, so most are not.
    """
    return host.flags.c_contiguous and host.ctypes.data % ALIAS_ALIGNMENT == 0


#: Bytes per ``np.copyto`` in :func:`staged_copy`: one copy of 256 MiB into a fresh
#: buffer ran at 0.3x numpy allocate+copy on a 2-core EPYC; 1-16 MiB pieces at 1.0x
#: (docs/transfers.md).
STAGE_CHUNK_BYTES = 4 << 20


def staged_copy(host: np.ndarray) -> np.ndarray:
    """A copy of ``host`` (any shape and dtype) in a new 64-byte aligned C-order buffer.

    The copy runs in ``STAGE_CHUNK_BYTES`` pieces when ``host`` is C-contiguous.
    """
    raw = np.empty(host.nbytes + ALIAS_ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIAS_ALIGNMENT
    out = raw[start:start + host.nbytes].view(host.dtype).reshape(host.shape)
    if not host.flags.c_contiguous or host.nbytes <= STAGE_CHUNK_BYTES:
        np.copyto(out, host)
        return out
    flat_out, flat_in = out.reshape(-1), host.reshape(-1)
    step = max(1, STAGE_CHUNK_BYTES // host.itemsize)
    for i in range(0, flat_in.size, step):
        np.copyto(flat_out[i:i + step], flat_in[i:i + step])
    return out


def _stage_on_cpu(native_client: Any, host: np.ndarray, force_copy: Any,
                  semantics: Any) -> bool:
    """Whether a transfer to jaxlib's built-in CPU client should be staged.

    jaxlib 0.10's CPU client copies a host array twice on the copying paths
    (IMMUTABLE_ONLY_DURING_CALL, IMMUTABLE_UNTIL_TRANSFER_COMPLETES, force_copy),
    and a ZERO_COPY request on an array it cannot alias (see :func:`aliasable`)
    takes a slower copy still: 0.24-0.46x numpy's allocate+copy at 64-256 MiB
    (docs/transfers.md). Its ZERO_COPY path aliases a 64-byte aligned array, so
    one private copy followed by ZERO_COPY costs one copy and keeps the semantics:
    the caller's array is read only during the call and never aliased (jaxlib
    would not have aliased it either). An aliasable ZERO_COPY request is left to
    jaxlib (no copy). Plugins (PJRT C API) and sub-byte dtypes keep jaxlib's own path.
    """
    zero_copy = semantics == native.HostBufferSemantics.ZERO_COPY
    if zero_copy and not force_copy and aliasable(host):
        return False
    return (host.nbytes >= STAGE_MIN_BYTES and native_client.platform == "cpu"
            and not _compat.is_c_api_client(native_client)
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
