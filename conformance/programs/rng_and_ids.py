"""Programs of ``test_stablehlo_ops`` that are not elementwise cases of the catalog:
``rng_bit_generator`` per algorithm, ``rng`` sample checks, and ``partition_id``/``replica_id`` in SPMD programs."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers


def rng_program(algorithm: str, dt: dtype_helpers.DType) -> Callable[[Any], Any]:
    """jax function: ``rng_bit_generator`` with ``algorithm`` (``DEFAULT``, ``THREE_FRY``,
    ``PHILOX``) from a uint64[2] state to (new state, ``dt`` bits of shape (64, 64))."""
    algo = getattr(lax.RandomAlgorithm, f"RNG_{algorithm}")
    return _rng_programs(algo, dt.dtype)


@functools.lru_cache(maxsize=None)
def _rng_programs(algo: Any, dtype: np.dtype) -> Callable[[Any], Any]:
    def program(state):
        return lax.rng_bit_generator(state, (64, 64), dtype, algorithm=algo)
    return program


def fraction_of_ones(bits: np.ndarray) -> float:
    """Fraction of one bits in an unsigned integer array (any width)."""
    as_bytes = np.ascontiguousarray(bits).view(np.uint8)
    return float(np.unpackbits(as_bytes).mean()) if as_bytes.size else 0.0


def partition_id_program(devices: list[Any]) -> tuple[Callable[[Any], Any], Any]:
    """(jax function, sharding): ``x + axis_index`` in a shard_map over a 1-d mesh of
    ``devices`` (lowers to ``stablehlo.partition_id``), x sharded along the mesh."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    try:
        from jax import shard_map
    except ImportError:  # older jax
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(devices), ("d",))
    spec = PartitionSpec("d")
    fn = shard_map(lambda x: x + lax.axis_index("d").astype(x.dtype), mesh=mesh,
                   in_specs=spec, out_specs=spec)
    return fn, NamedSharding(mesh, spec)


def as_replica_id(module_text: str) -> str:
    """``module_text`` with ``stablehlo.partition_id`` replaced by ``stablehlo.replica_id``
    (ValueError when it has no partition_id)."""
    if "stablehlo.partition_id" not in module_text:
        raise ValueError("module_text: no stablehlo.partition_id to replace")
    return module_text.replace("stablehlo.partition_id", "stablehlo.replica_id")


def check_uniform_interval(got: np.ndarray, a: float, b: float, *, call: str) -> None:
    """Every value of a ``rng`` UNIFORM result lies in the half-open [a, b) (StableHLO
    spec: "uniform distribution over the interval [a, b)"; ``b`` itself never). A spec
    property of every execution: raises :class:`~conformance.helpers.assertions.
    SpecPropertyViolation` (a wrong result even when a re-run passes) naming ``call``."""
    wide = np.asarray(got).astype(np.float64)
    outside = ~((wide >= a) & (wide < b))
    if np.any(outside):
        bad = wide[outside]
        raise assertions.SpecPropertyViolation(
            f"{int(outside.sum())} of {wide.size} values outside [{a}, {b}) (e.g. "
            f"{bad[0]!r}; {int((wide == b).sum())} equal b): min {wide.min()!r}, max "
            f"{wide.max()!r} [{call}]")


def check_rng_sample(got: np.ndarray, distribution: str, a: float, b: float,
                     shape: tuple[int, ...], dtype: Any, *, call: str) -> None:
    """Check one result of ``rng``: ``shape`` and ``dtype``; ``UNIFORM``: every value in
    [a, b) and the mean within 6 standard errors of (a + b) / 2 (integers: of
    (a + b - 1) / 2); ``NORMAL`` (mean ``a``, standard deviation ``b``): sample mean and
    standard deviation within 6 standard errors. Raises AssertionError naming ``call``."""
    got = np.asarray(got)
    assert got.shape == tuple(shape), f"shape {got.shape}, expected {tuple(shape)} [{call}]"
    assert got.dtype == np.dtype(dtype), f"dtype {got.dtype}, expected {np.dtype(dtype)} [{call}]"
    wide, n = got.astype(np.float64), got.size
    if distribution == "UNIFORM":
        check_uniform_interval(got, a, b, call=call)
        top = b - 1 if np.dtype(dtype).kind in "iu" else b
        width = b - a + (1 if np.dtype(dtype).kind in "iu" else 0)
        mean, sigma = (a + top) / 2, width / np.sqrt(12)
    elif distribution == "NORMAL":
        mean, sigma = a, b
        spread = wide.std()
        assert abs(spread - sigma) <= 6 * sigma / np.sqrt(2 * n), (
            f"sample standard deviation {spread:.4f}, expected {sigma} [{call}]")
    else:
        raise ValueError(f"distribution: expected 'UNIFORM' or 'NORMAL', got {distribution!r}")
    assert abs(wide.mean() - mean) <= 6 * sigma / np.sqrt(n), (
        f"sample mean {wide.mean():.4f}, expected {mean} (6 sigma {6 * sigma / np.sqrt(n):.4f})"
        f" [{call}]")


def ring_permute_program(devices: list[Any]) -> tuple[Callable[[Any], Any], Any]:
    """(jax function, sharding): ``ppermute`` one step around a ring of ``devices`` in a
    shard_map (lowers to ``stablehlo.collective_permute``), x sharded along the mesh."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    try:
        from jax import shard_map
    except ImportError:  # older jax
        from jax.experimental.shard_map import shard_map

    n = len(devices)
    mesh, spec = Mesh(np.array(devices), ("d",)), PartitionSpec("d")
    fn = shard_map(lambda x: lax.ppermute(x, "d", [(i, (i + 1) % n) for i in range(n)]),
                   mesh=mesh, in_specs=spec, out_specs=spec)
    return fn, NamedSharding(mesh, spec)


_PERMUTE = re.compile(r'"stablehlo\.collective_permute"(\(%[\w#]+\)) <\{(channel_handle = '
                      r"#stablehlo\.channel_handle<[^>]*>), source_target_pairs = "
                      r"dense<[^>]*> : tensor<\w+>\}>")


def as_collective_broadcast(module_text: str, n: int) -> str:
    """``module_text`` with its ``collective_permute`` replaced by a
    ``collective_broadcast`` over one group of all ``n`` partitions (the first
    partition's shard to all). ValueError when it has no collective_permute."""
    new, count = _PERMUTE.subn(
        lambda m: (f'"stablehlo.collective_broadcast"{m.group(1)} <{{{m.group(2)}, '
                   f"replica_groups = dense<[[{', '.join(map(str, range(n)))}]]> : "
                   f"tensor<1x{n}xi64>}}>"), module_text)
    if not count:
        raise ValueError("module_text: no stablehlo.collective_permute to replace")
    return new
