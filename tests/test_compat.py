"""``runtime._compat``, the one place where jaxlib releases differ, on whichever release
is installed (run it in each environment of the release matrix).

Each difference is checked two ways: the branch the seam takes works on this release,
and the branch it does not take would be wrong here (so a seam that picked the wrong
branch fails). The branches taken are recorded as the test's ``user_properties``
(``pytest --junitxml`` / ``-rA`` shows them); on the releases tested they are:

==========================  ===========================  ==============================
jaxlib                      ``result_handler``           ``c_api``
==========================  ===========================  ==============================
0.8.0 (also 0.7.1)          4 parameters (_skip_checks)  platform_version / attributes
0.10.0, 0.10.2, 0.11.0/1    4 parameters (_skip_checks)  platform_version / attributes
0.11.2, 0.12.0, 0.12.0.1    3 parameters                 client.is_c_api
==========================  ===========================  ==============================

``recoverable`` (the distributed runtime): on the client up to 0.8.0 (0.7.1 too), on the
service from 0.10.0. ``device_put``: no ``enable_x64`` keyword on 0.7.1 only, where
``test_device_put_keeps_64_bit_dtypes`` fails (2**40 arrives as 0): 0.7.1 is not supported.
"""

from __future__ import annotations

import importlib.util
import uuid

import jax
import numpy as np
import pytest

from benchmarks import backend
from runtime import _compat, versions, xla_bridge, xla_client
from runtime._compat import native
from runtime._plugins import loaded_library  # private: the header the loader probed


def _outputs(x):
    return x + 1, (x * 2).astype(np.int32)


def test_result_handler_builds_the_arrays_execute_returns(record_property):
    record_property("jaxlib", versions.JAXLIB_VERSION)
    record_property("result_handler", _compat.branches()["result_handler"])
    exe = backend.compiled(_outputs, ((2, 3), np.float32))
    args = [backend.put(np.arange(6, dtype=np.float32).reshape(2, 3))]
    expected = exe.native.execute(args)  # jaxlib's own Python execute
    handlers = [_compat.result_handler(_compat.shaped_array(x.shape, x.dtype), x.sharding,
                                       x.committed) for x in expected]
    got = exe.native.execute_sharded(args).consume_with_handlers(handlers)
    assert [(np.asarray(g).tolist(), g.dtype, g.sharding, g.committed) for g in got] == \
        [(np.asarray(e).tolist(), e.dtype, e.sharding, e.committed) for e in expected]


def test_result_handler_branch_matches_what_this_release_accepts():
    """The seam passes ``_skip_checks`` exactly where jaxlib takes it: a call with the
    keyword is a TypeError on the releases where the seam leaves it out."""
    exe = backend.compiled(_outputs, ((), np.float32))
    x = exe.native.execute([backend.put(np.float32(1))])[0]
    aval = _compat.shaped_array(x.shape, x.dtype)
    if _compat._RESULT_HANDLER_SKIPS_CHECKS:
        assert native.array_result_handler(aval, x.sharding, x.committed, _skip_checks=True)
    else:
        with pytest.raises(TypeError):
            native.array_result_handler(aval, x.sharding, x.committed, _skip_checks=True)


def test_builtin_cpu_client_is_not_a_c_api_client(record_property):
    client = xla_client.make_cpu_client(num_devices=1)
    record_property("c_api", _compat.branches(client)["c_api"])
    assert _compat.is_c_api_client(client) is False
    assert _compat.is_c_api_client(client.native) is False
    assert _compat.pjrt_c_api_version(client) is None


def test_c_api_answer_agrees_with_jax_on_its_own_cpu_backend():
    from jax._src import xla_bridge as jax_xla_bridge

    jax_client = jax.devices("cpu")[0].client
    assert _compat.is_c_api_client(jax_client) is bool(jax_xla_bridge.using_pjrt_c_api("cpu"))


def test_c_api_fallback_is_wrong_where_clients_say_is_c_api():
    """Where jaxlib's clients carry ``is_c_api`` (0.11.2+), the older rule (platform_version
    or a C API version attribute) calls the built-in CPU client a plugin; before, the
    attribute does not exist and the rule is the only one."""
    client = xla_client.make_cpu_client(num_devices=1).native
    fallback = "PJRT C API" in client.platform_version or \
        _compat._client_attribute(client, "pjrt_c_api_major_version") is not None
    if _compat._has_is_c_api(client):
        assert fallback is True and client.is_c_api is False
    else:
        assert fallback is False


class _Reports:
    """A client as far as the C API check looks at it (``None``: attribute absent)."""

    def __init__(self, platform_version, is_c_api=None, version=None):
        self.platform_version = platform_version
        if is_c_api is not None:
            self.is_c_api = is_c_api
        if version is not None:
            self.pjrt_c_api_major_version, self.pjrt_c_api_minor_version = version


@pytest.mark.parametrize("client,uses,version", [
    (_Reports("PJRT C API\ncpu", version=(0, 81)), True, (0, 81)),      # jaxlib 0.10 plugin
    (_Reports("cuda 13000", version=(0, 90)), True, (0, 90)),           # 0.11.0 GPU plugin
    (_Reports("cpu"), False, None),                                     # 0.10 built-in
    (_Reports("cpu", is_c_api=False, version=(0, 0)), False, None),     # 0.11.2+ built-in
    (_Reports("cpu", is_c_api=True, version=(0, 106)), True, (0, 106)),  # 0.11.2+ plugin
], ids=["old-plugin", "old-gpu-plugin", "old-builtin", "new-builtin", "new-plugin"])
def test_c_api_rule_on_each_kind_of_client(client, uses, version):
    assert _compat.is_c_api_client(client) is uses
    assert _compat.pjrt_c_api_version(client) == version


def _plugin_library():
    if importlib.util.find_spec("fastatomstruct_xla_cpu") is None:
        return None
    import fastatomstruct_xla_cpu

    return fastatomstruct_xla_cpu.library_path()


@pytest.mark.skipif(_plugin_library() is None,
                    reason="fastatomstruct-xla-cpu (the test extra) is not installed")
def test_real_plugin_is_a_c_api_client_of_its_header_version(record_property):
    name = f"compat-{uuid.uuid4().hex[:8]}"
    xla_client.load_pjrt_plugin_dynamically(name, _plugin_library())
    client = xla_client.make_c_api_client(name)
    record_property("c_api", _compat.branches(client)["c_api"])
    assert _compat.is_c_api_client(client) and xla_bridge.using_pjrt_c_api(client)
    header = tuple(loaded_library(name).api_version)  # read from the library, not the client
    assert header != (0, 0)
    assert _compat.pjrt_c_api_version(client) == header
    assert xla_bridge.backend_pjrt_c_api_version(client) == header


def test_device_put_keeps_64_bit_dtypes():
    client = xla_client.make_cpu_client(num_devices=1)
    x = np.array([2**40, -3], np.int64)
    out = client.buffer_from_pyval(x)
    assert out.dtype == np.int64 and np.asarray(out).tolist() == x.tolist()


def test_recoverable_goes_to_the_factory_that_takes_it(record_property):
    """``recoverable`` is a keyword of exactly one distributed runtime factory (the service
    from jaxlib 0.10, the client on 0.7/0.8): the seam passes it there, the other factory
    of the runtime refuses ``recoverable=True`` naming the argument, and jaxlib's own other
    factory has no such keyword (so a seam that picked the wrong one fails)."""
    on = _compat.distributed_recoverable_on()
    record_property("recoverable", _compat.branches()["recoverable"])
    assert on in ("service", "client")
    other = "client" if on == "service" else "service"
    native_other = getattr(_compat.native_jax, f"get_distributed_runtime_{other}")
    assert not _compat._accepts(native_other, "recoverable")
    with pytest.raises(TypeError):
        native_other("localhost:1", 1, recoverable=False)
    refuse = getattr(xla_client, f"get_distributed_runtime_{other}")
    with pytest.raises(ValueError, match="argument 'recoverable'"):
        refuse("localhost:1", 1, recoverable=True)
    if on == "client":  # creating a client does not connect; the keyword is accepted
        client = xla_client.get_distributed_runtime_client("localhost:1", 0, recoverable=True,
                                                           shutdown_on_destruction=False)
        assert isinstance(client, xla_client.DistributedRuntimeClient)
