"""Area multihost: the global-mesh checks of a cluster (the array API's
``batched_device_put``,
``reorder_shards``; jax ``make_array_from_single_device_arrays``; cross-process
collectives), here on ``--num-processes`` processes on loopback.

Each test runs one entry of :data:`conformance.processes.mp_checks.GLOBAL` (every
process of a (process, local) mesh of 2 CPU devices each, Gloo collectives) and fails
with its check's problems. In the multi-host mode of ``pjrt-conformance run``
(``docs/cluster.md``) the same entries run once across the processes of a real cluster
and their results replace these ids in the cluster's one bundle.
"""

from __future__ import annotations

import pytest

from conformance.processes import mp_checks
from conformance.test_multi_process import _cluster, _ok, cpu_only, processes  # noqa: F401

pytestmark = pytest.mark.capability("multi_process")


@pytest.mark.parametrize("name", [c.name for c in mp_checks.GLOBAL])
def test_global_mesh(request, processes, cpu_only, name):  # noqa: F811 - fixtures
    check = mp_checks.BY_NAME[name]
    params = check.params()
    results = _ok(_cluster(request, check.scenario, processes, params=params,
                           timeout=check.timeout_s))
    problems = check.check(results, params)
    assert not problems, "\n".join(problems)
