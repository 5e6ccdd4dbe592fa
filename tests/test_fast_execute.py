"""``runtime._fast_execute.FastExecute``: the same results as ``execute`` (values, shapes,
dtypes, shardings, committedness) on the first call and on the handler path after it."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import backend
from runtime._compat import native
from runtime._fast_execute import FastExecute


def _two_outputs(x, y):
    return x + y, (x * 2).astype(np.int32)


def _describe(arrays):
    return [(np.asarray(a).tolist(), a.shape, a.dtype, a.sharding, a.committed) for a in arrays]


@pytest.mark.parametrize("shape", [(), (3, 5)])
def test_fast_execute_matches_execute_on_every_call(shape):
    exe = backend.compiled(_two_outputs, (shape, np.float32), (shape, np.float32))
    rng = np.random.default_rng(1)
    fast = FastExecute(exe)
    for _ in range(3):  # first call learns, later calls use the C++ result handlers
        args = [backend.put(rng.standard_normal(shape).astype(np.float32)) for _ in range(2)]
        assert _describe(fast(args)) == _describe(exe.execute(args))
    assert fast.handlers is not None and len(fast.handlers) == 2


@pytest.fixture
def two_device_backend(monkeypatch):
    """The benchmarks' backend with 2 CPU devices (another test of this worker may have
    cached a 1-device client through PJRT_BENCH_CPU_DEVICES=1)."""
    monkeypatch.setenv("PJRT_BENCH_CPU_DEVICES", "2")
    backend._client.cache_clear()
    backend._program_cache.cache_clear()
    yield backend
    backend._client.cache_clear()
    backend._program_cache.cache_clear()


def test_describe_tells_apart_a_result_with_the_wrong_sharding(two_device_backend):
    """The comparison above fails when a result lands on another device."""
    exe = backend.compiled(_two_outputs, ((), np.float32), ((), np.float32))
    args = [backend.put(np.float32(1)), backend.put(np.float32(2))]
    good = exe.execute(args)
    moved = [backend.put(np.asarray(good[0]), index=1), good[1]]
    assert _describe(moved) != _describe(good)


def test_fast_execute_rejects_a_non_executable():
    with pytest.raises(TypeError, match="executable"):
        FastExecute(object())


def test_compile_and_load_returns_the_fast_executable():
    """``Client.compile_and_load``'s executable: ``execute`` is the fast path, results as
    jaxlib's own ``execute`` on every call, everything else the native executable's."""
    from runtime import xla_client

    exe = backend.compiled(_two_outputs, ((4,), np.float32), ((4,), np.float32))
    assert isinstance(exe, xla_client.LoadedExecutable) and exe.handlers is None
    assert isinstance(exe.native, native.LoadedExecutable)  # jaxlib's own
    rng = np.random.default_rng(2)
    for _ in range(3):
        args = [backend.put(rng.standard_normal(4).astype(np.float32)) for _ in range(2)]
        assert _describe(exe.execute(args)) == _describe(exe.native.execute(args))
    assert exe.handlers is not None and len(exe.handlers) == 2
    assert exe.hlo_modules()[0].to_string() == exe.native.hlo_modules()[0].to_string()
    assert exe == exe.native and hash(exe) == hash(exe.native)


def test_loaded_executable_is_listed_and_round_trips():
    import gc

    from runtime import xla_client

    client = backend.client()
    text = backend.program_cache().load("_two_outputs", _two_outputs,
                                        (((), np.float32), ((), np.float32)),
                                        [backend.device(0)])[1]  # the cache's own compile first
    gc.collect()
    before = len(client.live_executables())
    exe = backend.program_cache().client.compile_and_load(text, [backend.device(0)])
    assert id(exe) in {id(x) for x in client.live_executables()}
    assert len(client.live_executables()) == before + 1
    again = client.deserialize_executable(client.serialize_executable(exe), [backend.device(0)])
    assert isinstance(again, xla_client.LoadedExecutable)
    args = [backend.put(np.float32(1.5)), backend.put(np.float32(2))]
    assert _describe(again.execute(args)) == _describe(exe.execute(args))
    del exe, again
    gc.collect()
    assert len(client.live_executables()) == before


def test_loaded_executable_rejects_a_non_executable():
    from runtime.xla_client import LoadedExecutable

    with pytest.raises(TypeError, match="native_executable"):
        LoadedExecutable(object())
