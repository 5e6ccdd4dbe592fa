"""Area lifecycle: readiness, size, delete, use after delete, clone (the array API's
``ArrayImpl``)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import strategies
from runtime import xla_client

DENSE = [capabilities.param(d) for d in dtype_helpers.BOOL + dtype_helpers.INTS
         + dtype_helpers.UINTS + dtype_helpers.FLOATS + dtype_helpers.COMPLEX]


@pytest.mark.parametrize("dt", DENSE)
@given(data=st.data())
def test_ready_and_size(client, device, dt, data):
    x = data.draw(strategies.bit_patterns(dt, strategies.shapes()), label="x")
    call = f"buffer_from_pyval({x.dtype}{list(x.shape)}, {device})"
    with capabilities.gated(dt, call):
        buf = client.buffer_from_pyval(x, device)
    same = buf.block_until_ready()
    assert same is buf, f"block_until_ready() returned {same!r}, but should return the array " \
                        f"itself [{call}]"
    assert buf.is_ready() is True, f"is_ready()={buf.is_ready()}, but should be True after " \
                                   f"block_until_ready() [{call}]"
    size = buf.on_device_size_in_bytes()
    assert isinstance(size, int) and size >= x.nbytes, (
        f"on_device_size_in_bytes()={size}, but should be an int >= {x.nbytes} "
        f"(the host size) [{call}]")
    assert buf.is_deleted() is False


def test_delete_then_is_deleted(client, device):
    buf = client.buffer_from_pyval(np.arange(8, dtype=np.int32), device)
    buf.delete()
    assert buf.is_deleted() is True, "is_deleted()=False, but should be True after delete()"


def test_clone_is_independent(client, device, record_property):
    """clone() is a new array object with the same data on the same device, alive after
    its source object is gone. jaxlib builds it with ArrayCopySemantics.REUSE_INPUT,
    so the buffer may be shared: whether delete() of the source also deletes the clone
    is recorded (``clone_shares_buffer``), not required."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    buf = client.buffer_from_pyval(x, device)
    twin = buf.clone()
    call = f"clone() of float32[3, 4] on {device}"
    assert twin is not buf, f"clone() returned the same object [{call}]"
    assert twin.devices() == {device}, f"clone().devices()={twin.devices()}, but should be " \
                                       f"{{{device}}} [{call}]"
    del buf
    gc.collect()
    assertions.assert_bitwise_equal(np.asarray(twin), x,
                                    call=call + " after the source was collected")
    other = twin.clone()
    twin.delete()
    record_property("clone_shares_buffer", bool(other.is_deleted()))


def test_batched_block_until_ready(client, device):
    bufs = [client.buffer_from_pyval(np.full(16, i, np.int32), device) for i in range(4)]
    xla_client.batched_block_until_ready(bufs)
    not_ready = [i for i, b in enumerate(bufs) if not b.is_ready()]
    assert not not_ready, f"arrays {not_ready} not ready after batched_block_until_ready"


# Each call on a deleted array must raise a Python exception. Run in a child
# process, so a backend that segfaults costs this test, not the run. The child
# checks every local device and prints one line per device.
USE_AFTER_DELETE = {
    "asarray": "np.asarray(buf)",
    "block_until_ready": "buf.block_until_ready()",
    "is_ready": "buf.is_ready()",
    "clone": "buf.clone()",
    "on_device_size_in_bytes": "buf.on_device_size_in_bytes()",
    "execute": "exe.execute([buf])",
}
_SNIPPET = """
from conformance.programs import catalog, compiled_programs
cache = compiled_programs.ProgramCache(client)
for device in client.local_devices():
    exe, _ = cache.get("negate", catalog.ELEMENTWISE["negate"].fn,
                       [np.zeros(4, np.float32)], device)
    buf = client.buffer_from_pyval(np.arange(4, dtype=np.float32), device)
    buf.delete()
    try:
        {expr}
    except Exception as err:
        print("RAISED", device.id, type(err).__name__, str(err).splitlines()[0][:200])
    else:
        print("RETURNED", device.id)
"""


@pytest.mark.parametrize("method", list(USE_AFTER_DELETE))
def test_use_after_delete_raises(client, platform, method, isolated):
    expr = USE_AFTER_DELETE[method]
    call = f"{expr} after buf.delete()"
    out = isolated(_SNIPPET.format(expr=expr), device=client.local_devices()[0], call=call)
    lines = [ln for ln in out.splitlines() if ln.startswith(("RAISED", "RETURNED"))]
    assert len(lines) == client.local_device_count(), (
        f"child reported {len(lines)} devices, but should report "
        f"{client.local_device_count()} [{call}]\n{out}")
    returned = [ln for ln in lines if ln.startswith("RETURNED")]
    assert not returned, (f"{call} returned normally on {len(returned)} device(s), but should "
                          f"raise a clear error\n" + "\n".join(returned))


def test_double_delete_is_harmless(client, isolated):
    device = client.local_devices()[-1]
    out = isolated("""
buf = client.buffer_from_pyval(np.arange(4, dtype=np.float32), device)
buf.delete()
try:
    buf.delete()
except Exception as err:
    print("RAISED", type(err).__name__)
print("DELETED", buf.is_deleted())
""", device=device, call="buf.delete() twice")
    assert "DELETED True" in out, f"is_deleted() not True after two deletes: {out!r}"
