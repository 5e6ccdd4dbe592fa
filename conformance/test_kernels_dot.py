"""Area kernels_dot: ``dot_general`` and ``convolution`` vs NumPy references.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``), every device at once. Dimension numbers,
strides, padding, dilation, feature groups and spatial sizes are drawn by
Hypothesis from bounded sets; half the dot products have M, N and K across the
block boundaries (2**16 elements per operand, 2**22 under the nightly profile:
M = N = 2048), and every run multiplies the pinned ``PINNED`` shapes (up to
257 x 257 x 257, K = 4097, batches of non-square matrices).

Integer results are exact (two's complement wraparound). A float result with
``k`` terms per output is held to ``|out - ref| <= k * eps * (|A| @ |B|)``,
the standard forward error bound of a dot product computed in any order, with
``eps`` of the accumulation type (with the flush-to-zero allowance of
``error_bounds``, and exact for integer-valued operands below ``2**digits``):
float32 for bfloat16/float16 inputs, which are multiplied with
``preferred_element_type=float32`` as jax does for mixed precision; a platform
that accumulates them in 16 bits fails. Programs ask for ``Precision.HIGHEST``:
at ``DEFAULT`` XLA may use TF32 on NVIDIA GPUs (seen on an H100: complex64
products off by 1e-4 relative), which is allowed there.
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
from conformance.helpers import error_bounds
from conformance.helpers import float_control_modes
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.programs import moves
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction

DTYPES = [
    dtype_helpers.BY_NAME[n]
    for n in ("int8", "int32", "float16", "bfloat16", "float32", "float64", "complex64")
]


def _accumulation(dt: dtype_helpers.DType) -> np.dtype:
    return np.dtype(np.float32) if dt.name in ("float16", "bfloat16") else dt.dtype


#: Pinned in every run: (batch, M, K, N, dtype) with every size off the multiples of 8,
#: 16, 32 and 128 or on them, up to 4097 terms, batch > 1 with non-square matrices.
PINNED = [((), 257, 257, 257, "float32"), ((), 7, 4097, 9, "float32"),
          ((), 129, 33, 255, "bfloat16"), ((3,), 65, 17, 33, "float64"),
          ((2,), 31, 1025, 15, "int8"), ((), 1, 4096, 1, "float16"),
          ((2,), 16, 128, 63, "complex64")]


@st.composite
def dot_dimension_numbers(draw, budget: int = 0):
    """(lhs shape, rhs shape, dimension numbers, einsum spec) with drawn batch/contracting dims.

    Sizes from {1, 3, 4}, or (with ``budget`` > 0, half the time) M, N and one
    contracting size across the block boundaries with at most ``budget`` elements
    per operand and result."""
    n_batch = draw(st.integers(0, 1))
    n_contract = draw(st.integers(1, 2))
    sizes = st.sampled_from((1, 3, 4))
    batch = [draw(sizes) for _ in range(n_batch)]
    contract = [draw(sizes) for _ in range(n_contract)]
    m, n = draw(sizes), draw(sizes)
    if budget and draw(st.booleans(), label="large"):
        side = max(1, int(np.sqrt(budget // max(1, int(np.prod(batch + contract[1:]))))))
        m = draw(strategies.axis_sizes(side, min_size=1))
        n = draw(strategies.axis_sizes(side, min_size=1))
        rest = int(np.prod(batch + contract[1:]))
        contract[0] = draw(strategies.axis_sizes(max(1, budget // (rest * max(m, n))), min_size=1))
    return dot_spec(batch, m, contract, n, draw(st.booleans()))


def dot_spec(batch: list[int], m: int, contract: list[int], n: int, rhs_contract_first: bool):
    """(lhs shape, rhs shape, dimension numbers, einsum spec) of a batched matmul."""
    n_batch, n_contract = len(batch), len(contract)
    lhs = tuple(batch + [m] + contract)
    rhs = tuple(batch + (contract + [n] if rhs_contract_first else [n] + contract))
    lb, rb = list(range(n_batch)), list(range(n_batch))
    lc = [n_batch + 1 + i for i in range(n_contract)]
    rc = ([n_batch + i for i in range(n_contract)] if rhs_contract_first
          else [n_batch + 1 + i for i in range(n_contract)])
    letters = "bcdefgh"
    b, c = letters[:n_batch], letters[n_batch:n_batch + n_contract]
    spec = f"{b}m{c},{b}{c + 'n' if rhs_contract_first else 'n' + c}->{b}mn"
    return lhs, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))), spec


@functools.lru_cache(maxsize=None)  # one function per signature: the program cache keys on it
def _dot_fn(dims, acc: np.dtype):
    def dot(x, y):
        return lax.dot_general(x, y, dims, precision=lax.Precision.HIGHEST,
                               preferred_element_type=acc)
    return dot


def _operand(data, dt: dtype_helpers.DType, shape: tuple[int, ...], label: str) -> np.ndarray:
    """Within +-8 (integers) or +-2; large operands are seeded, integer-valued half the time
    (float results then exact: every partial sum is an integer below 2**digits)."""
    lo, hi = (-8, 8) if dt.kind in ("int", "uint") else (-2, 2)
    if int(np.prod(shape)) <= 64:
        return data.draw(strategies.finite_arrays(dt, shape, min_value=lo, max_value=hi),
                         label=label)
    integral = data.draw(st.booleans(), label=f"{label} integer-valued")
    return data.draw(strategies.seeded_arrays(dt, shape, min_value=lo, max_value=hi,
                                              integral=integral), label=label)


def _check_dot(program_cache, dt: dtype_helpers.DType, lhs_shape, rhs_shape, dims, spec, data,
               controls: float_control_modes.FloatControls) -> np.ndarray:
    """Check one dot_general on every device; return its lhs operand."""
    a = _operand(data, dt, lhs_shape, "lhs")
    b = _operand(data, dt, rhs_shape, "rhs")
    acc = _accumulation(dt)
    call = f"execute(dot_general {dims}, {dt.name}{list(lhs_shape)} x {list(rhs_shape)})"
    outs, program = compiled_programs.run_everywhere(program_cache, f"dot_{spec}",
                                                     _dot_fn(dims, acc), [a, b], dt, call)
    k = int(np.prod([lhs_shape[i] for i in dims[0][0]]))
    if dt.kind in ("int", "uint"):
        with np.errstate(over="ignore"):
            expected = np.einsum(spec, a.astype(np.int64), b.astype(np.int64)).astype(acc)
        bound = tolerances.bound("exact", acc)
    else:
        wide = np.complex128 if dt.kind == "complex" else np.float64
        expected = np.einsum(spec, a.astype(wide), b.astype(wide)).astype(acc)
        mag = np.einsum(spec, np.abs(a.astype(wide)), np.abs(b.astype(wide)))
        integral = error_bounds.integral_terms(a) & error_bounds.integral_terms(b)
        bound = tolerances.bound("rounding", acc, magnitude=mag, roundings=k + 1,
                                 integral=integral, controls=controls,
                                 name="(k+1)*(eps*(|A|@|B|) + tiny)")
    with reproduction(call, program=program, inputs=[a, b]):
        for device, out in outs:
            assertions.assert_within_bound(out, expected, bound, call=f"{call} on {device}")
    return a


@pytest.mark.parametrize("dt", [capabilities.param(d) for d in DTYPES])
@given(data=st.data())
def test_dot_general(program_cache, float_controls, dt, data):
    budget = strategies.element_budget(ci=2**16, nightly=2**22)  # nightly: M = N = 2048
    lhs_shape, rhs_shape, dims, spec = data.draw(dot_dimension_numbers(budget), label="dims")
    _check_dot(program_cache, dt, lhs_shape, rhs_shape, dims, spec, data, float_controls)


@pytest.mark.parametrize("batch,m,k,n,dt", [
    pytest.param(batch, m, k, n, dtype_helpers.BY_NAME[dt], id="x".join(map(str, (*batch, m, k, n)))
                 + f"-{dt}", marks=[pytest.mark.capability(dtype_helpers.BY_NAME[dt].capability)]
                 if dtype_helpers.BY_NAME[dt].capability else []) for batch, m, k, n, dt in PINNED])
@given(data=st.data())
def test_dot_general_at_block_boundaries(program_cache, float_controls, batch, m, k, n, dt,
                                         data):
    """[batch..., M, K] x [batch..., K, N] (or N, K) at sizes pinned in every run."""
    lhs_shape, rhs_shape, dims, spec = dot_spec(list(batch), m, [k], n,
                                                data.draw(st.booleans(), label="rhs K first"))
    lhs = _check_dot(program_cache, dt, lhs_shape, rhs_shape, dims, spec, data, float_controls)
    moves.check_moves(program_cache, lhs, dt, f"dot_general({dt.name}{list(lhs_shape)} x "
                      f"{list(rhs_shape)})")  # the lhs moved on the device, bit for bit


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
    for g in range(groups):  # one tap of the kernel at a time, over every output position
        xg, wg = xp[:, g * i:(g + 1) * i], wf[g * og:(g + 1) * og]
        for p in range(kh):
            for q in range(kw):
                r0, s0 = p * dilation[0], q * dilation[1]
                patch = xg[:, :, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                           s0:s0 + (ow - 1) * strides[1] + 1:strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nihw,oi->nohw", patch, wg[:, :, p, q])
                mag[:, g * og:(g + 1) * og] += np.einsum("nihw,oi->nohw", np.abs(patch),
                                                         np.abs(wg[:, :, p, q]))
    return out, mag


@functools.lru_cache(maxsize=None)
def _conv_fn(strides, padding, dilation, groups: int, acc: np.dtype):
    def conv(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=dilation,
                                        feature_group_count=groups,
                                        precision=lax.Precision.HIGHEST,
                                        preferred_element_type=acc)
    return conv


#: Spatial sizes: the original 7x6 and sizes past common tile widths of conv kernels.
SPATIAL = ((7, 6), (17, 9), (33, 31), (65, 18), (129, 8))


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("float32", "bfloat16", "float64")])
@given(data=st.data())
def test_convolution(program_cache, float_controls, dt, data):
    groups = data.draw(st.sampled_from((1, 2)), label="feature_group_count")
    strides = data.draw(st.sampled_from(((1, 1), (2, 1), (2, 2))), label="strides")
    dilation = data.draw(st.sampled_from(((1, 1), (2, 1))), label="rhs_dilation")
    padding = data.draw(st.sampled_from((((0, 0), (0, 0)), ((1, 1), (1, 1)), ((2, 0), (0, 1)))),
                        label="padding")
    spatial = data.draw(st.sampled_from(SPATIAL), label="spatial size")
    x_shape, w_shape = (2, 2 * groups) + spatial, (2 * groups, 2, 3, 2)
    x = _operand(data, dt, x_shape, "lhs")
    w = data.draw(strategies.finite_arrays(dt, w_shape, min_value=-2, max_value=2), label="rhs")
    acc = _accumulation(dt)
    name = f"conv_{groups}_{strides}_{dilation}_{padding}"
    call = (f"execute(convolution strides={strides} padding={padding} rhs_dilation={dilation} "
            f"feature_group_count={groups}, {dt.name}{list(x_shape)} * {list(w_shape)})")
    outs, program = compiled_programs.run_everywhere(
        program_cache, name, _conv_fn(strides, padding, dilation, groups, acc), [x, w], dt, call)
    ref, mag = conv_reference(x, w, strides, padding, dilation, groups)
    k = w_shape[1] * w_shape[2] * w_shape[3]
    integral = error_bounds.integral_terms(x) & error_bounds.integral_terms(w)
    bound = tolerances.bound("rounding", acc, magnitude=mag, roundings=k + 1, integral=integral,
                             controls=float_controls, name="(k+1)*(eps*(|x|*|w|) + tiny)")
    with reproduction(call, program=program, inputs=[x, w]):
        for device, out in outs:
            assertions.assert_within_bound(out, ref.astype(acc), bound, call=f"{call} on {device}")
