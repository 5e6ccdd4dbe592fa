"""``reorder_shards`` and ``batched_copy_array_to_devices_with_sharding``, checked (the array API).

jaxlib moves shard *k* of the input to the *k*-th device of the destination
and then labels the result with the destination sharding, without checking
that this sharding puts shard *k*'s index on that device. A destination that
disagrees gives an array whose shards hold the wrong slices, silently. Both
functions here check that first and raise ValueError naming the argument.

``reorder_shards`` with ``ALWAYS_COPY`` is rejected by jaxlib 0.10.2
("Invalid ArrayCopySemantics: 0"); here it is a reorder that reuses the input's
buffers followed by a copy into new buffers, so the result never aliases the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import _compat
from runtime._compat import native
from runtime._validate import bad_type, bad_value


def _check_array(call: str, arg: str, x: Any) -> None:
    if not isinstance(x, native.ArrayImpl):
        raise bad_type(arg, "a jaxlib Array", x, call)
    if x.is_deleted():
        raise bad_value(arg, "a live array", "<deleted array>", call,
                        "It was deleted or donated; keep a copy (ALWAYS_COPY) instead.")


def _check_semantics(call: str, arg: str, value: Any) -> None:
    if not isinstance(value, native.ArrayCopySemantics):
        raise bad_type(arg, "an ArrayCopySemantics (ALWAYS_COPY, REUSE_INPUT, DONATE_INPUT)",
                       value, call)


def _positional_mismatch(x: Any, devices: Sequence[Any], sharding: Any) -> str | None:
    """Why moving shard k of ``x`` to ``devices[k]`` under ``sharding`` would misplace data."""
    src = x.sharding.devices_indices_map(x.shape)
    dst = sharding.devices_indices_map(x.shape)
    for k, (src_device, dst_device) in enumerate(zip(_compat.device_assignment_of(x.sharding),
                                                     devices)):
        if dst_device not in dst:
            return f"device {dst_device} is not in the sharding"
        if src[src_device] != dst[dst_device]:
            return (f"shard {k} ({src_device}, index {src[src_device]}) would land on "
                    f"{dst_device}, where the sharding expects index {dst[dst_device]}")
    return None


def reorder_shards(x: Any, dst_sharding: Any, array_copy_semantics: Any) -> Any:
    """``x`` with its shards in the device order of ``dst_sharding`` (array API).

    No data moves between devices: every device keeps the shard index it holds,
    so ``dst_sharding`` must be over the same devices and give each of them the
    same index (otherwise ValueError naming ``dst_sharding``). ``REUSE_INPUT``
    may share buffers with ``x``; ``ALWAYS_COPY`` never does; ``DONATE_INPUT``
    deletes ``x``. Raises TypeError for a non-array or non-ArrayCopySemantics.
    """
    call = "reorder_shards"
    _check_array(call, "x", x)
    _check_semantics(call, "array_copy_semantics", array_copy_semantics)
    src = x.sharding.devices_indices_map(x.shape)
    dst = dst_sharding.devices_indices_map(x.shape)
    if set(src) != set(dst):
        raise bad_value("dst_sharding", f"a sharding over the devices of x "
                        f"{sorted(d.id for d in src)}", dst_sharding, call,
                        "Use batched_copy_array_to_devices_with_sharding to move data.")
    moved = [d for d in src if src[d] != dst[d]]
    if moved:
        raise bad_value("dst_sharding", "a sharding that gives every device the shard index "
                        "it holds now", dst_sharding, call,
                        f"{moved[0]} holds {src[moved[0]]} but would be labelled "
                        f"{dst[moved[0]]}; reorder_shards moves no data.")
    if array_copy_semantics == native.ArrayCopySemantics.ALWAYS_COPY:
        shared = native.reorder_shards(x, dst_sharding, native.ArrayCopySemantics.REUSE_INPUT)
        devices = native.DeviceList(tuple(_compat.device_assignment_of(dst_sharding)))
        return native.batched_copy_array_to_devices_with_sharding(
            [shared], [devices], [dst_sharding], [native.ArrayCopySemantics.ALWAYS_COPY])[0]
    return native.reorder_shards(x, dst_sharding, array_copy_semantics)


def batched_copy_array_to_devices_with_sharding(arrays: Sequence[Any],
                                                 devices: Sequence[Any],
                                                 sharding: Sequence[Any],
                                                 array_copy_semantics: Sequence[Any]) -> list:
    """Copy ``arrays[i]`` onto ``devices[i]`` under ``sharding[i]`` (array API).

    Shard *k* of ``arrays[i]`` goes to the *k*-th device of ``devices[i]``;
    ``sharding[i]`` must give that device the same index (else ValueError
    naming ``sharding[i]``). ``ALWAYS_COPY`` gives independent arrays,
    ``REUSE_INPUT`` may share buffers, ``DONATE_INPUT`` deletes the input.
    Raises ValueError for sequences of different lengths, TypeError for wrong
    element types.
    """
    call = "batched_copy_array_to_devices_with_sharding"
    n = len(arrays)
    for arg, seq in (("devices", devices), ("sharding", sharding),
                     ("array_copy_semantics", array_copy_semantics)):
        if len(seq) != n:
            raise bad_value(arg, f"one entry per array ({n})", f"{len(seq)} entries", call)
    for i in range(n):
        _check_array(call, f"arrays[{i}]", arrays[i])
        _check_semantics(call, f"array_copy_semantics[{i}]", array_copy_semantics[i])
        if not isinstance(devices[i], native.DeviceList):
            raise bad_type(f"devices[{i}]", "a DeviceList", devices[i], call)
        targets = list(devices[i])
        if len(targets) != len(arrays[i].addressable_shards):
            raise bad_value(f"devices[{i}]", f"{len(arrays[i].addressable_shards)} devices "
                            "(one per shard)", targets, call)
        why = _positional_mismatch(arrays[i], targets, sharding[i])
        if why:
            raise bad_value(f"sharding[{i}]", "a sharding that matches where each shard goes",
                            sharding[i], call, why)
    return native.batched_copy_array_to_devices_with_sharding(
        list(arrays), list(devices), list(sharding), list(array_copy_semantics))
