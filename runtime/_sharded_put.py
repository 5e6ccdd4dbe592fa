"""``batched_device_put`` with its shards checked (the array API).

jaxlib 0.10.2 accepts host shards whose dtype differs from the abstract value's
(the array then reports the aval's dtype while its buffers hold another type: a
silent wrong answer) and a 1-element shard for a 0-d value. Each shard is
checked against the aval's dtype and the sharding's shard shape first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import _compat
from runtime._compat import native
from runtime._validate import bad_type, bad_value

_CALL = "batched_device_put"


def batched_device_put(aval: Any, sharding: Any, xs: Sequence[Any], devices: Sequence[Any],
                       committed: bool = True, force_copy: bool = False,
                       host_buffer_semantics: Any = None, **kwargs: Any) -> Any:
    """One array of abstract value ``aval`` (shape, dtype) from per-device host shards.

    ``xs[i]`` is the shard for ``devices[i]``: a host array of ``aval.dtype`` with
    shape ``sharding.shard_shape(aval.shape)``. ``committed``: the array is bound
    to its devices; ``force_copy``: never alias host memory. Raises TypeError
    or ValueError naming ``xs[i]``/``devices`` for a count, dtype or shape that
    does not fit, before anything is transferred.
    """
    if len(xs) != len(devices):
        raise bad_value("xs", f"one shard per device ({len(devices)})", f"{len(xs)} shards",
                        _CALL)
    want_dtype = np.dtype(aval.dtype)
    shard_shape = tuple(sharding.shard_shape(tuple(aval.shape)))
    for i, x in enumerate(xs):
        if isinstance(x, native.ArrayImpl):
            continue  # device arrays are checked by jaxlib
        host = np.asarray(x)
        if host.dtype != want_dtype:
            raise bad_type(f"xs[{i}]", f"a {want_dtype} array (aval.dtype)", host, _CALL)
        if host.shape != shard_shape:
            raise bad_value(f"xs[{i}]", f"shape {shard_shape} (the shard shape of "
                                        f"{tuple(aval.shape)} under the sharding)", host, _CALL)
    if host_buffer_semantics is None:
        host_buffer_semantics = native.HostBufferSemantics.ZERO_COPY
    kwargs = {**_compat.device_put_kwargs(), **kwargs}
    return native.batched_device_put(aval, sharding, list(xs), list(devices), committed,
                                     force_copy, host_buffer_semantics, **kwargs)
