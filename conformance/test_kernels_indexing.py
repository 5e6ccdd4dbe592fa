"""Area kernels_indexing: gather, scatter, dynamic slices, sort and top_k vs NumPy.

Seed 000 (Compile and Execute), every device at once, exact results:

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
  among ties.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions as ph
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers as dh
from conformance.programs import cache as programs
from conformance.helpers import strategies as hh
from conformance.helpers.reproduction import reproduction

F32, I32 = dh.BY_NAME["float32"], dh.BY_NAME["int32"]
DTYPES = [capabilities.param(dh.BY_NAME[n]) for n in ("int8", "int32", "float32", "float64")]


def _clamped(start: int, size: int, dim: int) -> int:
    return min(max(start, 0), dim - size)


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_dynamic_slice_clamps_start_indices(program_cache, dt, data):
    x = data.draw(hh.finite_arrays(dt, (6, 5)), label="x")
    starts = np.array(data.draw(st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
                                label="starts"), np.int32)
    size = (3, 2)

    def dslice(a, s):
        return lax.dynamic_slice(a, (s[0], s[1]), size, allow_negative_indices=False)

    call = f"execute(dynamic_slice starts={starts.tolist()} size={size}, {dt.name}[6, 5])"
    outs, program = programs.run_everywhere(program_cache, "dynamic_slice", dslice, [x, starts],
                                            dt, call)
    r, c = _clamped(int(starts[0]), 3, 6), _clamped(int(starts[1]), 2, 5)
    with reproduction(call, program=program, inputs=[x, starts]):
        for device, out in outs:
            ph.assert_exact(out, x[r:r + 3, c:c + 2], call=f"{call} on {device}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_dynamic_update_slice_clamps_start_indices(program_cache, dt, data):
    x = data.draw(hh.finite_arrays(dt, (6, 5)), label="x")
    u = data.draw(hh.finite_arrays(dt, (2, 3)), label="update")
    starts = np.array(data.draw(st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
                                label="starts"), np.int32)

    def dus(a, b, s):
        return lax.dynamic_update_slice(a, b, (s[0], s[1]), allow_negative_indices=False)

    call = f"execute(dynamic_update_slice starts={starts.tolist()}, {dt.name}[6, 5] <- [2, 3])"
    outs, program = programs.run_everywhere(program_cache, "dynamic_update_slice", dus,
                                            [x, u, starts], dt, call)
    r, c = _clamped(int(starts[0]), 2, 6), _clamped(int(starts[1]), 3, 5)
    expected = x.copy()
    expected[r:r + 2, c:c + 3] = u
    with reproduction(call, program=program, inputs=[x, u, starts]):
        for device, out in outs:
            ph.assert_exact(out, expected, call=f"{call} on {device}")


@pytest.mark.parametrize("mode", ["clip", "fill"])
@given(data=st.data())
def test_gather_out_of_bounds_indices(program_cache, mode, data):
    import jax.numpy as jnp

    x = data.draw(hh.finite_arrays(F32, (7, 3)), label="x")
    idx = np.array(data.draw(st.lists(st.integers(-12, 12), min_size=5, max_size=5),
                             label="indices"), np.int32)

    def take(a, i):
        return jnp.take(a, i, axis=0, mode=mode, fill_value=np.nan if mode == "fill" else None)

    call = f"execute(gather mode={mode} indices={idx.tolist()}, float32[7, 3])"
    outs, program = programs.run_everywhere(program_cache, f"gather_{mode}", take, [x, idx],
                                            F32, call)
    if mode == "clip":
        expected = x[np.clip(idx, 0, 6)]
    else:  # jnp.take: negative indices wrap once (numpy style), the rest out of bounds fill
        wrapped = np.where(idx < 0, idx + 7, idx)
        ok = (wrapped >= 0) & (wrapped < 7)
        expected = np.where(ok[:, None], x[np.clip(wrapped, 0, 6)], np.float32(np.nan))
    with reproduction(call, program=program, inputs=[x, idx]):
        for device, out in outs:
            ph.assert_bitwise_equal(out, expected.astype(np.float32), call=f"{call} on {device}",
                                    nan_payloads=False)


@given(data=st.data())
def test_scatter_add_drops_out_of_bounds_and_accumulates_repeats(program_cache, data):
    x = data.draw(hh.finite_arrays(I32, (6,), min_value=-100, max_value=100), label="x")
    idx = np.array(data.draw(st.lists(st.integers(-3, 9), min_size=8, max_size=8),
                             label="indices"), np.int32)
    upd = data.draw(hh.finite_arrays(I32, (8,), min_value=-100, max_value=100), label="updates")

    def scatter_add(a, i, u):
        return a.at[i].add(u, mode="drop")

    call = f"execute(scatter add mode=drop indices={idx.tolist()}, int32[6])"
    outs, program = programs.run_everywhere(program_cache, "scatter_add", scatter_add,
                                            [x, idx, upd], I32, call)
    expected = x.copy()
    wrapped = np.where(idx < 0, idx + 6, idx)  # jax: negative indices wrap once, then drop
    keep = (wrapped >= 0) & (wrapped < 6)
    np.add.at(expected, wrapped[keep], upd[keep])
    with reproduction(call, program=program, inputs=[x, idx, upd]):
        for device, out in outs:
            ph.assert_exact(out, expected, call=f"{call} on {device}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_sort_is_stable_with_nan_last(program_cache, dt, data):
    n = 24
    x = data.draw(hh.finite_arrays(dt, (n,), min_value=-3, max_value=3), label="keys")
    x = np.round(x).astype(dt.dtype)  # few distinct keys: many ties
    if dt.kind == "float":
        holes = data.draw(st.lists(st.integers(0, n - 1), max_size=4), label="nan positions")
        x[holes] = np.nan
        zeros = data.draw(st.lists(st.integers(0, n - 1), max_size=4), label="-0.0 positions")
        x[[z for z in zeros if z not in holes]] = -0.0
    iota = np.arange(n, dtype=np.int32)

    def sort_pair(k, v):
        return lax.sort((k, v), num_keys=1, is_stable=True)

    call = f"execute(sort stable num_keys=1, ({dt.name}[{n}], int32[{n}]))"
    outs, program = programs.run_everywhere(program_cache, "sort_stable", sort_pair, [x, iota],
                                            dt, call, n_outputs=2)
    # jax's comparator: NaNs last, -0.0 == +0.0; numpy's stable argsort agrees.
    order = np.argsort(x, kind="stable")
    with reproduction(call, program=program, inputs=[x, iota]):
        for (device, keys), (_, perm) in zip(outs[0], outs[1]):
            where = f"{call} on {device}"
            ph.assert_exact(perm, order.astype(np.int32), call=where + " (permutation)")
            ph.assert_bitwise_equal(keys, x[order], call=where + " (keys)", nan_payloads=False)


@given(data=st.data())
def test_top_k_prefers_lower_indices_among_ties(program_cache, data):
    x = data.draw(hh.finite_arrays(F32, (4, 10), min_value=-3, max_value=3), label="x")
    x = np.round(x).astype(np.float32) + np.float32(0.0)  # ties, and no -0.0 (+0 > -0 in
    k = 4                                                    # XLA's total order)

    def top_k(a):
        return lax.top_k(a, k)

    call = f"execute(top_k k={k}, float32[4, 10])"
    outs, program = programs.run_everywhere(program_cache, "top_k", top_k, [x], F32, call,
                                            n_outputs=2)
    idx = np.argsort(-x, axis=-1, kind="stable")[:, :k].astype(np.int32)
    with reproduction(call, program=program, inputs=[x]):
        for (device, values), (_, indices) in zip(outs[0], outs[1]):
            where = f"{call} on {device}"
            ph.assert_exact(indices, idx, call=where + " (indices)")
            ph.assert_exact(values, np.take_along_axis(x, idx, axis=-1), call=where + " (values)")
