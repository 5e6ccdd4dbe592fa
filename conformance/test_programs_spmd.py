"""Area programs_spmd: ordinary programs the SPMD partitioner must insert communication for.

The xla_client API's ``LoadedExecutable.execute_sharded`` with ``NamedSharding`` inputs and
outputs. Each program is plain jax (no ``shard_map``, no hand-written collective) lowered
with drawn ``NamedSharding`` inputs and outputs over a 2-axis mesh of every factorisation of
the device count (``(1, n)`` and ``(n, 1)`` included, devices in a drawn order), so
XLA's SPMD partitioner decides the all-reduces, all-gathers, all-to-alls and
collective-permutes:

- a hand-picked set (:data:`CASES`): a sum and a max over sharded axes, a dot with a
  sharded contracting dimension, a batched dot with sharded batch and contracting
  dimensions, a transpose and a reshape across shards, a gather and a scatter-add on
  sharded operands, a cumsum along a sharded axis, and a reshard between two ops;
- generated programs (:mod:`conformance.programs.dag_strategy`, all three families)
  whose parameters and outputs are sharded by drawn PartitionSpecs (an output along
  any dimension its mesh axes divide, or replicated; outputs stay replicated in a
  program with a pad with interior padding, pinned once by
  :func:`test_pad_with_interior_padding_into_a_sharded_result`). Their dynamic_slice and
  dynamic_update_slice starts are drawn inside, at and past the dimensions (clamped), but
  for the configurations of two partitioner defects, each pinned once, whose starts are
  drawn in range when the program is partitioned (a parameter or output sharded):
  a one-element update of a dynamic_update_slice
  (:func:`test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start`,
  openxla/xla#49118) and a dynamic_slice of 2 or more elements along the dimension, not
  all of it (:func:`test_dynamic_slice_with_a_sharded_result_clamps_its_start`,
  openxla/xla#49122; only where the defect catalog does not measure it fixed: not on
  jaxlib's CPU client from 0.12.0 on). See ``dag_strategy.avoided_starts``. They draw no
  one-element slice of a pad's high padding: XLA's partitioner aborts the compile, pinned
  once by :func:`test_slice_of_high_padding_of_a_sharded_dimension_compiles` (in a child
  process).

Oracles: int32 and data-movement results bit for bit against NumPy; float32 results
within the error bound of their float64 evaluation (``n * eps * magnitude`` for the
hand-picked set, the running error bound for generated programs), which also bounds
the unpartitioned program. On a failure the same program runs unpartitioned on the
first device; when that passes, the note says the partitioned program alone is
wrong (the SPMD partitioner's or the collectives' defect in the plugin).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from conformance.certification.catalog import defect_catalog
from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.helpers import sharding_helpers
from conformance.helpers import strategies
from conformance.helpers.reproduction import placement, reproduction
from conformance.programs import dag_strategy
from conformance.programs import sharded_programs
from conformance.test_programs import check_outputs


@pytest.fixture(scope="session")
def runner(client, xc, program_cache):
    return sharded_programs.ShardedRunner(client, xc, program_cache)


@dataclasses.dataclass(frozen=True)
class Case:
    """A hand-picked SPMD program: ``make(mesh)`` its jax function; ``shapes(mx, my, b)`` its argument shapes
    for mesh sizes ``mx``, ``my`` and a block count ``b``; ``in_specs`` and
    ``out_spec``; ``reference``: the same math in NumPy (float64 or wrapping int32);
    ``roundings(shapes)``: roundings on the longest path of a float32 result."""

    name: str
    make: Callable[[Mesh], Callable[..., Any]]
    shapes: Callable[[int, int, int], list[tuple[int, ...]]]
    in_specs: tuple[P, ...]
    out_spec: P
    reference: Callable[..., np.ndarray]
    roundings: Callable[[list[tuple[int, ...]]], int]


_GATHER_AT = np.array([0, 5, 2, 5, 1, 99, -1], np.int32)   # repeats, clipped past both ends
_SCATTER_AT = np.array([0, 3, 3, 1], np.int32)              # a repeated row: two adds


def _np_take(x, at, axis=0):
    return np.take(x, np.clip(at, 0, x.shape[axis] - 1), axis=axis)


def _np_scatter(x, u):
    out = x.copy()
    np.add.at(out, _SCATTER_AT, u)
    return out


def _two(mx, my, b):
    return [(mx * my * b, mx * my * (b + 1))]


CASES = [
    Case("sum_over_sharded_axis", lambda m: lambda x: jnp.sum(x * 2 + 1, axis=1, dtype=x.dtype),
         _two, (P("x", "y"),), P(), lambda x: np.sum(x * 2 + 1, axis=1, dtype=x.dtype),
         lambda s: s[0][1] + 2),
    Case("max_over_sharded_axis", lambda m: lambda x: lax.reduce_max(x - 1, (0,)), _two, (P("x", "y"),),
         P("y"), lambda x: np.max(x - 1, axis=0), lambda s: 1),
    Case("dot_sharded_contracting",
         lambda m: lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST),
         lambda mx, my, b: [(3, mx * b), (mx * b, my * 2)], (P(None, "x"), P("x", "y")), P(),
         lambda a, b: a @ b, lambda s: s[0][1]),
    Case("dot_sharded_batch_and_contracting",
         lambda m: lambda a, b: jnp.einsum("bmk,bkn->bmn", a, b, precision=lax.Precision.HIGHEST),
         lambda mx, my, b: [(mx, 2, my * b), (mx, my * b, 3)], (P("x", None, "y"),
                                                                P("x", "y", None)),
         P("x"), lambda a, b: np.einsum("bmk,bkn->bmn", a, b), lambda s: s[0][2]),
    Case("transpose_across_shards", lambda m: lambda x: x.T * 3, _two, (P("x", "y"),), P("x", "y"),
         lambda x: x.T * 3, lambda s: 1),
    Case("reshape_across_shards", lambda m: lambda x: (x + 1).reshape(x.shape[1], x.shape[0]), _two,
         (P("x", "y"),), P("y", None),
         lambda x: (x + 1).reshape(x.shape[1], x.shape[0]), lambda s: 1),
    Case("gather_from_sharded_operand",
         lambda m: lambda x: jnp.take(x * 2, _GATHER_AT, axis=0, mode="clip"), _two, (P("x", "y"),),
         P(None, "y"), lambda x: _np_take(x * 2, _GATHER_AT), lambda s: 1),
    Case("scatter_add_into_sharded_operand",
         lambda m: lambda x, u: x.at[_SCATTER_AT].add(u, mode="promise_in_bounds"),
         lambda mx, my, b: [(mx * 4 * b, my * b), (len(_SCATTER_AT), my * b)],
         (P("x", "y"), P(None, "y")), P("x", "y"), _np_scatter, lambda s: 3),
    Case("cumsum_along_sharded_axis", lambda m: lambda x: lax.cumsum(x, axis=0), _two, (P("x", "y"),),
         P("x", "y"), lambda x: np.cumsum(x, axis=0, dtype=x.dtype), lambda s: s[0][0] + 1),
]


def _resharded(mesh: Mesh) -> Callable[..., Any]:
    def fn(x):
        y = jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("y", "x")))
        return jnp.sum(y, axis=0, dtype=x.dtype) + y[-1]
    return fn


def _resharded_ref(x):
    y = x * 2
    return np.sum(y, axis=0, dtype=x.dtype) + y[-1]


CASES.append(Case("reshard_between_ops", _resharded, _two, (P("x", "y"),), P("x"),
                  _resharded_ref, lambda s: s[0][0] + 2))

DTYPES = [dtype_helpers.BY_NAME["int32"], dtype_helpers.BY_NAME["float32"]]


def _args(data: st.DataObject, shapes: list[tuple[int, ...]],
          dt: dtype_helpers.DType) -> list[np.ndarray]:
    lim = 100 if dt.kind == "int" else 2.0
    return [data.draw(strategies.seeded_arrays(dt, s, min_value=-lim, max_value=lim), label=f"a{k}")
            for k, s in enumerate(shapes)]


def _mesh(data: st.DataObject, devices: list[Any]) -> Mesh:
    shape = data.draw(st.sampled_from(sharding_helpers.mesh_shapes(len(devices), 2)),
                      label="mesh shape")
    order = data.draw(st.permutations(range(len(devices))), label="device order")
    return sharding_helpers.grid_mesh([devices[i] for i in order], shape)


def _check(out: np.ndarray, args: list[np.ndarray], case_ref: Callable[..., np.ndarray],
           roundings: int, dt: dtype_helpers.DType, call: str,
           controls: float_control_modes.FloatControls) -> None:
    __tracebackhide__ = True
    if dt.kind == "int":
        with np.errstate(over="ignore"):
            assertions.assert_exact(out, np.asarray(case_ref(*args)).astype(dt.dtype), call=call)
        return
    wide = [a.astype(np.float64) for a in args]
    exact = np.asarray(case_ref(*wide))
    mag = np.abs(np.asarray(case_ref(*[np.abs(a) for a in wide])))
    bound = tolerances.bound("rounding", dt.dtype, magnitude=mag, roundings=roundings,
                             controls=controls,
                             name=f"{roundings}*eps*magnitude + {roundings}*tiny")
    assertions.assert_within_bound(out, exact.astype(dt.dtype), bound, call=call)


def _unpartitioned_note(program_cache, name, fn, args, check) -> str:
    device = program_cache.client.local_devices()[0]
    outs, _ = program_cache.run(f"{name}_unpartitioned", fn, args, device)
    try:
        check(outs)
    except AssertionError:
        return (f"unpartitioned on {device} the program fails too: not (only) a partitioning "
                f"defect, see the single-device areas")
    return (f"unpartitioned on {device} the same program passes the same oracle: the "
            f"partitioned program alone is wrong (the SPMD partitioner's or the "
            f"collectives' defect in the plugin)")


@pytest.mark.parametrize("dt", [capabilities.param(d) for d in DTYPES])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@given(data=st.data())
def test_spmd_composition(client, runner, program_cache, float_controls, case, dt, data):
    """A hand-picked program over a drawn mesh, against NumPy and unpartitioned."""
    mesh = _mesh(data, client.local_devices())
    mx, my = mesh.devices.shape
    b = data.draw(st.integers(1, 3), label="blocks")
    shapes = case.shapes(mx, my, b)
    args = _args(data, shapes, dt)
    in_shardings = [NamedSharding(mesh, s) for s in case.in_specs]
    out_sharding = NamedSharding(mesh, case.out_spec)
    with np.errstate(over="ignore"):
        out_shape = np.asarray(case.reference(*[np.zeros(s, dt.dtype) for s in shapes])).shape
    call = f"execute_sharded({case.name}, {dt.name} {shapes}, {list(case.in_specs)} -> " \
           f"{case.out_spec} over mesh {dict(mesh.shape)})"
    name = f"spmd_{case.name}_{'x'.join(map(str, mesh.devices.shape))}"
    fn = case.make(mesh)
    with capabilities.gated(dt, call):
        [(out, problem)], text = runner.run_outputs(name, fn, args, in_shardings,
                                                    out_sharding, [out_shape])
    roundings = case.roundings(shapes)
    with reproduction(call, program=text, inputs=args,
                      sharding=placement(in_shardings, out_sharding)):
        try:
            assert not problem, f"{problem} [{call}]"
            _check(out, args, case.reference, roundings, dt, call, float_controls)
        except AssertionError as err:
            err.add_note(_unpartitioned_note(
                program_cache, name, fn, args,
                lambda outs: _check(outs[0], args, case.reference, roundings, dt, call,
                                    float_controls)))
            raise


@functools.cache
def _start_defects(platform: str, plugin_library: bool) -> tuple[str, ...]:
    """The ids of ``dag_strategy.START_DEFECTS`` whose configurations a generated program
    run partitioned on this backend keeps its dynamic starts out of (``platform``, and
    whether the backend was loaded from ``--plugin-library``): each one but those the
    shipped defect catalog measured fixed here, that is an entry of this platform for
    its built-in client (not a plugin library) whose ``first_fixed`` is at or before the
    installed jaxlib (``xla-spmd-dynamic-slice-clamp`` from jaxlib 0.12.0 on CPU). On a
    plugin library or another platform the XLA it was built from is unknown: all of
    them."""
    catalog = {d.id: d for d in defect_catalog.load()}
    fixed = {d.id for d in defect_catalog.fixed_on_installed(
        [catalog[i] for i in dag_strategy.START_DEFECTS if i in catalog], platform)
        if d.platform == platform and d.plugin_library is False and not plugin_library}
    return tuple(i for i in dag_strategy.START_DEFECTS if i not in fixed)


@given(data=st.data())
@pytest.mark.parametrize("family", ["integer", "data_movement", "float"])
def test_spmd_generated_programs(client, runner, program_cache, float_controls, backend_spec,
                                 family, data):
    """A generated program with sharded parameters and sharded outputs (drawn
    PartitionSpecs; an output's along any dimension that divides, the sliced or updated
    one included, or replicated), against the family's oracle."""
    mesh = _mesh(data, client.local_devices())
    n = mesh.size
    shapes = [(n * data.draw(st.integers(1, 2), label="rows"),
               n * data.draw(st.integers(1, 3), label="cols"))
              for _ in range(data.draw(st.integers(1, 2), label="parameters"))]
    program = data.draw(dag_strategy.programs(family, budget=12 * n * n, max_ops=20,
                                              param_shapes=shapes, strided_slices=False,
                                              padding_slices=False),  # pinned: ..._compiles
                        label="program")
    specs = [data.draw(sharding_helpers.partition_specs(mesh, 2), label=f"p{k} spec")
             for k in range(len(program.params))]
    in_shardings = [NamedSharding(mesh, s) for s in specs] + [NamedSharding(mesh, P())]
    out_shapes = [program.nodes[o].shape for o in program.outputs]
    interior_pad = any(n.op == "pad" and any(c[2] for c in n.attr("config"))
                       for n in program.nodes)   # pinned: ..._interior_padding_into_a_sharded_result
    out_specs = [P() if interior_pad else
                 data.draw(sharding_helpers.divisible_partition_specs(mesh, shape),
                           label=f"output {k} spec") for k, shape in enumerate(out_shapes)]
    out_shardings = [NamedSharding(mesh, s) for s in out_specs]
    sharded = any(pieces > 1 for s, shape in zip(specs + out_specs, shapes + out_shapes)
                  for pieces in sharding_helpers.shards_per_dim(mesh, s, len(shape)))
    inputs, idx = dag_strategy.inputs(   # pinned: ..._clamps_its_start, see _start_defects
        data.draw, program,
        avoid=_start_defects(backend_spec.platform, backend_spec.plugin_library is not None)
        if sharded else ())
    inputs = [dag_strategy.add_insensitive(a) for a in inputs]  # pinned: keep_bits tests
    call = f"execute_sharded({family} program {program.name}: {program.n_ops} ops, " \
           f"inputs {specs} over mesh {dict(mesh.shape)}, outputs {out_specs})"
    results, text = runner.run_outputs(f"spmd_{program.name}", program.function(),
                                       inputs + [idx], in_shardings, out_shardings, out_shapes)
    with reproduction(call, program=text, inputs=inputs + [idx],
                      sharding=placement(in_shardings, out_shardings)):
        try:
            for problem in (p for _, p in results if p):
                raise AssertionError(f"{problem} [{call}]")
            check_outputs(program, [r for r, _ in results], inputs, idx, call, float_controls)
        except AssertionError as err:
            err.add_note(_unpartitioned_note(
                program_cache, program.name, program.function(), inputs + [idx],
                lambda outs: check_outputs(program, outs, inputs, idx, "unpartitioned",
                                           float_controls)))
            err.add_note("jax reproduction (inputs: p0.. in order, then idx):\n"
                         + program.source())
            raise


#: Values an addition of +0.0 changes: -0.0, a negative subnormal and a signaling NaN.
_ADD_SENSITIVE = np.array([0x80000000, 0x80000001, 0x7F800001, 0x3F800000], np.uint32)


def _moved_operand(name: str, n: int):
    """(x, spec, fn, expected) of a data movement of a sharded f32 operand over n devices:
    ``strided_slice`` (``x[0:1, 0:n:2]``, x f32[4, n] with one column per device),
    ``slice_within_a_shard`` (``x[0:1, 0:4]``, x f32[n, 4] with one row per device) or
    ``gather_within_a_shard`` (``take(x, [0], axis=0)`` of the same); x holds the
    values an addition of +0.0 changes."""
    if name == "strided_slice":
        x = np.full((4, n), -0.0, np.float32)
        x.view(np.uint32)[0, :] = np.resize(_ADD_SENSITIVE, n)
        return x, P(None, "d"), lambda a: lax.slice(a, (0, 0), (1, n), (1, 2)), x[0:1, 0:n:2]
    x = np.ones((n, 4), np.float32)
    x.view(np.uint32)[0] = _ADD_SENSITIVE
    fn = (lambda a: lax.slice(a, (0, 0), (1, 4))) if name == "slice_within_a_shard" \
        else (lambda a: jnp.take(a, np.array([0], np.int32), axis=0))
    return x, P("d", None), fn, x[0:1]


def _check_replicated_move(runner, client, name: str, x: np.ndarray, spec: P, fn,
                           want: np.ndarray) -> None:
    """``fn(x)`` with x sharded by ``spec`` over a 1-D mesh of the local devices and the
    result replicated: the result's bits are ``want``'s."""
    __tracebackhide__ = True
    n = client.local_device_count()
    mesh = Mesh(np.array(client.local_devices()), ("d",))
    shardings = [NamedSharding(mesh, spec)], NamedSharding(mesh, P())
    [(out, problem)], text = runner.run_outputs(
        f"sharded_move_{name}", fn, [x], *shardings, [want.shape])
    call = f"execute_sharded({name} of f32{list(x.shape)} sharded {spec} over {n} devices, " \
           f"result replicated)"
    with reproduction(call, program=text, inputs=[x], sharding=placement(*shardings)):
        assert not problem, f"{problem} [{call}]"
        assertions.assert_bitwise_equal(out, want, call=call)


@pytest.mark.capability("multi_device")
@pytest.mark.parametrize("name", ["strided_slice", "slice_within_a_shard",
                                  "gather_within_a_shard"])
def test_sharded_slice_and_gather_keep_bits(client, runner, name):
    """A slice or gather of a sharded operand, result replicated, moves bits: -0.0, a
    negative subnormal and a signaling NaN come back as they were (XLA's partitioner
    assembles such results with an add of zero-filled pieces: +0.0, a flushed subnormal
    and a quiet NaN; docs/upstream/spmd_replicated_move.md). The generated SPMD programs
    draw no value an addition of +0.0 changes, so this defect is reported here, once."""
    if client.local_device_count() < 2:
        pytest.skip("needs 2 devices: an operand sharded over several devices")
    _check_replicated_move(runner, client, name,
                           *_moved_operand(name, client.local_device_count()))


@pytest.mark.capability("multi_device")
def test_strided_slice_of_a_sharded_dimension_compiles(client, runner):
    """``x[0:1, 1:2:3]`` (one element, stride 3) of a column-sharded f32[4, n] compiles
    and returns x[0, 1] (XLA's partitioner emits HLO its verifier rejects from 4
    devices on; docs/upstream/spmd_replicated_move.md)."""
    n = client.local_device_count()
    if n < 4:
        pytest.skip("needs 4 devices: seen from 4 column shards on")
    x = np.arange(4 * n, dtype=np.float32).reshape(4, n)
    _check_replicated_move(runner, client, "stride_3_single_element", x, P(None, "d"),
                           lambda a: lax.slice(a, (0, 1), (1, 2), (1, 3)), x[0:1, 1:2:3])


def _check_bits(runner, name: str, fn, args: list[np.ndarray], in_shardings: list[Any],
                out_sharding: Any, want: np.ndarray, call: str) -> None:
    """``fn(*args)`` partitioned by ``in_shardings`` and ``out_sharding``: every device's
    shard has its block's shape and the assembled result has ``want``'s bits."""
    __tracebackhide__ = True
    [(out, problem)], text = runner.run_outputs(name, fn, args, in_shardings, out_sharding,
                                                [want.shape])
    with reproduction(call, program=text, inputs=args,
                      sharding=placement(in_shardings, out_sharding)):
        assert not problem, f"{problem} [{call}]"
        assertions.assert_bitwise_equal(out, want, call=call)


@pytest.mark.capability("multi_device")
def test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start(client, runner):
    """``dynamic_update_slice(x, [-1], (i,))`` of f32[n] sharded one element per device,
    ``i`` a runtime int32, result replicated: StableHLO clamps the start to [0, n - 1]
    (after jax counts a negative one from the end), so ``i`` = n, n + 3 and -n - 1 write
    the update too (XLA's partitioner writes it on the device whose shard holds the
    unclamped start: none, and the update is lost; openxla/xla#49118, docs/upstream/
    spmd_dynamic_update_slice_clamp.md). The generated SPMD programs draw in-range starts
    for every dimension along which a dynamic_update_slice's update is one element, and
    out-of-range ones elsewhere, so this defect is reported here, once."""
    n = client.local_device_count()
    if n < 2:
        pytest.skip("needs 2 devices: an operand sharded over several devices")
    mesh = Mesh(np.array(client.local_devices()), ("d",))
    x = np.arange(n, dtype=np.float32)
    u = np.array([-1.0], np.float32)
    for start in (n - 1, n, n + 3, -n - 1):
        i = np.array([start], np.int32)
        want = x.copy()
        want[min(max(start + n if start < 0 else start, 0), n - 1)] = u[0]
        _check_bits(runner, "sharded_dus_clamped_start",
                    lambda a, i: lax.dynamic_update_slice(a, u, (i[0],)), [x, i],
                    [NamedSharding(mesh, P("d")), NamedSharding(mesh, P())],
                    NamedSharding(mesh, P()), want,
                    f"execute_sharded(dynamic_update_slice(x, [-1], ({start},)) of f32[{n}] "
                    f"sharded P('d') over {n} devices, start a runtime int32, result "
                    f"replicated)")


@pytest.mark.capability("multi_device")
def test_dynamic_slice_with_a_sharded_result_clamps_its_start(client, runner):
    """``dynamic_slice(a, (i,), (n,))`` of a = f32[2n] (replicated), ``i`` a runtime
    int32, the result sharded one element per device: StableHLO clamps the start of the
    whole slice to [0, n] (after jax counts a negative one from the end), so ``i`` =
    n + 1, 2n + 3 and -1 all give a[n:2n] (XLA's partitioner clamps each device's own
    one-element piece instead, and the last element repeats; openxla/xla#49122,
    docs/upstream/spmd_dynamic_slice_clamp.md; fixed in jaxlib 0.12.0). The generated
    SPMD programs draw in-range starts for every dimension along which a dynamic_slice
    takes 2 or more elements but not all of it (not on jaxlib's CPU client from 0.12.0
    on, where the catalog measures the defect fixed), so this defect is reported here,
    once."""
    n = client.local_device_count()
    if n < 2:
        pytest.skip("needs 2 devices: a result sharded over several devices")
    mesh = Mesh(np.array(client.local_devices()), ("d",))
    a = np.arange(2 * n, dtype=np.float32) * 10
    for start in (n, n + 1, 2 * n + 3, -1):
        i = np.array([start], np.int32)
        clamped = min(max(start + 2 * n if start < 0 else start, 0), n)
        want = a[clamped:clamped + n]
        _check_bits(runner, "sharded_ds_clamped_start",
                    lambda x, i: lax.dynamic_slice(x, (i[0],), (n,)), [a, i],
                    [NamedSharding(mesh, P()), NamedSharding(mesh, P())],
                    NamedSharding(mesh, P("d")), want,
                    f"execute_sharded(dynamic_slice(a, ({start},), ({n},)) of f32[{2 * n}] "
                    f"replicated over {n} devices, start a runtime int32, result sharded "
                    f"P('d'))")


@pytest.mark.capability("multi_device")
def test_pad_with_interior_padding_into_a_sharded_result(client, runner):
    """``pad(x, 0, ((0, 1, 1), (0, 0, 0)))`` of x = f32[n, 2] (replicated), the result
    f32[2n, 2] sharded P('d', None) over n devices: one zero row after each row of x
    (XLA's partitioner drops the interior padding and repeats the rows; with an
    elementwise op after the pad its HLO fails the verifier; docs/upstream/
    spmd_pad_interior_sharded_result.md). Then ``-pad(...)`` of the same. The generated
    SPMD programs keep outputs replicated when they hold a pad with interior padding,
    so this defect is reported here, once."""
    n = client.local_device_count()
    if n < 2:
        pytest.skip("needs 2 devices: a result sharded over several devices")
    mesh = Mesh(np.array(client.local_devices()), ("d",))
    x = np.arange(1, 1 + 2 * n, dtype=np.float32).reshape(n, 2)
    config = ((0, 1, 1), (0, 0, 0))
    want = np.zeros((2 * n, 2), np.float32)
    want[0::2] = x
    for label, fn, expected in (
            ("pad", lambda a: lax.pad(a, np.float32(0), config), want),
            ("negated pad", lambda a: -lax.pad(a, np.float32(0), config), -want)):
        _check_bits(runner, f"sharded_pad_interior_{label.replace(' ', '_')}", fn, [x],
                    [NamedSharding(mesh, P())], NamedSharding(mesh, P("d", None)), expected,
                    f"execute_sharded({label} of f32[{n}, 2] replicated, interior padding 1 "
                    f"along dimension 0, result sharded P('d', None) over {n} devices)")


@pytest.mark.capability("multi_device")
def test_slice_of_high_padding_of_a_sharded_dimension_compiles(client, isolated):
    """``lax.slice(lax.pad(x, 7, [(0, 1, 0)]), (n,), (n + 1,))`` of x = f32[n] sharded one
    element per device, the result f32[1] replicated: the one element of the high
    padding, [7.] (XLA's SPMD partitioner aborts the process while compiling it: "Check
    failed: shard_count > 1"; docs/upstream/spmd_slice_of_high_padding_crash.md). Run in
    a child process, so an abort costs this test only. The generated SPMD programs draw
    no one-element slice of a high padding (``dag_strategy.programs(...,
    padding_slices=False)``), so this defect is reported here, once."""
    n = client.local_device_count()
    if n < 2:
        pytest.skip("needs 2 devices: an operand sharded over several devices")
    call = (f"execute_sharded(slice(pad(x, 7, [(0, 1, 0)]), ({n},), ({n + 1},)) of f32[{n}] "
            f"sharded P('d') over {n} devices, result replicated)")
    out = isolated(f"""
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from conformance.programs import sharded_programs
mesh = Mesh(np.array(client.local_devices()), ("d",))
runner = sharded_programs.ShardedRunner(client, xc)
[(out, problem)], _ = runner.run_outputs(
    "sharded_slice_of_high_padding",
    lambda a: lax.slice(lax.pad(a, np.float32(7), [(0, 1, 0)]), ({n},), ({n + 1},)),
    [np.arange({n}, dtype=np.float32)], [NamedSharding(mesh, P("d"))],
    NamedSharding(mesh, P()), [(1,)])
print(problem or out.tolist())
""", device=client.local_devices()[0], call=call, timeout=300)
    got = out.strip().splitlines()[-1] if out.strip() else "(no output)"
    assert got == "[7.0]", f"expected [7.0], got {got} [{call}]"
