"""The CPU staging path of ``buffer_from_pyval`` (issue 20 part 5): which requests are
staged, that a staged copy is exact and never aliases the caller's array, and that
the ratio benchmark runs. No timing is asserted here: performance claims come from
``benchmarks/transfer_paths.py``."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from benchmarks import transfer_paths
from runtime import _transfer, xla_client
from runtime.xla_client import HostBufferSemantics

MIB = 1 << 20


@pytest.fixture(scope="module")
def cpu():
    client = xla_client.make_cpu_client(num_devices=1)
    return client, client.local_devices()[0]


def _offset(nbytes: int, offset: int, dtype=np.float32) -> np.ndarray:
    """Random data of ``nbytes`` starting ``offset`` bytes past a 64-byte line."""
    raw = np.random.default_rng(0).integers(0, 255, nbytes + 128, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + nbytes].view(dtype)


@pytest.mark.parametrize("offset", [0, 4, 16, 32])
@pytest.mark.parametrize("force_copy", [False, True])
@pytest.mark.parametrize("semantics", ["ZERO_COPY", "IMMUTABLE_ONLY_DURING_CALL",
                                       "IMMUTABLE_UNTIL_TRANSFER_COMPLETES"])
def test_only_an_aliasable_zero_copy_request_is_aliased(cpu, offset, force_copy, semantics):
    client, dev = cpu
    host = _offset(2 * MIB, offset)
    expected = host.copy()
    x = client.buffer_from_pyval(host, dev, force_copy=force_copy,
                                 host_buffer_semantics=getattr(HostBufferSemantics, semantics))
    x.block_until_ready()
    aliased = x.unsafe_buffer_pointer() == host.ctypes.data
    assert aliased == (semantics == "ZERO_COPY" and not force_copy and offset == 0)
    if not aliased:  # staged: a private 64-byte aligned copy the caller cannot change
        assert x.unsafe_buffer_pointer() % 64 == 0
        host[...] = 0
    np.testing.assert_array_equal(np.asarray(x), expected if not aliased else host)


def test_unaligned_zero_copy_is_staged_only_on_the_builtin_cpu_client(cpu):
    client, _ = cpu
    unaligned, aligned = _offset(2 * MIB, 16), _offset(2 * MIB, 0)
    zc = HostBufferSemantics.ZERO_COPY
    assert _transfer._stage_on_cpu(client.native, unaligned, False, zc)
    assert not _transfer._stage_on_cpu(client.native, aligned, False, zc)
    assert _transfer._stage_on_cpu(client.native, aligned, True, zc)
    assert not _transfer._stage_on_cpu(client.native, _offset(MIB // 2, 16), False, zc)


@pytest.mark.parametrize("host", [
    np.arange(3 * MIB + 5, dtype=np.float32),                      # chunks + a partial one
    np.arange(6 * MIB, dtype=np.int8).reshape(2, -1)[:, ::3],      # not contiguous
    np.arange(MIB, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(8, -1),
    np.zeros((0, 4), np.complex64),
], ids=["partial-chunk", "strided", "bfloat16-2d", "empty"])
@pytest.mark.parametrize("chunk", [_transfer.STAGE_CHUNK_BYTES, 4096 + 4])
def test_staged_copy_is_exact_aligned_and_private(monkeypatch, host, chunk):
    monkeypatch.setattr(_transfer, "STAGE_CHUNK_BYTES", chunk)
    out = _transfer.staged_copy(host)
    assert out.flags.c_contiguous and (host.size == 0 or out.ctypes.data % 64 == 0)
    assert out.shape == host.shape and out.dtype == host.dtype
    np.testing.assert_array_equal(out, host)
    assert not np.shares_memory(out, host)


def test_the_exactness_check_catches_a_copy_that_drops_the_last_chunk(monkeypatch):
    """The check above fails on a staged copy that stops one chunk early."""
    def broken(host):
        out = np.zeros_like(host)
        flat_out, flat_in = out.reshape(-1), host.reshape(-1)
        step = _transfer.STAGE_CHUNK_BYTES // host.itemsize
        for i in range(0, flat_in.size - step, step):
            flat_out[i:i + step] = flat_in[i:i + step]
        return out
    monkeypatch.setattr(_transfer, "staged_copy", broken)
    host = np.arange(3 * MIB + 5, dtype=np.float32)
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(_transfer.staged_copy(host), host)


def test_ratio_benchmark_measures_every_path_side_by_side():
    got = transfer_paths.ratios(2 * MIB, reps=1)
    assert set(got) == set(transfer_paths.PATHS)
    assert all(math.isfinite(r) and r > 0 for r in got.values())


@pytest.mark.parametrize("call, arg", [
    (lambda: transfer_paths.path_function("h2d_bogus", MIB), "path"),
    (lambda: transfer_paths.paired_ratios(lambda: None, {"f": lambda: None}, reps=0), "reps"),
])
def test_ratio_benchmark_rejects_bad_arguments(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()
