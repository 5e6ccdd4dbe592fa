"""Area host_buffer_semantics: who may touch the host array when (the xla_client API's
``HostBufferSemantics`` of ``buffer_from_pyval`` and ``batched_device_put``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import host_memory
from conformance.helpers import strategies
from runtime.xla_client import HostBufferSemantics

F32 = dtype_helpers.BY_NAME["float32"]


@given(x=strategies.finite_arrays(F32, strategies.shapes(min_dims=1, min_side=1)))
def test_immutable_only_during_call_copies(client, device, x):
    original = x.copy()
    call = f"buffer_from_pyval(x, {device}, host_buffer_semantics=IMMUTABLE_ONLY_DURING_CALL)"
    buf = client.buffer_from_pyval(
        x, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
    x[...] = -1.0  # allowed right after the call returns
    assertions.assert_bitwise_equal(np.asarray(buf), original, call=call + " then mutating x")


@given(x=strategies.finite_arrays(F32, strategies.shapes(min_dims=1, min_side=1)))
def test_immutable_until_transfer_completes(client, device, x):
    original = x.copy()
    call = (f"buffer_from_pyval(x, {device}, "
            "host_buffer_semantics=IMMUTABLE_UNTIL_TRANSFER_COMPLETES)")
    buf = client.buffer_from_pyval(
        x, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES)
    buf.block_until_ready()
    x[...] = -1.0  # allowed once the transfer completed
    assertions.assert_bitwise_equal(np.asarray(buf), original, call=call + " then mutating x")


@pytest.mark.parametrize("force_copy", [False, True], ids=["aliasing-allowed", "force_copy"])
def test_zero_copy(client, device, force_copy, record_property):
    """ZERO_COPY may alias the host array (the behaviour is recorded); force_copy may not."""
    x = np.arange(4096, dtype=np.float32)  # page-sized, so aliasing is possible
    call = f"buffer_from_pyval(x, {device}, force_copy={force_copy}, ZERO_COPY)"
    buf = client.buffer_from_pyval(x, device, force_copy=force_copy,
                                   host_buffer_semantics=HostBufferSemantics.ZERO_COPY)
    buf.block_until_ready()
    assertions.assert_bitwise_equal(np.asarray(buf), np.arange(4096, dtype=np.float32), call=call)
    x[0] = 12345.0
    seen = np.asarray(buf)[0]
    aliased = bool(seen == 12345.0)
    record_property("zero_copy_aliases_host", aliased)
    assert seen in (0.0, 12345.0), f"out[0]={seen}, but should be 0.0 or 12345.0 [{call}]"
    if force_copy:
        assert not aliased, f"out aliases the host array, but force_copy=True must copy [{call}]"
    del buf
    x[1] = 1.0  # the host array stays usable after the device array is gone
    assert x[1] == 1.0


# -- every semantics x force_copy x alignment x size; the host array is overwritten after ----

SEMANTICS = list(HostBufferSemantics.__members__.values())
SIZES = host_memory.transfer_sizes(np.dtype(np.float32).itemsize)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("alignment", list(host_memory.ALIGNMENTS))
@pytest.mark.parametrize("force_copy", [False, True], ids=["no-force-copy", "force_copy"])
@pytest.mark.parametrize("semantics", SEMANTICS, ids=lambda s: s.name)
def test_put_then_overwrite_the_host_array(client, semantics, force_copy, alignment, size,
                                           record_property):
    """On every device: after a copying put the device array keeps the values it was
    given when the host array is overwritten; after ZERO_COPY aliasing is recorded
    (property ``host_aliasing``), and must be all or nothing."""
    seen = {}
    for device in client.local_devices():
        x = host_memory.host_buffer(SIZES[size], np.float32,
                                    offset=host_memory.ALIGNMENTS[alignment])
        call = (
            f"buffer_from_pyval(float32[{x.size}] at +{host_memory.misalignment(x)} B from a 64 B "
            f"boundary, {device}, force_copy={force_copy}, {semantics.name})")
        seen[device.id] = host_memory.check_put_detaches(
            lambda h, d=device: client.buffer_from_pyval(
                h, d, force_copy=force_copy, host_buffer_semantics=semantics),
            x, semantics, force_copy, call).value
    record_property("host_aliasing", ", ".join(f"{k}:{v}" for k, v in seen.items()))


D2H = ("asarray", "array", "copy_to_host_async")


def _to_host(method: str, buf: Any) -> np.ndarray:
    if method == "copy_to_host_async":
        buf.copy_to_host_async()
        return np.asarray(buf)
    return np.asarray(buf) if method == "asarray" else np.array(buf)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("method", D2H)
def test_device_to_host_result_is_detached(client, method, size):
    """On every device: the host array that ``method`` returns holds the device array's
    values; ``np.array`` gives a writable one. A returned array that is a copy (not at
    the device buffer's address) keeps its values when the device buffer changes (a
    ZERO_COPY put aliasing its host source, which is then overwritten). Writing to the
    returned array either raises (read-only) or leaves the device array unchanged."""
    for device in client.local_devices():
        source = host_memory.host_buffer(SIZES[size], np.float32, offset=0)
        expected = source.copy()
        buf = client.buffer_from_pyval(source, device,
                                       host_buffer_semantics=HostBufferSemantics.ZERO_COPY)
        host = _to_host(method, buf)
        call = f"{method}(float32[{source.size}] on {device})"
        assertions.assert_bitwise_equal(host, expected, call=call)
        assert method != "array" or host.flags.writeable, (
            f"np.array(out) is read-only, but should be a writable copy [{call}]")
        if host.size and host.ctypes.data != _pointer(buf):
            host_memory.overwrite(source)  # changes the device buffer where the put aliased it
            assertions.assert_bitwise_equal(host, expected, call=f"{call} (a copy), after the "
                                                                 "device buffer changed")
        _check_write_does_not_reach(host, buf, call)


def _pointer(buf: Any) -> int | None:
    try:
        return buf.unsafe_buffer_pointer()
    except Exception:  # not every backend exposes device addresses
        return None


def _check_write_does_not_reach(host: np.ndarray, buf: Any, call: str) -> None:
    """Writing to ``host`` (returned by a device -> host call) raises ValueError when it
    is read-only, and otherwise leaves ``buf`` unchanged."""
    __tracebackhide__ = True
    if host.size == 0:
        return
    keep = np.array(buf).copy()  # a copy of its own, whatever np.array returned
    if not host.flags.writeable:
        with pytest.raises(ValueError):
            host[...] = 0
        return
    host_memory.overwrite(host)
    assertions.assert_bitwise_equal(np.array(buf), keep,
                                    call=f"{call}, then writing to the returned host array")
