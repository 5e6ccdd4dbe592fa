"""A broken cross-process all-reduce for the multihost self-test (a worker preload,
``PJRT_CONFORMANCE_WORKER_PRELOAD``): every CPU client compiles ``stablehlo.all_reduce``
as its operand, so each device keeps its own contribution and drops every other
process's (a collective that never leaves the host). The rewrite is structural
(:mod:`tests.mutants.stablehlo_rewrite`), whatever syntax jax prints ``replica_groups`` in."""

from runtime import xla_client
from tests.mutants.base import rewriting
from tests.mutants.legacy_io import ALL_REDUCE_ALONE

_Broken = rewriting("broken-global-collectives", ALL_REDUCE_ALONE,
                    "all_reduce keeps each device's own contribution only.")
_make = xla_client.make_cpu_client


def _broken_make_cpu_client(*args, **kwargs):
    client = _make(*args, **kwargs)
    client.__class__ = _Broken
    return client


xla_client.make_cpu_client = _broken_make_cpu_client
