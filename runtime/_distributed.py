"""Distributed runtime factories (xla_client's ``get_distributed_runtime_service`` and
``get_distributed_runtime_client``) with checked arguments.

The engine is PJRT's coordination service (gRPC key-value store, barriers,
heartbeats); the service and client objects are jaxlib's own
``DistributedRuntimeService`` and ``DistributedRuntimeClient``.

Units: jaxlib takes every factory timeout in **seconds** (``jax.distributed``
passes ``initialization_timeout`` and ``heartbeat_timeout_seconds`` straight
through); jaxlib's API description calls the heartbeat timeout milliseconds, which
the native code does not do. The client's method timeouts (``timeout_in_ms``) are
milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime._compat import distributed_recoverable_on, native_jax
from runtime._validate import bad_type, bad_value

DistributedRuntimeClient = native_jax.DistributedRuntimeClient
DistributedRuntimeService = native_jax.DistributedRuntimeService


def check_address(address: Any, call: str) -> str:
    """Raise unless ``address`` is ``host:port`` with a port in 1..65535."""
    if not isinstance(address, str):
        raise bad_type("address", "a 'host:port' string", address, call)
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise bad_value("address", "'host:port' with a port in 1..65535", address, call,
                        "For example 'localhost:12345' or '[::1]:12345'.")
    return address


def _seconds(call: str, **values: Any) -> None:
    for name, value in values.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise bad_value(name, "an int >= 1 (seconds) or None", value, call)


def _flags(call: str, **values: Any) -> None:
    for name, value in values.items():
        if value is not None and not isinstance(value, bool):
            raise bad_type(name, "a bool or None", value, call)


def get_distributed_runtime_service(address: str, num_nodes: int,
                                    heartbeat_timeout: int | None = None,
                                    cluster_register_timeout: int | None = None,
                                    shutdown_timeout: int | None = None,
                                    recoverable: bool | None = None) -> Any:
    """Start the coordination service on ``address`` for ``num_nodes`` processes.

    ``xla_client.get_distributed_runtime_service``. ``address``: ``host:port`` to
    bind (``[::]:port`` for all interfaces). Timeouts in seconds (None: jaxlib's
    defaults): ``heartbeat_timeout`` before a silent process counts as dead,
    ``cluster_register_timeout`` for all processes to connect,
    ``shutdown_timeout`` for the shutdown barrier. ``recoverable``: processes
    may leave and rejoin without failing the job (jaxlib 0.7/0.8 take it on the
    client instead: ``recoverable=True`` here raises ValueError saying so). Returns a
    ``DistributedRuntimeService``; call ``shutdown()`` when done.
    Raises TypeError/ValueError naming the bad argument, ``XlaRuntimeError``
    when the port cannot be bound.
    """
    call = "get_distributed_runtime_service"
    check_address(address, call)
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 1:
        raise bad_value("num_nodes", "an int >= 1", num_nodes, call)
    _seconds(call, heartbeat_timeout=heartbeat_timeout,
             cluster_register_timeout=cluster_register_timeout, shutdown_timeout=shutdown_timeout)
    _flags(call, recoverable=recoverable)
    extra = {}
    if distributed_recoverable_on() == "service":
        extra["recoverable"] = recoverable
    elif recoverable:
        raise bad_value("recoverable", "None or False", recoverable, call,
                        "This jaxlib makes processes recoverable on the client: pass "
                        "recoverable=True to get_distributed_runtime_client.")
    return native_jax.get_distributed_runtime_service(
        address, num_nodes, heartbeat_timeout=heartbeat_timeout,
        cluster_register_timeout=cluster_register_timeout, shutdown_timeout=shutdown_timeout,
        **extra)


def get_distributed_runtime_client(address: str, node_id: int, rpc_timeout: int | None = None,
                                   init_timeout: int | None = None,
                                   shutdown_timeout: int | None = None,
                                   heartbeat_timeout: int | None = None,
                                   missed_heartbeat_callback: Callable[..., Any] | None = None,
                                   shutdown_on_destruction: bool | None = None,
                                   use_compression: bool | None = None,
                                   recoverable: bool | None = None) -> Any:
    """A client of the coordination service at ``address`` for process ``node_id``.

    ``xla_client.get_distributed_runtime_client``. Call ``connect()`` before use.
    Timeouts in seconds (None: jaxlib's defaults): ``rpc_timeout`` per call,
    ``init_timeout`` for ``connect()``, ``shutdown_timeout``,
    ``heartbeat_timeout``. ``missed_heartbeat_callback(status)`` is called when
    the service stops answering heartbeats (None: jaxlib terminates the
    process). ``recoverable``: jaxlib 0.10+ sets this on the service, not the
    client, so there ``recoverable=True`` here raises ValueError saying so (jaxlib
    0.7/0.8 take it here and not on the service).
    Raises TypeError/ValueError naming the bad argument.
    """
    call = "get_distributed_runtime_client"
    check_address(address, call)
    if isinstance(node_id, bool) or not isinstance(node_id, int) or node_id < 0:
        raise bad_value("node_id", "an int >= 0", node_id, call)
    _seconds(call, rpc_timeout=rpc_timeout, init_timeout=init_timeout,
             shutdown_timeout=shutdown_timeout, heartbeat_timeout=heartbeat_timeout)
    _flags(call, shutdown_on_destruction=shutdown_on_destruction,
           use_compression=use_compression, recoverable=recoverable)
    if missed_heartbeat_callback is not None and not callable(missed_heartbeat_callback):
        raise bad_type("missed_heartbeat_callback", "a callable(status) or None",
                       missed_heartbeat_callback, call)
    extra = {}
    if distributed_recoverable_on() == "client":
        extra["recoverable"] = recoverable
    elif recoverable:
        raise bad_value("recoverable", "None or False", recoverable, call,
                        "This jaxlib makes processes recoverable on the service: pass "
                        "recoverable=True to get_distributed_runtime_service.")
    return native_jax.get_distributed_runtime_client(
        address, node_id, rpc_timeout=rpc_timeout, init_timeout=init_timeout,
        shutdown_timeout=shutdown_timeout, heartbeat_timeout=heartbeat_timeout,
        missed_heartbeat_callback=missed_heartbeat_callback,
        shutdown_on_destruction=shutdown_on_destruction, use_compression=use_compression,
        **extra)


def make_gloo_tcp_collectives(distributed_client: Any, hostname: str | None = None,
                              interface: str | None = None) -> Any:
    """Gloo cross-process collectives over TCP for ``make_cpu_client(collectives=...)``.

    ``make_cpu_client`` as jax's backend registry calls it
    (``jax_cpu_collectives_implementation='gloo'``).
    ``distributed_client``: a connected ``DistributedRuntimeClient`` (Gloo
    exchanges its addresses through the key-value store). ``hostname``: the
    address peers use to reach this process (None: this host's name);
    ``interface``: the network interface to bind (None: Gloo's choice). Returns
    a ``CpuCollectives``. Raises TypeError naming the bad argument.
    """
    call = "make_gloo_tcp_collectives"
    if not isinstance(distributed_client, DistributedRuntimeClient):
        raise bad_type("distributed_client", "a DistributedRuntimeClient",
                       distributed_client, call)
    for name, value in (("hostname", hostname), ("interface", interface)):
        if value is not None and (not isinstance(value, str) or not value):
            raise bad_type(name, "a non-empty str or None", value, call)
    return native_jax.make_gloo_tcp_collectives(distributed_client, hostname=hostname,
                                                interface=interface)
