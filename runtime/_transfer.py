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
    sharding = native.SingleDeviceSharding(device)
    return native.batched_device_put(
        _compat.shaped_array(host.shape, host.dtype), sharding, [host], [device],
        True, bool(force_copy), host_buffer_semantics, **_compat.device_put_kwargs())
