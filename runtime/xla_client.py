"""The xla_client API and the array API: a drop-in for ``jaxlib.xla_client``.

Native types and functions that still behave as the API describes are re-exported
from jaxlib unchanged; client factories return :class:`runtime._client.Client`,
which restores ``buffer_from_pyval`` and derives device assignments.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from runtime._array_copy import batched_copy_array_to_devices_with_sharding, reorder_shards
from runtime._client import Client
from runtime._compat import native
from runtime._custom_calls import (CustomCallTargetTraits, custom_call_targets,
                                   register_custom_call_handler,
                                   register_custom_call_partitioner, register_custom_call_target)
from runtime._distributed import (DistributedRuntimeClient, DistributedRuntimeService,
                                  get_distributed_runtime_client, get_distributed_runtime_service,
                                  make_gloo_tcp_collectives)
from runtime._dtypes import dtype_to_etype, etype_to_dtype
from runtime._executables import Executable
# The plugin registry: checked wrappers, never a segfault on bad input.
from runtime._gpu import GpuLibNotLinkedError, generate_pjrt_gpu_plugin_options, make_gpu_client
from runtime._plugin_library import PluginLoadError
from runtime._plugins import (initialize_pjrt_plugin, load_pjrt_plugin_dynamically,
                              load_pjrt_plugin_with_c_api, make_c_api_client,
                              pjrt_plugin_initialized, pjrt_plugin_loaded)
from runtime._loaded_executable import LoadedExecutable
from runtime._shape import Shape
from runtime._sharded_put import batched_device_put
from runtime._validate import check_arrays, check_node

# Native types and functions of the API (re-exported, not rewritten).
ArrayCopySemantics = native.ArrayCopySemantics
ArrayImpl = native.ArrayImpl
CompileOptions = native.CompileOptions
Device = native.Device
DeviceAssignment = native.DeviceAssignment
DeviceList = native.DeviceList
GSPMDSharding = native.GSPMDSharding
HloSharding = native.HloSharding
HostBufferSemantics = native.HostBufferSemantics
Memory = native.Memory
NamedSharding = native.NamedSharding
OpSharding = native.OpSharding
PrimitiveType = native.PrimitiveType
Sharding = native.Sharding
SingleDeviceSharding = native.SingleDeviceSharding
XlaRuntimeError = native.XlaRuntimeError



def batched_block_until_ready(x: Sequence[Any]) -> None:
    """Wait until every array of ``x`` is computed (array API).

    ``x``: a sequence of ``ArrayImpl``. Raises TypeError naming ``x[i]`` for a
    non-array, and the array's error (``XlaRuntimeError``) for a failed or
    deleted one.
    """
    check_arrays("batched_block_until_ready", "x", x, native.ArrayImpl)
    native.batched_block_until_ready(list(x))


array_result_handler = native.array_result_handler


@contextlib.contextmanager
def execution_stream_id(new_id: int) -> Iterator[None]:
    """Set the calling thread's execution stream id for the ``with`` block.

    ``new_id``: an int in ``[0, 2**63)``; the previous id is restored on exit,
    also when the block raises. Raises TypeError/ValueError naming ``new_id``.
    """
    if isinstance(new_id, bool) or not isinstance(new_id, int):
        raise TypeError(f"execution_stream_id: argument 'new_id' must be an int, got {new_id!r}")
    if not 0 <= new_id < 2**63:
        raise ValueError(f"execution_stream_id: argument 'new_id' must be in [0, 2**63), "
                         f"got {new_id}")
    with native.execution_stream_id(new_id):
        yield


DeviceTopology = native.DeviceTopology


def get_topology_for_devices(devices: Sequence[Any]) -> Any:
    """The ``DeviceTopology`` of ``devices``: a non-empty sequence of
    devices of one client. Raises TypeError/ValueError naming ``devices``."""
    call = "get_topology_for_devices"
    if isinstance(devices, native.DeviceList):
        devices = list(devices)
    if not isinstance(devices, Sequence) or not devices:
        raise TypeError(f"{call}: argument 'devices' must be a non-empty sequence of Devices, "
                        f"got {devices!r}")
    if not all(isinstance(d, native.Device) for d in devices):
        raise TypeError(f"{call}: argument 'devices' must hold only Devices, got {devices!r}")
    if len({id(d.client) for d in devices}) != 1:
        raise ValueError(f"{call}: argument 'devices' must be devices of one client, "
                         f"got {devices!r}")
    return native.get_topology_for_devices(list(devices))


def make_c_api_device_topology(c_api: Any, topology_name: str = "", **kwargs: Any) -> Any:
    """A ``DeviceTopology`` from a plugin's ``PJRT_Api`` capsule.

    Raises PluginLoadError when the plugin does not support topologies (the
    plugin's message, e.g. ``UNIMPLEMENTED`` on CPU).
    """
    if c_api is None:
        raise TypeError("make_c_api_device_topology: argument 'c_api' must be a PJRT_Api "
                        "capsule, got None")
    try:
        return native.make_c_api_device_topology(c_api, topology_name, **kwargs)
    except native.XlaRuntimeError as err:
        raise PluginLoadError("<c_api>", None, f"topology {topology_name!r}: {err}") from err


def make_tfrt_tpu_c_api_device_topology(topology_name: str = "", **kwargs: Any) -> Any:
    """TPU ``DeviceTopology`` of the loaded ``tpu`` plugin.

    Raises PluginLoadError when no ``tpu`` plugin is loaded and initialized.
    """
    if not pjrt_plugin_initialized("tpu"):
        raise PluginLoadError("tpu", None, "not loaded and initialized; load libtpu with "
                              "load_pjrt_plugin_dynamically('tpu', path) first")
    return native.make_tfrt_tpu_c_api_device_topology(topology_name, **kwargs)


#: The most CPU devices ``make_cpu_client`` creates. jaxlib 0.10.2 on one machine: 4096
#: devices take 0.6 s to create and about 10 s to tear down at exit, 8192 take 3 s and
#: 170 s (teardown grows about quadratically), and ``num_devices=10**6`` never finished.
MAX_CPU_DEVICES = 4096


def make_cpu_client(asynchronous: bool = True, distributed_client: Any = None, node_id: int = 0,
                    num_nodes: int = 1, collectives: Any = None, num_devices: int | None = None,
                    get_local_topology_timeout_minutes: int | None = None,
                    get_global_topology_timeout_minutes: int | None = None,
                    transfer_server_factory: Any = None) -> Client:
    """Create a client for jaxlib's CPU PJRT backend (``make_cpu_client``).

    ``num_devices``: number of CPU devices (default: jaxlib's, 1), an int in
    ``[1, MAX_CPU_DEVICES]`` (4096; a ValueError naming ``num_devices`` beyond it).
    ``node_id``/``num_nodes``: this process's index and the process count
    (``0 <= node_id < num_nodes``). Topology timeouts are in minutes.
    Raises TypeError/ValueError naming a bad argument.
    """
    call = "make_cpu_client"
    if num_devices is not None and (isinstance(num_devices, bool)
                                    or not isinstance(num_devices, int) or num_devices < 1):
        raise ValueError(f"{call}: argument 'num_devices' must be an int >= 1 or None, "
                         f"got {num_devices!r}")
    if num_devices is not None and num_devices > MAX_CPU_DEVICES:
        raise ValueError(f"{call}: argument 'num_devices' must be at most {MAX_CPU_DEVICES} "
                         f"(MAX_CPU_DEVICES), got {num_devices}; jaxlib's CPU client takes "
                         f"minutes to create and tear down many more and 10**6 never "
                         f"finishes")
    check_node(call, node_id, num_nodes)
    for name, value in [("get_local_topology_timeout_minutes", get_local_topology_timeout_minutes),
                        ("get_global_topology_timeout_minutes",
                         get_global_topology_timeout_minutes)]:
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"{call}: argument '{name}' must be an int >= 0 (minutes) or None, "
                             f"got {value!r}")
    return Client(native.make_cpu_client(
        asynchronous=asynchronous, distributed_client=distributed_client, node_id=node_id,
        num_nodes=num_nodes, collectives=collectives, num_devices=num_devices,
        get_local_topology_timeout_minutes=get_local_topology_timeout_minutes,
        get_global_topology_timeout_minutes=get_global_topology_timeout_minutes,
        transfer_server_factory=transfer_server_factory))
