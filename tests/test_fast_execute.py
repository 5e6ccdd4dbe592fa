"""``runtime._fast_execute.FastExecute``: the same results as ``execute`` (values, shapes,
dtypes, shardings, committedness) on the first call and on the handler path after it."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import backend
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


def test_describe_tells_apart_a_result_with_the_wrong_sharding():
    """The comparison above fails when a result lands on another device."""
    exe = backend.compiled(_two_outputs, ((), np.float32), ((), np.float32))
    args = [backend.put(np.float32(1)), backend.put(np.float32(2))]
    good = exe.execute(args)
    moved = [backend.put(np.asarray(good[0]), index=1), good[1]]
    assert _describe(moved) != _describe(good)


def test_fast_execute_rejects_a_non_executable():
    with pytest.raises(TypeError, match="executable"):
        FastExecute(object())
