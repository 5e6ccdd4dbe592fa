"""A broken distributed runtime for the multi_process area's self-test.

Imported by every worker through ``PJRT_CONFORMANCE_WORKER_PRELOAD``: key-value
reads lose their last character and CPU clients report the wrong process index.
"""

from runtime import xla_client


class _TruncatingClient:
    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def blocking_key_value_get(self, key, timeout_in_ms):
        return self._client.blocking_key_value_get(key, timeout_in_ms)[:-1]


_get_client = xla_client.get_distributed_runtime_client
_make_cpu_client = xla_client.make_cpu_client


def _broken_get_client(*args, **kwargs):
    return _TruncatingClient(_get_client(*args, **kwargs))


def _broken_make_cpu_client(*args, distributed_client=None, **kwargs):
    if isinstance(distributed_client, _TruncatingClient):
        distributed_client = distributed_client._client
    client = _make_cpu_client(*args, distributed_client=distributed_client, **kwargs)
    client.process_index = lambda: 1 - client.local_devices()[0].process_index
    return client


xla_client.get_distributed_runtime_client = _broken_get_client
xla_client.make_cpu_client = _broken_make_cpu_client
