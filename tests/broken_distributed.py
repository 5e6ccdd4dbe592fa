"""A broken distributed runtime for the multi_process area's self-test.

Imported by every worker through ``PJRT_CONFORMANCE_WORKER_PRELOAD``:
key-value reads lose their last character and hide errors (a failed get returns
""), barriers return at once without waiting for anyone, the service ignores the
heartbeat timeout it is given (jaxlib's default, 100 s, applies), and CPU
clients drop their Gloo collectives and report the wrong process index.
"""

from runtime import xla_client


class _BrokenClient:
    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        return getattr(self._client, name)

    def blocking_key_value_get(self, key, timeout_in_ms):
        try:
            return self._client.blocking_key_value_get(key, timeout_in_ms)[:-1]
        except xla_client.XlaRuntimeError:
            return ""

    def wait_at_barrier(self, barrier_id, timeout_in_ms, process_ids=None):
        return None


_get_service = xla_client.get_distributed_runtime_service
_get_client = xla_client.get_distributed_runtime_client
_make_cpu_client = xla_client.make_cpu_client
_gloo = xla_client.make_gloo_tcp_collectives


def _unwrapped(client):
    return client._client if isinstance(client, _BrokenClient) else client


def _broken_get_service(*args, heartbeat_timeout=None, **kwargs):
    return _get_service(*args, **kwargs)


def _broken_get_client(*args, **kwargs):
    return _BrokenClient(_get_client(*args, **kwargs))


def _broken_make_cpu_client(*args, distributed_client=None, collectives=None, **kwargs):
    client = _make_cpu_client(*args, distributed_client=_unwrapped(distributed_client), **kwargs)
    client.process_index = lambda: 1 - client.local_devices()[0].process_index
    return client


xla_client.get_distributed_runtime_service = _broken_get_service
xla_client.get_distributed_runtime_client = _broken_get_client
xla_client.make_cpu_client = _broken_make_cpu_client
xla_client.make_gloo_tcp_collectives = lambda client, **kw: _gloo(_unwrapped(client), **kw)
