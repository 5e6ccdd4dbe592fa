"""Area copy_semantics: ``ArrayCopySemantics`` of ``reorder_shards`` and
``batched_copy_array_to_devices_with_sharding`` (the array API).

``ALWAYS_COPY`` gives an independent array (no shared buffer, deleting one
leaves the other intact), ``REUSE_INPUT`` leaves the input usable,
``DONATE_INPUT`` deletes the input and using it afterwards raises a clear
error. Donation runs in child processes, one per observation (result, use,
``is_deleted()``): some backends crash in one of them, which must not hide the others.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import sharding_helpers

OPS = ("reorder_shards", "batched_copy")


def _pointers(arr):
    return {s.device.id: s.data.unsafe_buffer_pointer() for s in arr.addressable_shards}


def _draw(client, xc, data):
    """A drawn sharded case, a device permutation, the host data and its device array."""
    case = data.draw(sharding_helpers.sharded_cases(client.local_devices(), min_block=1),
                     label="case")
    order = data.draw(st.permutations(client.local_devices()), label="order")
    x = np.arange(int(np.prod(case.shape)), dtype=np.float32).reshape(case.shape)
    return case, order, x, sharding_helpers.put_sharded(x, case.sharding, xc=xc)


def _apply(xc, op, arr, case, order, semantics):
    """Run ``op`` on ``arr`` towards ``order``; return (result, expected sharding, call)."""
    if op == "reorder_shards":
        dst = sharding_helpers.reordered(case.sharding, list(order), len(case.shape))
        return xc.reorder_shards(arr, dst, semantics), dst, f"reorder_shards(x, {semantics})"
    dst = sharding_helpers.moved(case, list(order))
    out = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [xc.DeviceList(tuple(order))], [dst], [semantics])[0]
    return out, dst, f"batched_copy_array_to_devices_with_sharding([x], {semantics})"


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_always_copy_is_independent(client, xc, op, data):
    case, order, x, arr = _draw(client, xc, data)
    out, dst, call = _apply(xc, op, arr, case, order, xc.ArrayCopySemantics.ALWAYS_COPY)
    assert out.sharding == dst, f"out.sharding={out.sharding}, but should be {dst} [{call}]"
    assertions.assert_bitwise_equal(np.asarray(out), x, call=call)
    shared = {k for k, p in _pointers(out).items() if _pointers(arr).get(k) == p}
    assert not shared, (f"out shares device buffers with the input on devices {sorted(shared)}, "
                        f"but ALWAYS_COPY must copy [{call}]")
    out.delete()
    assertions.assert_bitwise_equal(np.asarray(arr), x,
                                    call=f"input after deleting the result of {call}")


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_reuse_input_keeps_the_input_usable(client, xc, op, data):
    case, order, x, arr = _draw(client, xc, data)
    out, dst, call = _apply(xc, op, arr, case, order, xc.ArrayCopySemantics.REUSE_INPUT)
    assert not arr.is_deleted(), f"input deleted by {call}, but REUSE_INPUT keeps it"
    assertions.assert_bitwise_equal(np.asarray(out), x, call=call)
    assertions.assert_bitwise_equal(np.asarray(arr), x, call=f"input after {call}")


_DONATE = """
from conformance.helpers import sharding_helpers
from jax.sharding import Mesh, NamedSharding, PartitionSpec
devices = client.local_devices()
mesh = Mesh(np.array(devices), ("x",))
sharding = NamedSharding(mesh, PartitionSpec("x"))
x = np.arange(4 * len(devices), dtype=np.float32)
arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
order = devices[1:] + devices[:1]
case = sharding_helpers.ShardedCase(sharding, mesh, PartitionSpec("x"), x.shape)
if {op!r} == "reorder_shards":
    out = xc.reorder_shards(arr, sharding_helpers.reordered(sharding, order, 1),
                            xc.ArrayCopySemantics.DONATE_INPUT)
else:
    out = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [xc.DeviceList(tuple(order))], [sharding_helpers.moved(case, order)],
        [xc.ArrayCopySemantics.DONATE_INPUT])[0]
"""
#: Whether the donated input and the result are among ``client.live_arrays()``, by
#: identity: observes the donation without calling anything on the donated array (its
#: methods crash on some jaxlib releases). An ALWAYS_COPY in place of DONATE_INPUT leaves
#: the input live.
_LIVE = """
results = out if isinstance(out, list) else [out]
live = client.live_arrays()
print("LIVE_ARRAYS", len(live), flush=True)
print("INPUT_LIVE", any(a is arr for a in live),
      "RESULT_LIVE", all(any(a is o for a in live) for o in results), flush=True)
"""
#: What is observed after a donation, each in its own child process, so that one
#: observation that crashes (``is_deleted()`` on jaxlib 0.10.2) hides none of the others:
#: name -> (snippet run after the donation, the line it must print, what is wrong if not).
_DONATION_OBSERVATIONS = {
    "result": ("""
print("RESULT_OK", bool(np.array_equal(np.asarray(out), x)), flush=True)
""", "RESULT_OK True", "the result of {call} differs from the input"),
    "use_raises": ("""
print("CALLING np.asarray(input)", flush=True)
try:
    np.asarray(arr)
    print("USE_RETURNED", flush=True)
except Exception as err:
    print("USE_RAISED", type(err).__name__, flush=True)
""", "USE_RAISED", "np.asarray(donated input) returned instead of raising a clear error "
                   "after {call}"),
    "is_deleted": ("""
print("CALLING input.is_deleted()", flush=True)
print("INPUT_DELETED", arr.is_deleted(), flush=True)
""", "INPUT_DELETED True", "input.is_deleted() is not True after {call}, but donation "
                           "deletes it"),
    "live_arrays": (_LIVE, "INPUT_LIVE False RESULT_LIVE True",
                    "client.live_arrays() still holds the donated input after {call} (or "
                    "misses the result): the input was copied, not donated"),
}


def _observe(isolated, device, setup: str, observation: str, call: str) -> None:
    """Run ``setup`` then one of :data:`_DONATION_OBSERVATIONS` (or
    :data:`_ALIASING_OBSERVATIONS`) in a child; AssertionError unless it prints its line
    (BackendCrash if the child dies)."""
    observations = {**_DONATION_OBSERVATIONS, **_ALIASING_OBSERVATIONS}
    snippet, line, wrong = observations[observation]
    out = isolated(setup + snippet, device=device, call=f"{call}, then {observation}")
    assert line in out, f"{wrong.format(call=call)}: {out}"


@pytest.mark.parametrize("observation", list(_DONATION_OBSERVATIONS))
@pytest.mark.parametrize("op", OPS)
def test_donate_input_deletes_the_input(client, op, observation, isolated):
    """After ``op(x, DONATE_INPUT)`` the result holds ``x``, using the input raises and the
    input reports ``is_deleted()``: one observation a test, each in its own child."""
    _observe(isolated, client.local_devices()[0], _DONATE.format(op=op), observation,
             f"{op}(x, DONATE_INPUT)")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("first", ["input", "result"])
@given(data=st.data())
def test_shared_buffers_live_until_the_last_owner(client, xc, op, first, data):
    case, order, x, arr = _draw(client, xc, data)
    out, _, call = _apply(xc, op, arr, case, order, xc.ArrayCopySemantics.REUSE_INPUT)
    doomed, survivor = (arr, out) if first == "input" else (out, arr)
    doomed.delete()
    assert not survivor.is_deleted(), (
        f"deleting the {first} of {call} also deleted the other array; arrays that share "
        "buffers must stay valid until the last owner is deleted")
    assertions.assert_bitwise_equal(np.asarray(survivor), x,
                                    call=f"the other array after deleting the {first} of {call}")


def test_live_arrays_tracks_owners(client, xc):
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = client.local_devices()
    sharding = NamedSharding(Mesh(np.array(devices), ("x",)), PartitionSpec("x"))
    x = np.arange(2 * len(devices), dtype=np.float32)
    arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
    out = xc.reorder_shards(arr, sharding_helpers.reordered(sharding, devices[::-1], 1),
                            xc.ArrayCopySemantics.ALWAYS_COPY)

    def live(a):
        return any(b is a for b in client.live_arrays())
    assert live(arr) and live(out), "live_arrays() misses an array that was just created"
    arr.delete()
    assert not live(arr) and live(out), (
        f"after deleting the input: live_arrays() has input={live(arr)}, copy={live(out)}; "
        "should be False, True")


_ALIASING = """
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from conformance.programs import sharded_programs
from conformance.helpers import sharding_helpers
from runtime.xla_bridge import client_platform
devices = client.local_devices()
sharding = NamedSharding(Mesh(np.array(devices), ("x",)), PartitionSpec("x"))
x = np.arange(4 * len(devices), dtype=np.float32)
text = sharded_programs.lower(lambda a: a + 1, [x], [sharding], sharding, client_platform(client),
                             donate=(0,))
exe = client.compile_and_load(text, devices)
arr = sharding_helpers.put_sharded(x, sharding, xc=xc)
before = [s.data.unsafe_buffer_pointer() for s in arr.addressable_shards]
outs = exe.execute_sharded([arr]).disassemble_into_single_device_arrays()[0]
"""
#: As :data:`_DONATION_OBSERVATIONS`, after an ``execute_sharded`` that donates argument 0.
#: "aliased_result" also checks that a must-alias program reuses the donated buffers.
_ALIASING_OBSERVATIONS = {
    "aliased_result": ("""
ok = bool(np.array_equal(np.concatenate([np.asarray(o) for o in outs]), x + 1))
hlo = " ".join(m.to_string() for m in exe.hlo_modules())
must = "must-alias" in hlo
reused = sorted(o.unsafe_buffer_pointer() for o in outs) == sorted(before)
print("RESULT_OK", ok, "must-alias", must, "buffers reused", reused, flush=True)
print("ALIASED_RESULT_OK" if ok and (reused or not must) else "ALIASED_RESULT_WRONG",
      flush=True)
""", "ALIASED_RESULT_OK", "the result of {call} is wrong, or the program declares a "
                          "must-alias input_output_alias and the output does not reuse the "
                          "donated buffers"),
    "aliased_is_deleted": ("""
print("CALLING input.is_deleted()", flush=True)
print("INPUT_DELETED", arr.is_deleted(), flush=True)
""", "INPUT_DELETED True", "the donated input is not deleted after {call}"),
    "second_use_raises": ("""
print("CALLING execute_sharded with the donated input again", flush=True)
try:   # the backend's own answer: the runtime refuses a deleted argument before it
    exe.native.execute_sharded([arr])
    print("SECOND_USE_RETURNED", flush=True)
except Exception as err:
    print("SECOND_USE_RAISED", type(err).__name__, flush=True)
""", "SECOND_USE_RAISED", "executing again with the input donated to {call} did not raise "
                          "a clear error"),
    "aliased_live_arrays": ("out = outs\n" + _LIVE, "INPUT_LIVE False RESULT_LIVE True",
                            "client.live_arrays() still holds the donated input after {call} "
                            "(or misses the result): the input was copied, not donated"),
}


@pytest.mark.capability("donation")
@pytest.mark.parametrize("observation", list(_ALIASING_OBSERVATIONS))
def test_donation_through_input_output_aliasing(client, observation, isolated):
    """After ``execute_sharded`` of a program donating argument 0: the result is right
    (in the donated buffers for a must-alias), the input is deleted and executing with it
    again raises; one observation a test, each in its own child."""
    _observe(isolated, client.local_devices()[0], _ALIASING, observation,
             "execute_sharded of a program donating argument 0")
