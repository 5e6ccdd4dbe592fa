"""A broken cross-process all-reduce for the multihost self-test (a worker preload,
``PJRT_CONFORMANCE_WORKER_PRELOAD``): every CPU client compiles ``stablehlo.all_reduce``
with one replica group per device, so each device keeps its own contribution and drops
every other process's (a collective that never leaves the host)."""

import re

from runtime import xla_client
from tests.mutants.base import rewriting


def _local_only(text: str) -> str:
    if "stablehlo.all_reduce" not in text:
        return text
    return re.sub(r"replica_groups = dense<(\[\[[^>]*\]\])> : tensor<(\d+)x(\d+)xi64>",
                  lambda m: "replica_groups = dense<[" + ", ".join(
                      f"[{i}]" for i in range(int(m.group(2)) * int(m.group(3))))
                  + f"]> : tensor<{int(m.group(2)) * int(m.group(3))}x1xi64>", text)


_Broken = rewriting(_local_only, "all_reduce keeps each device's own contribution only.")
_make = xla_client.make_cpu_client


def _broken_make_cpu_client(*args, **kwargs):
    client = _make(*args, **kwargs)
    client.__class__ = _Broken
    return client


xla_client.make_cpu_client = _broken_make_cpu_client
