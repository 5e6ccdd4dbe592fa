"""Area host_buffer_semantics: who may touch the host array when (seed 001/003 HostBufferSemantics)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from conformance.helpers import assertions as ph
from conformance.helpers import dtype_helpers as dh
from conformance.helpers import strategies as hh
from runtime.xla_client import HostBufferSemantics

F32 = dh.BY_NAME["float32"]


@given(x=hh.finite_arrays(F32, hh.shapes(min_dims=1, min_side=1)))
def test_immutable_only_during_call_copies(client, device, x):
    original = x.copy()
    call = f"buffer_from_pyval(x, {device}, host_buffer_semantics=IMMUTABLE_ONLY_DURING_CALL)"
    buf = client.buffer_from_pyval(
        x, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
    x[...] = -1.0  # allowed right after the call returns
    ph.assert_bitwise_equal(np.asarray(buf), original, call=call + " then mutating x")


@given(x=hh.finite_arrays(F32, hh.shapes(min_dims=1, min_side=1)))
def test_immutable_until_transfer_completes(client, device, x):
    original = x.copy()
    call = (f"buffer_from_pyval(x, {device}, "
            "host_buffer_semantics=IMMUTABLE_UNTIL_TRANSFER_COMPLETES)")
    buf = client.buffer_from_pyval(
        x, device, host_buffer_semantics=HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES)
    buf.block_until_ready()
    x[...] = -1.0  # allowed once the transfer completed
    ph.assert_bitwise_equal(np.asarray(buf), original, call=call + " then mutating x")


@pytest.mark.parametrize("force_copy", [False, True], ids=["aliasing-allowed", "force_copy"])
def test_zero_copy(client, device, force_copy, record_property):
    """ZERO_COPY may alias the host array (the behaviour is recorded); force_copy may not."""
    x = np.arange(4096, dtype=np.float32)  # page-sized, so aliasing is possible
    call = f"buffer_from_pyval(x, {device}, force_copy={force_copy}, ZERO_COPY)"
    buf = client.buffer_from_pyval(x, device, force_copy=force_copy,
                                   host_buffer_semantics=HostBufferSemantics.ZERO_COPY)
    buf.block_until_ready()
    ph.assert_bitwise_equal(np.asarray(buf), np.arange(4096, dtype=np.float32), call=call)
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
