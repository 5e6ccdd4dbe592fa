"""Key-value store and barrier latency of PJRT's coordination service (the
distributed runtime of ``xla_client``) with 2 and 4 nodes on loopback.

The nodes are clients in this process (one thread each for calls that need all
of them); the multi-process launcher of the conformance suite measures the
same across real processes.
"""

from __future__ import annotations

import socket
import threading

from runtime import xla_client as xc
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_threads(fns):
    threads = [threading.Thread(target=fn) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)


class CoordinationService:
    params = ([2, 4],)
    param_names = ["nodes"]
    timeout = 120

    def setup(self, nodes):
        address = f"127.0.0.1:{_free_port()}"
        self.service = xc.get_distributed_runtime_service(address, nodes)
        self.clients = [xc.get_distributed_runtime_client(address, i, init_timeout=30)
                        for i in range(nodes)]
        _in_threads([c.connect for c in self.clients])
        self.clients[0].key_value_set("bench/key", "x" * 64)
        self.count = 0

    def teardown(self, nodes):
        _in_threads([c.shutdown for c in self.clients])
        self.service.shutdown()

    def time_key_value_set(self, nodes):
        self.clients[0].key_value_set("bench/key", "y" * 64, allow_overwrite=True)

    def time_blocking_key_value_get(self, nodes):
        self.clients[-1].blocking_key_value_get("bench/key", 10_000)

    def time_wait_at_barrier(self, nodes):
        self.count += 1
        name = f"bench/barrier/{self.count}"
        _in_threads([lambda c=c: c.wait_at_barrier(name, 30_000) for c in self.clients])
