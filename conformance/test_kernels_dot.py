"""Area kernels_dot: ``dot_general`` and ``convolution`` vs NumPy references.

Seed 000 (Compile and Execute), every device at once. Dimension numbers,
strides, padding, dilation and feature groups are drawn by Hypothesis from
bounded sets (each signature compiles once).

Integer results are exact (two's complement wraparound). A float result with
``k`` terms per output is held to ``|out - ref| <= k * eps * (|A| @ |B|)``,
the standard forward error bound of a dot product computed in any order, with
``eps`` of the accumulation type: float32 for bfloat16/float16 inputs, which
are multiplied with ``preferred_element_type=float32`` as jax does for mixed
precision; a platform that accumulates them in 16 bits fails. Programs ask for
``Precision.HIGHEST``: at ``DEFAULT`` XLA may use TF32 on NVIDIA GPUs (seen on
an H100: complex64 products off by 1e-4 relative), which is allowed there.
"""

from __future__ import annotations

import ml_dtypes
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

DTYPES = [dh.BY_NAME[n] for n in ("int8", "int32", "float16", "bfloat16", "float32", "float64",
                                  "complex64")]


def _accumulation(dt: dh.DType) -> np.dtype:
    return np.dtype(np.float32) if dt.name in ("float16", "bfloat16") else dt.dtype


@st.composite
def dot_dimension_numbers(draw):
    """(lhs shape, rhs shape, dimension numbers, einsum spec) with drawn batch/contracting dims."""
    n_batch = draw(st.integers(0, 1))
    n_contract = draw(st.integers(1, 2))
    sizes = st.sampled_from((1, 3, 4))
    batch = [draw(sizes) for _ in range(n_batch)]
    contract = [draw(sizes) for _ in range(n_contract)]
    m, n = draw(sizes), draw(sizes)
    lhs = tuple(batch + [m] + contract)
    rhs_contract_first = draw(st.booleans())
    rhs = tuple(batch + (contract + [n] if rhs_contract_first else [n] + contract))
    lb, rb = list(range(n_batch)), list(range(n_batch))
    lc = [n_batch + 1 + i for i in range(n_contract)]
    rc = ([n_batch + i for i in range(n_contract)] if rhs_contract_first
          else [n_batch + 1 + i for i in range(n_contract)])
    letters = "bcdefgh"
    b, c = letters[:n_batch], letters[n_batch:n_batch + n_contract]
    spec = f"{b}m{c},{b}{c + 'n' if rhs_contract_first else 'n' + c}->{b}mn"
    return lhs, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))), spec


@pytest.mark.parametrize("dt", [capabilities.param(d) for d in DTYPES])
@given(data=st.data())
def test_dot_general(program_cache, dt, data):
    lhs_shape, rhs_shape, dims, spec = data.draw(dot_dimension_numbers(), label="dims")
    lo, hi = (-8, 8) if dt.kind in ("int", "uint") else (-2, 2)
    a = data.draw(hh.finite_arrays(dt, lhs_shape, min_value=lo, max_value=hi), label="lhs")
    b = data.draw(hh.finite_arrays(dt, rhs_shape, min_value=lo, max_value=hi), label="rhs")
    acc = _accumulation(dt)

    def dot(x, y):
        return lax.dot_general(x, y, dims, precision=lax.Precision.HIGHEST,
                               preferred_element_type=acc)

    call = f"execute(dot_general {dims}, {dt.name}{list(lhs_shape)} x {list(rhs_shape)})"
    outs, program = programs.run_everywhere(program_cache, f"dot_{spec}", dot, [a, b], dt, call)
    k = int(np.prod([lhs_shape[i] for i in dims[0][0]]))
    if dt.kind in ("int", "uint"):
        with np.errstate(over="ignore"):
            expected = np.einsum(spec, a.astype(np.int64), b.astype(np.int64)).astype(acc)
        bound = np.zeros(expected.shape)
    else:
        wide = np.complex128 if dt.kind == "complex" else np.float64
        expected = np.einsum(spec, a.astype(wide), b.astype(wide))
        eps, tiny = float(ml_dtypes.finfo(acc).eps), float(ml_dtypes.finfo(acc).tiny)
        bound = (k + 1) * (eps * np.einsum(spec, np.abs(a.astype(wide)), np.abs(b.astype(wide)))
                           + tiny)  # + tiny per term: subnormal products may be flushed
        expected = expected.astype(acc)
    with reproduction(call, program=program, inputs=[a, b]):
        for device, out in outs:
            ph.assert_within_bound(out, expected, bound, bound_name="k*eps*(|A|@|B|)",
                                   call=f"{call} on {device}")


def conv_reference(x: np.ndarray, w: np.ndarray, strides: tuple[int, int],
                   padding: tuple[tuple[int, int], tuple[int, int]], dilation: tuple[int, int],
                   groups: int) -> tuple[np.ndarray, np.ndarray]:
    """NCHW x OIHW convolution in float64, and sum(|x| * |w|) per output for the bound."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + tuple(padding))
    wf = w.astype(np.float64)
    n, c, h, wd = xp.shape
    o, i, kh, kw = w.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (h - eh) // strides[0] + 1, (wd - ew) // strides[1] + 1
    out, mag = np.zeros((n, o, oh, ow)), np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xg, wg = xp[:, g * i:(g + 1) * i], wf[g * og:(g + 1) * og]
        for r in range(oh):
            for s in range(ow):
                patch = xg[:, :, r * strides[0]:r * strides[0] + eh:dilation[0],
                           s * strides[1]:s * strides[1] + ew:dilation[1]]
                out[:, g * og:(g + 1) * og, r, s] = np.einsum("nikl,oikl->no", patch, wg)
                mag[:, g * og:(g + 1) * og, r, s] = np.einsum("nikl,oikl->no", np.abs(patch),
                                                              np.abs(wg))
    return out, mag


@pytest.mark.parametrize("dt", [capabilities.param(dh.BY_NAME[n])
                                for n in ("float32", "bfloat16", "float64")])
@given(data=st.data())
def test_convolution(program_cache, dt, data):
    groups = data.draw(st.sampled_from((1, 2)), label="feature_group_count")
    strides = data.draw(st.sampled_from(((1, 1), (2, 1), (2, 2))), label="strides")
    dilation = data.draw(st.sampled_from(((1, 1), (2, 1))), label="rhs_dilation")
    padding = data.draw(st.sampled_from((((0, 0), (0, 0)), ((1, 1), (1, 1)), ((2, 0), (0, 1)))),
                        label="padding")
    x_shape, w_shape = (2, 2 * groups, 7, 6), (2 * groups, 2, 3, 2)
    x = data.draw(hh.finite_arrays(dt, x_shape, min_value=-2, max_value=2), label="lhs")
    w = data.draw(hh.finite_arrays(dt, w_shape, min_value=-2, max_value=2), label="rhs")
    acc = _accumulation(dt)

    def conv(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=dilation,
                                        feature_group_count=groups,
                                        precision=lax.Precision.HIGHEST,
                                        preferred_element_type=acc)

    name = f"conv_{groups}_{strides}_{dilation}_{padding}"
    call = (f"execute(convolution strides={strides} padding={padding} rhs_dilation={dilation} "
            f"feature_group_count={groups}, {dt.name}{list(x_shape)} * {list(w_shape)})")
    outs, program = programs.run_everywhere(program_cache, name, conv, [x, w], dt, call)
    ref, mag = conv_reference(x, w, strides, padding, dilation, groups)
    k = w_shape[1] * w_shape[2] * w_shape[3]
    bound = (k + 1) * (float(ml_dtypes.finfo(acc).eps) * mag + float(ml_dtypes.finfo(acc).tiny))
    with reproduction(call, program=program, inputs=[x, w]):
        for device, out in outs:
            ph.assert_within_bound(out, ref.astype(acc), bound, bound_name="k*eps*(|x|*|w|)",
                                   call=f"{call} on {device}")
