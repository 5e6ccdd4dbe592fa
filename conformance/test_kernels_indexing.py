"""Area kernels_indexing: gather, scatter, dynamic slices, sort and top_k vs NumPy.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once, exact results. Each test
draws a small case or a large one: operands of at least 64K elements (257 x 257,
8193 x 8, 65,537), index sets of up to 4097 with repeats and out-of-range
indices, sorts and top_k over rows of 1025 and 4097 with many ties and NaNs:

- ``dynamic_slice`` / ``dynamic_update_slice`` clamp start indices so the
  slice fits (StableHLO), including negative and far out-of-bounds starts
  (lowered with ``allow_negative_indices=False``: jax's own wrap of negative
  starts is a front-end rule, not the kernel's).
- ``gather`` in clip mode clamps indices; in fill mode out-of-bounds rows are
  the fill value. ``scatter`` (add) drops out-of-bounds updates and adds
  repeated indices.
- ``sort`` is stable (equal keys keep their order, checked with a carried
  index operand) and puts NaN last (jax's total order; -0.0 and +0.0 equal).
- ``top_k`` returns the k largest in descending order, the lower index first
  among ties; a (positive) NaN ranks above +inf (XLA's total order).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.programs import compiled_programs
from conformance.helpers import strategies
from conformance.helpers import ulp
from conformance.helpers.reproduction import reproduction

F32, I32 = dtype_helpers.BY_NAME["float32"], dtype_helpers.BY_NAME["int32"]
DTYPES = [capabilities.param(dtype_helpers.BY_NAME[n])
          for n in ("int8", "int32", "float32", "float64")]


def _clamped(start: int, size: int, dim: int) -> int:
    return min(max(start, 0), dim - size)


def _operand(data, dt: dtype_helpers.DType, shape: tuple[int, ...], label: str,
             **bounds) -> np.ndarray:
    """Drawn element by element when small, from a drawn seed (plus drawn edge values)
    when large."""
    if int(np.prod(shape)) <= 64:
        return data.draw(strategies.finite_arrays(dt, shape, **bounds), label=label)
    lo, hi = bounds.get("min_value", -1e3), bounds.get("max_value", 1e3)
    return data.draw(strategies.seeded_arrays(dt, shape, min_value=lo, max_value=hi), label=label)


def _indices(data, rows: int, count: int, label: str) -> np.ndarray:
    """``count`` int32 indices into ``rows``: within [-2 * rows - 3, 2 * rows + 3] (negative,
    in range, out of range), repeats included; large sets come from a drawn seed."""
    lo, hi = -2 * rows - 3, 2 * rows + 3
    if count <= 8:
        return np.array(data.draw(st.lists(st.integers(lo, hi), min_size=count,
                                           max_size=count), label=label), np.int32)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label=f"{label} seed"))
    idx = np.where(rng.random(count) < 0.8, rng.integers(0, rows, count),
                   rng.integers(lo, hi + 1, count))
    idx[rng.integers(0, count, count // 8)] = idx[0]  # repeats
    idx[:4] = (0, rows - 1, rows, -1)
    return rng.permutation(idx).astype(np.int32)


#: Small and large cases (the last of each is pinned in every run by test_large_operands):
#: (operand shape, slice shape) of dynamic slices, (operand shape, index count) of gathers,
#: (operand size, update count) of scatters, sort lengths, (shape, k) of top_k.
SLICE_CASES = (((6, 5), (3, 2)), ((257, 257), (129, 33)))
GATHER_CASES = (((7, 3), 5), ((8193, 8), 4097))
SCATTER_CASES = ((6, 8), (65537, 4097))
SORT_LENGTHS = (24, 1025, 4097)
TOP_K_CASES = (((4, 10), 4), ((3, 1025), 129), ((2, 4097), 1024))


@functools.lru_cache(maxsize=None)  # one function per signature: the program cache keys on it
def _slice_fn(kind: str, size: tuple[int, ...]):
    if kind == "slice":
        return lambda a, s: lax.dynamic_slice(a, (s[0], s[1]), size, allow_negative_indices=False)
    return lambda a, b, s: lax.dynamic_update_slice(a, b, (s[0], s[1]),
                                                    allow_negative_indices=False)


def _starts(data, shape: tuple[int, ...]) -> np.ndarray:
    return np.array(data.draw(st.tuples(*[st.integers(-3 * d - 20, 3 * d + 20) for d in shape]),
                              label="starts"), np.int32)


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_dynamic_slice_clamps_start_indices(program_cache, dt, data):
    _check_dynamic_slice(program_cache, dt,
                         data.draw(st.sampled_from(SLICE_CASES), label="shape, slice size"), data)


def _check_dynamic_slice(program_cache, dt, case, data):
    shape, size = case
    x = _operand(data, dt, shape, "x")
    starts = _starts(data, shape)
    call = f"execute(dynamic_slice starts={starts.tolist()} size={size}, {dt.name}{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, "dynamic_slice",
                                                     _slice_fn("slice", size), [x, starts], dt,
                                                     call)
    r, c = (_clamped(int(starts[i]), size[i], shape[i]) for i in (0, 1))
    with reproduction(call, program=program, inputs=[x, starts]):
        for device, out in outs:
            assertions.assert_exact(
                out, x[r:r + size[0], c:c + size[1]], call=f"{call} on {device}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_dynamic_update_slice_clamps_start_indices(program_cache, dt, data):
    _check_dynamic_update_slice(program_cache, dt, data.draw(st.sampled_from(SLICE_CASES),
                                                             label="shape, update size"), data)


def _check_dynamic_update_slice(program_cache, dt, case, data):
    shape, size = case[0], case[1][::-1]
    x = _operand(data, dt, shape, "x")
    u = _operand(data, dt, size, "update")
    starts = _starts(data, shape)
    call = f"execute(dynamic_update_slice starts={starts.tolist()}, {dt.name}{list(shape)} <- " \
           f"{list(size)})"
    outs, program = compiled_programs.run_everywhere(program_cache, "dynamic_update_slice",
                                                     _slice_fn("update", size), [x, u, starts], dt,
                                                     call)
    r, c = (_clamped(int(starts[i]), size[i], shape[i]) for i in (0, 1))
    expected = x.copy()
    expected[r:r + size[0], c:c + size[1]] = u
    with reproduction(call, program=program, inputs=[x, u, starts]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")


@functools.lru_cache(maxsize=None)
def _take_fn(mode: str):
    import jax.numpy as jnp

    return lambda a, i: jnp.take(a, i, axis=0, mode=mode,
                                 fill_value=np.nan if mode == "fill" else None)


@pytest.mark.parametrize("mode", ["clip", "fill"])
@given(data=st.data())
def test_gather_out_of_bounds_indices(program_cache, mode, data):
    _check_gather(program_cache, mode, data.draw(st.sampled_from(GATHER_CASES),
                                                 label="shape, index count"), data)


def _check_gather(program_cache, mode, case, data):
    shape, count = case
    rows = shape[0]
    x = _operand(data, F32, shape, "x")
    idx = _indices(data, rows, count, "indices")
    call = f"execute(gather mode={mode} indices={idx.tolist()[:16]}, float32{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"gather_{mode}",
                                                     _take_fn(mode), [x, idx], F32, call)
    if mode == "clip":
        expected = x[np.clip(idx, 0, rows - 1)]
    else:  # jnp.take: negative indices wrap once (numpy style), the rest out of bounds fill
        wrapped = np.where(idx < 0, idx + rows, idx)
        ok = (wrapped >= 0) & (wrapped < rows)
        expected = np.where(ok[:, None], x[np.clip(wrapped, 0, rows - 1)], np.float32(np.nan))
    with reproduction(call, program=program, inputs=[x, idx]):
        for device, out in outs:
            assertions.assert_bitwise_equal(out, expected.astype(np.float32),
                                            call=f"{call} on {device}", nan_payloads=False)


def _scatter_add(a, i, u):
    return a.at[i].add(u, mode="drop")


@given(data=st.data())
def test_scatter_add_drops_out_of_bounds_and_accumulates_repeats(program_cache, data):
    _check_scatter_add(program_cache, data.draw(st.sampled_from(SCATTER_CASES),
                                                label="size, updates"), data)


def _check_scatter_add(program_cache, case, data):
    rows, count = case
    x = _operand(data, I32, (rows,), "x", min_value=-100, max_value=100)
    idx = _indices(data, rows, count, "indices")
    upd = _operand(data, I32, (count,), "updates", min_value=-100, max_value=100)
    call = f"execute(scatter add mode=drop indices={idx.tolist()[:16]}, int32[{rows}])"
    outs, program = compiled_programs.run_everywhere(program_cache, "scatter_add", _scatter_add,
                                                     [x, idx, upd], I32, call)
    expected = x.copy()
    wrapped = np.where(idx < 0, idx + rows, idx)  # jax: negative indices wrap once, then drop
    keep = (wrapped >= 0) & (wrapped < rows)
    np.add.at(expected, wrapped[keep], upd[keep])
    with reproduction(call, program=program, inputs=[x, idx, upd]):
        for device, out in outs:
            assertions.assert_exact(out, expected, call=f"{call} on {device}")


def _sort_pair(k, v):
    return lax.sort((k, v), num_keys=1, is_stable=True)


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_sort_is_stable_with_nan_last(program_cache, dt, data):
    _check_sort(program_cache, dt, data.draw(st.sampled_from(SORT_LENGTHS), label="length"),
                data)


def _check_sort(program_cache, dt, n, data):
    x = _operand(data, dt, (n,), "keys", min_value=-3, max_value=3)
    x = np.round(x).astype(dt.dtype)  # few distinct keys: many ties
    if dt.kind == "float":
        most = max(4, n // 64)
        holes = data.draw(st.lists(st.integers(0, n - 1), max_size=most), label="nan positions")
        x[holes] = np.nan
        zeros = data.draw(st.lists(st.integers(0, n - 1), max_size=most), label="-0.0 positions")
        x[[z for z in zeros if z not in holes]] = -0.0
    iota = np.arange(n, dtype=np.int32)
    call = f"execute(sort stable num_keys=1, ({dt.name}[{n}], int32[{n}]))"
    outs, program = compiled_programs.run_everywhere(program_cache, "sort_stable", _sort_pair,
                                                     [x, iota], dt, call, n_outputs=2)
    # jax's comparator: NaNs last, -0.0 == +0.0; numpy's stable argsort agrees.
    order = np.argsort(x, kind="stable")
    with reproduction(call, program=program, inputs=[x, iota]):
        for (device, keys), (_, perm) in zip(outs[0], outs[1]):
            where = f"{call} on {device}"
            assertions.assert_exact(perm, order.astype(np.int32), call=where + " (permutation)")
            assertions.assert_bitwise_equal(
                keys, x[order], call=where + " (keys)", nan_payloads=False)


@functools.lru_cache(maxsize=None)
def _top_k_fn(k: int):
    return lambda a: lax.top_k(a, k)


@given(data=st.data())
def test_top_k_prefers_lower_indices_among_ties(program_cache, data):
    _check_top_k(program_cache, data.draw(st.sampled_from(TOP_K_CASES), label="shape, k"), data)


def _check_top_k(program_cache, case, data):
    shape, k = case
    x = _operand(data, F32, shape, "x", min_value=-3, max_value=3)
    x = np.round(x).astype(np.float32) + np.float32(0.0)  # ties, and no -0.0 (+0 > -0 in
    holes = data.draw(st.lists(st.integers(0, x.size - 1), max_size=max(2, x.size // 64)),
                      label="NaN positions")                # XLA's total order)
    x.reshape(-1)[holes] = np.nan
    call = f"execute(top_k k={k}, float32{list(shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, "top_k", _top_k_fn(k), [x], F32,
                                                     call, n_outputs=2)
    # total order: +NaN above +inf; equal keys keep their order (lower index first)
    idx = np.argsort(-ulp.ordered_bits(x), axis=-1, kind="stable")[:, :k].astype(np.int32)
    with reproduction(call, program=program, inputs=[x]):
        for (device, values), (_, indices) in zip(outs[0], outs[1]):
            where = f"{call} on {device}"
            assertions.assert_exact(indices, idx, call=where + " (indices)")
            assertions.assert_exact(values, np.take_along_axis(x, idx, axis=-1),
                                    call=where + " (values)")


@pytest.mark.parametrize("op", ["dynamic_slice", "dynamic_update_slice", "gather_clip",
                                "gather_fill", "scatter_add", "sort", "top_k"])
@given(data=st.data())
def test_large_operands(program_cache, op, data):
    """Each kernel at its largest case (at least 64K elements, rows of 4097), in every run."""
    {"dynamic_slice": lambda: _check_dynamic_slice(program_cache, F32, SLICE_CASES[-1], data),
     "dynamic_update_slice": lambda: _check_dynamic_update_slice(program_cache, I32,
                                                                 SLICE_CASES[-1], data),
     "gather_clip": lambda: _check_gather(program_cache, "clip", GATHER_CASES[-1], data),
     "gather_fill": lambda: _check_gather(program_cache, "fill", GATHER_CASES[-1], data),
     "scatter_add": lambda: _check_scatter_add(program_cache, SCATTER_CASES[-1], data),
     "sort": lambda: _check_sort(program_cache, F32, SORT_LENGTHS[-1], data),
     "top_k": lambda: _check_top_k(program_cache, TOP_K_CASES[-1], data)}[op]()
