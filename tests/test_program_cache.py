"""The one lowering + compile cache: plain and sharded programs, the benchmarks' too."""

from __future__ import annotations

import numpy as np
import pytest
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.programs import compiled_programs
from runtime import xla_client


@pytest.fixture(scope="module")
def client():
    """A runtime CPU client of two devices: the suite's own ``client`` fixture exists
    only in a run that collects the suite, and this file also runs alone."""
    return xla_client.make_cpu_client(num_devices=2)


def test_plain_programs_compile_once_per_signature(client):
    cache = compiled_programs.ProgramCache(client)
    device = client.local_devices()[0]
    x = np.ones(3, np.float32)
    exe, text = cache.load("negate", lax.neg, [x], [device])
    assert "@jit_negate" in text and (cache.compiles, cache.hits) == (1, 0)
    assert cache.load("negate", lax.neg, [((3,), "float32")], [device])[0] is exe
    cache.load("negate", lax.neg, [np.ones(4, np.float32)], [device])
    assert (cache.compiles, cache.hits) == (2, 1)


def test_sharded_programs_are_keyed_by_name_not_function(client):
    devices = client.local_devices()[:2]
    sharding = NamedSharding(Mesh(np.array(devices), ("x",)), PartitionSpec("x"))
    cache = compiled_programs.ProgramCache(client)
    x = np.arange(4, dtype=np.float32)
    first, text = cache.load_sharded("inc", lambda a: a + 1, [x], [sharding], sharding)
    again, _ = cache.load_sharded("inc", lambda a: a + 1, [x], [sharding], sharding)
    assert again is first and (cache.compiles, cache.hits) == (1, 1)
    assert "mhlo.num_partitions = 2" in text


def test_lower_names_and_donates(client):
    x = np.zeros(4, np.float32)
    text = compiled_programs.lower(lambda a: a * 2, [x], "cpu", name="double it")
    assert "@jit_double_it" in text and "tf.aliasing_output" not in text
    sharding = NamedSharding(Mesh(np.array(client.local_devices()[:1]), ("x",)),
                             PartitionSpec("x"))
    donated = compiled_programs.lower(lambda a: a * 2, [x], "cpu", in_shardings=[sharding],
                                      out_shardings=sharding, donate=(0,))
    assert "tf.aliasing_output" in donated


def test_avals_of_rejects_other_arguments():
    assert compiled_programs.avals_of([np.zeros((2, 3), np.int8), ((), "float32")]) == (
        ((2, 3), "int8"), ((), "float32"))
    with pytest.raises(TypeError, match="argument 1 must be an array or a"):
        compiled_programs.avals_of([np.zeros(2), 3.0])


def test_benchmarks_compile_through_the_suite_cache(monkeypatch):
    from benchmarks import backend

    monkeypatch.setenv("PJRT_BENCH_CPU_DEVICES", "1")
    cache = backend.program_cache()
    exe = backend.compiled(lax.neg, ((5,), np.float32))
    compiles, hits = cache.compiles, cache.hits
    assert backend.compiled(lax.neg, ((5,), np.float32)) is exe
    assert (cache.compiles, cache.hits) == (compiles, hits + 1) and compiles >= 1
