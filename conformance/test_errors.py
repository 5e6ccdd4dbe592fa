"""Area errors: bad input gets a clear Python exception, never a crash or a mutation."""

from __future__ import annotations

import numpy as np
import pytest

from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import assertions
from conformance.programs import compiled_programs
from conformance.programs import catalog
from conformance.helpers import sharding_helpers
from conformance.programs import lowering
from runtime import xla_client
from runtime._compat import distributed_recoverable_on


def _add_text(client):
    return compiled_programs.lowered_text("add", catalog.ELEMENTWISE["add"].fn,
                                          (((3,), "float32"), ((3,), "float32")), client)


def test_buffer_from_pyval_rejects_deleted_array(client, device):
    buf = client.buffer_from_pyval(np.arange(3, dtype=np.float32), device)
    buf.delete()
    with pytest.raises(ValueError, match="deleted"):
        client.buffer_from_pyval(buf, device)


@pytest.mark.parametrize("text", ["garbage", "module {\n  func.func @main(", "\x00\x01"],
                         ids=["word", "truncated", "binary"])
def test_compile_rejects_malformed_stablehlo(client, device, text):
    with pytest.raises((ValueError, xla_client.XlaRuntimeError)) as info:
        client.compile_and_load(text, [device])
    assert isinstance(info.value, ValueError) and "computation" in str(info.value), (
        f"compile_and_load(malformed) raised {type(info.value).__name__}: {info.value}, but "
        "should raise ValueError naming 'computation'")


def _sharded(client, xc):
    """(sharding, host data, device array) split along one axis over all devices."""
    devices = client.local_devices()
    sharding = NamedSharding(Mesh(np.array(devices), ("x",)), PartitionSpec("x"))
    x = np.arange(2 * len(devices), dtype=np.float32)
    return sharding, x, sharding_helpers.put_sharded(x, sharding, xc=xc)


@pytest.mark.parametrize("case", ["dtype", "shape", "count"])
def test_batched_device_put_rejects_mismatched_shards(client, xc, case):
    sharding, x, _ = _sharded(client, xc)
    devices = list(sharding.devices_indices_map(x.shape))
    shards = [np.zeros(2, np.float32) for _ in devices]
    if case == "dtype":
        shards[-1] = np.zeros(2, np.int32)
    elif case == "shape":
        shards[0] = np.zeros(3, np.float32)
    else:
        shards = shards[:-1]
    expected = {"dtype": TypeError, "shape": ValueError, "count": ValueError}[case]
    with pytest.raises(expected, match=r"batched_device_put: argument 'xs(\[\d+\])?'"):
        xc.batched_device_put(lowering.shaped_array(x.shape, x.dtype), sharding, shards, devices)


@pytest.mark.capability("multi_device")
def test_reorder_shards_rejects_a_destination_that_would_relabel_data(client, xc, two_devices):
    _, x, arr = _sharded(client, xc)
    swapped = NamedSharding(Mesh(np.array(two_devices[::-1]), ("x",)), PartitionSpec("x"))
    with pytest.raises(ValueError, match="argument 'dst_sharding'.*moves no data"):
        xc.reorder_shards(arr, swapped, xc.ArrayCopySemantics.REUSE_INPUT)
    assertions.assert_bitwise_equal(np.asarray(arr), x,
                                    call="input after a rejected reorder_shards")
    with pytest.raises(TypeError, match="argument 'array_copy_semantics'"):
        xc.reorder_shards(arr, arr.sharding, "copy")


@pytest.mark.capability("multi_device")
def test_batched_copy_rejects_mismatched_arguments(client, xc, two_devices):
    sharding, _, arr = _sharded(client, xc)
    order = xc.DeviceList(tuple(two_devices[::-1]))
    copy = xc.ArrayCopySemantics.ALWAYS_COPY
    with pytest.raises(ValueError, match="argument 'sharding'"):
        xc.batched_copy_array_to_devices_with_sharding([arr], [order], [], [copy])
    relabel = sharding  # shard k would land on device n-1-k, which it gives index n-1-k
    with pytest.raises(ValueError, match=r"argument 'sharding\[0\]'.*would land on"):
        xc.batched_copy_array_to_devices_with_sharding([arr], [order], [relabel], [copy])
    arr.delete()
    with pytest.raises(ValueError, match=r"argument 'arrays\[0\]' must be a live array"):
        xc.batched_copy_array_to_devices_with_sharding([arr], [order], [relabel], [copy])


@pytest.mark.parametrize("call, arg, exc", [
    (lambda xc, d: xc.get_distributed_runtime_service("localhost", 2), "address", ValueError),
    (lambda xc, d: xc.get_distributed_runtime_service(1234, 2), "address", TypeError),
    (lambda xc, d: xc.get_distributed_runtime_service("localhost:1", 0), "num_nodes", ValueError),
    (lambda xc, d: xc.get_distributed_runtime_service("localhost:1", 2, heartbeat_timeout=0),
     "heartbeat_timeout", ValueError),
    (lambda xc, d: xc.get_distributed_runtime_client("localhost:70000", 0), "address",
     ValueError),
    (lambda xc, d: xc.get_distributed_runtime_client("localhost:1", -1), "node_id", ValueError),
    (lambda xc, d: xc.get_distributed_runtime_client("localhost:1", 0, init_timeout=1.5),
     "init_timeout", ValueError),
    (lambda xc, d: xc.get_distributed_runtime_client("localhost:1", 0, use_compression="yes"),
     "use_compression", TypeError),
    (lambda xc, d: xc.get_distributed_runtime_client("localhost:1", 0,
                                                     missed_heartbeat_callback=3),
     "missed_heartbeat_callback", TypeError),
    # recoverable=True on the factory of this jaxlib that does not take it: the client
    # from jaxlib 0.10, the service on 0.7/0.8 (runtime._compat.distributed_recoverable_on)
    (lambda xc, d: getattr(xc, "get_distributed_runtime_" + (
        "client" if distributed_recoverable_on() == "service" else "service"))(
            "localhost:1", 1, recoverable=True),
     "recoverable", ValueError),
    (lambda xc, d: xc.get_topology_for_devices([]), "devices", TypeError),
    (lambda xc, d: xc.get_topology_for_devices([d, "cpu:1"]), "devices", TypeError),
    (lambda xc, d: xc.batched_block_until_ready([np.zeros(2)]), r"x\[0\]", TypeError),
    (lambda xc, d: xc.batched_block_until_ready("ab"), "x", TypeError),
], ids=["service-no-port", "service-int-address", "service-no-nodes", "service-timeout-0",
        "client-port-range", "client-negative-node", "client-float-timeout",
        "client-compression-str", "client-callback-int", "client-recoverable",
        "topology-empty", "topology-not-device", "block-numpy", "block-str"])
def test_distributed_topology_and_block_reject_bad_input(xc, client, call, arg, exc):
    with pytest.raises(exc, match=f"argument '{arg}'"):
        call(xc, client.local_devices()[0])
