"""SPMD programs over a mesh: sharded inputs and outputs, and collectives in StableHLO.

Programs are jax functions (``jax.shard_map`` for collectives) lowered for the
platform under test with explicit input and output shardings and compiled through
``runtime`` for the mesh's devices, both by :mod:`conformance.programs.compiled_programs`, and run
with ``execute_sharded``. The
outputs come back as one single-device array per device; :func:`assemble`
builds the global array from them and checks that replicas agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from conformance.helpers import sharding_helpers
from conformance.programs import compiled_programs
from conformance.programs import coverage


@dataclasses.dataclass(frozen=True)
class Collective:
    """A collective over one mesh axis: ``body(block, axis, size)`` runs per device under
    ``shard_map`` on a 2-D block; ``out_spec(axis, other)`` places its result;
    ``reference(blocks)`` computes the output blocks from the input blocks
    (``blocks[i][j]``: the block of mesh row ``i`` along the other axis and column
    ``j`` along the collective's axis)."""

    name: str
    body: Callable[[Any, str, int], Any]
    out_spec: Callable[[str, str | None], PartitionSpec]
    reference: Callable[[list[list[np.ndarray]]], list[list[np.ndarray]]]


def _sum_over_group(blocks):
    return [[sum(row)] * len(row) for row in blocks]


def _gather(blocks):
    return [[np.concatenate(row, axis=1)] * len(row) for row in blocks]


def _scatter_sum(blocks):
    out = []
    for row in blocks:
        total = sum(row)
        out.append(np.split(total, len(row), axis=1))
    return out


def _all_to_all(blocks):
    out = []
    for row in blocks:
        n = len(row)
        pieces = [np.split(b, n, axis=0) for b in row]          # pieces[src][dst]
        out.append([np.concatenate([pieces[src][dst] for src in range(n)], axis=1)
                    for dst in range(n)])
    return out


def _shift(blocks):
    return [[row[(j - 1) % len(row)] for j in range(len(row))] for row in blocks]


def _spec(axis: str, other: str | None, *, keep_axis: bool) -> PartitionSpec:
    return PartitionSpec(other, axis if keep_axis else None)


COLLECTIVES = {c.name: c for c in [
    Collective("all_reduce", lambda b, a, n: lax.psum(b, a),
               lambda a, o: _spec(a, o, keep_axis=False), _sum_over_group),
    Collective("all_gather", lambda b, a, n: lax.all_gather(b, a, axis=1, tiled=True),
               lambda a, o: _spec(a, o, keep_axis=False), _gather),
    Collective("reduce_scatter",
               lambda b, a, n: lax.psum_scatter(b, a, scatter_dimension=1, tiled=True),
               lambda a, o: _spec(a, o, keep_axis=True), _scatter_sum),
    Collective("all_to_all",
               lambda b, a, n: lax.all_to_all(b, a, split_axis=0, concat_axis=1, tiled=True),
               lambda a, o: _spec(a, o, keep_axis=True), _all_to_all),
    Collective("collective_permute",
               lambda b, a, n: lax.ppermute(b, a, perm=[(j, (j + 1) % n) for j in range(n)]),
               lambda a, o: _spec(a, o, keep_axis=True), _shift),
]}


def lower(fn: Callable[..., Any], args: list[np.ndarray], in_shardings: list[Any],
          out_shardings: Any, platform: str, donate: tuple[int, ...] = ()) -> str:
    """:func:`conformance.programs.compiled_programs.lower` of ``fn`` at ``args``' avals
    with the given shardings for ``platform``; arguments in ``donate`` are donated."""
    return compiled_programs.lower(fn, args, platform, in_shardings=in_shardings,
                                   out_shardings=out_shardings, donate=donate)


def assemble(arrays: list[Any], sharding: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, str]:
    """Global host array from one single-device array per device, and a problem
    description ('' when every device's shard has the right shape and replicas agree)."""
    index = sharding.devices_indices_map(shape)
    out, seen = None, {}
    for arr in arrays:
        device = next(iter(arr.devices()))
        host = np.asarray(arr)
        if out is None:
            out = np.zeros(shape, dtype=host.dtype)
        where = index[device]
        if host.shape != out[where].shape:
            return out, f"shard on {device} has shape {host.shape}, expected {out[where].shape}"
        key = tuple((s.start, s.stop) for s in where)
        if key in seen and not np.array_equal(seen[key], host, equal_nan=host.dtype.kind in "fc"):
            return out, f"replicas of index {where} disagree ({device} differs)"
        seen[key] = host
        out[where] = host
    return out, ""


class ShardedRunner:
    """Runs sharded programs on one client; executables come from a
    :class:`~conformance.programs.compiled_programs.ProgramCache` (``cache``; default: a new one),
    keyed by (program name, avals, shardings, device order). ``xc``: the client's
    ``xla_client`` module, used to place the inputs."""

    def __init__(self, client: Any, xc: Any, cache: compiled_programs.ProgramCache | None = None):
        self.client, self.xc = client, xc
        self.cache = cache if cache is not None else compiled_programs.ProgramCache(client)

    @property
    def compiles(self) -> int:
        """Compilations so far by this runner's cache."""
        return self.cache.compiles

    def run(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
            in_shardings: list[NamedSharding], out_sharding: NamedSharding,
            out_shape: tuple[int, ...]) -> tuple[np.ndarray, str, str, Any]:
        """(global output, problem, StableHLO text, executable) of ``fn`` on ``args``."""
        exe, text = self.cache.load_sharded(name, fn, args, in_shardings, out_sharding)
        arrays = [sharding_helpers.put_sharded(a, s, xc=self.xc)
                  for a, s in zip(args, in_shardings)]
        per_output = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
        coverage.note_executed(text)
        out, problem = assemble(per_output[0], out_sharding, out_shape)
        return out, problem, text, exe


    def run_outputs(self, name: str, fn: Callable[..., Any], args: list[np.ndarray],
                    in_shardings: list[NamedSharding],
                    out_sharding: NamedSharding | Sequence[NamedSharding],
                    out_shapes: list[tuple[int, ...]]
                    ) -> tuple[list[tuple[np.ndarray, str]], str]:
        """Every output of ``fn`` on ``args`` (``out_sharding`` applies to each, or a
        sequence: one sharding per output, ``fn`` returning a tuple): a list of (global
        output, problem) in order, and the StableHLO text. AssertionError when the
        executable returns another number of outputs."""
        per = list(out_sharding) if isinstance(out_sharding, (list, tuple)) else None
        exe, text = self.cache.load_sharded(name, fn, args, in_shardings,
                                            tuple(per) if per else out_sharding)
        arrays = [sharding_helpers.put_sharded(a, s, xc=self.xc)
                  for a, s in zip(args, in_shardings)]
        per_output = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
        coverage.note_executed(text)
        assert len(per_output) == len(out_shapes), (
            f"execute_sharded returned {len(per_output)} outputs, but the program has "
            f"{len(out_shapes)} [{name}]")
        return [assemble(o, per[k] if per else out_sharding, shape)
                for k, (o, shape) in enumerate(zip(per_output, out_shapes))], text


def collective_case(mesh: Mesh, axis: str, collective: Collective, block: tuple[int, int],
                    dtype: Any, rng: np.random.Generator):
    """(fn, x, in_sharding, out_sharding, expected, out_shape) for ``collective`` over
    ``axis`` of a 1-D or 2-D ``mesh``; blocks are ``block``-shaped."""
    names = list(mesh.axis_names)
    other = next((n for n in names if n != axis), None)
    rows = mesh.shape[other] if other else 1
    cols = mesh.shape[axis]
    b0, b1 = block
    x = (rng.integers(-8, 8, size=(rows * b0, cols * b1))).astype(dtype)
    blocks = [[x[i * b0:(i + 1) * b0, j * b1:(j + 1) * b1] for j in range(cols)]
              for i in range(rows)]
    out_blocks = collective.reference(blocks)
    in_spec = PartitionSpec(other, axis)
    out_spec = collective.out_spec(axis, other)
    # check_vma=False: jax cannot infer that a tiled all_gather output is replicated.
    fn = jax.shard_map(lambda b: collective.body(b, axis, cols), mesh=mesh, in_specs=in_spec,
                       out_specs=out_spec, check_vma=False)
    if out_spec[1] is None:           # replicated along the axis: one block per row
        expected = np.concatenate([row[0] for row in out_blocks], axis=0)
    else:
        expected = np.concatenate([np.concatenate(row, axis=1) for row in out_blocks], axis=0)
    return (fn, x, NamedSharding(mesh, in_spec), NamedSharding(mesh, out_spec), expected,
            expected.shape)
