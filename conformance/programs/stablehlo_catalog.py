"""The op catalog of ``test_stablehlo_ops``: spec ops the other areas did not reach.

Each :class:`OpCase` gives the op's lowering (a jax function, or StableHLO text from
:mod:`conformance.programs.stablehlo_text` where jax has none), its dtypes (every
element type the spec allows that the suite can draw: fp8, int4/uint4, complex and
bool included), its inputs (drawn with Hypothesis from ``helpers.strategies``), an
independent NumPy/ml_dtypes/SciPy reference and a tolerance class (``EXACT``: bit for
bit; ``APPROX``: within the op's budget in :mod:`conformance.helpers.tolerances`, or
within a derived ``(roundings + 1) * eps * magnitude`` forward-error bound, ``bound``).
Test ids are ``<op>-<variant>-<dtype>``; the coverage gap list reads the op from them.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import dtype_helpers
from conformance.helpers import float_formats
from conformance.helpers import strategies
from conformance.programs import stablehlo_bounds
from conformance.programs import stablehlo_catalog_gaps
from conformance.programs import stablehlo_text
# The case type, dtype lists and input draws the gap cases share (re-exported).
from conformance.programs.stablehlo_case import (
    ALL, APPROX, EXACT, FLOATS, FP8, NUMERIC, SHAPES, OpCase, arrays)  # noqa: F401

#: SHAPES plus a last axis one past a block boundary (``helpers.strategies.BOUNDARY_SIZES``):
#: for the cheap data-movement ops, where a vector tail goes wrong.
BOUNDARY_SHAPES = SHAPES + ((3, strategies.BOUNDARY_SIZES[-7]),)
FP = FLOATS + FP8
#: (exponent bits, mantissa bits) of reduce_precision: float16's, bfloat16's, fp8 e4m3's
#: and e5m2's, and widths no dtype has.
REDUCED_FORMATS = ((5, 10), (8, 7), (4, 3), (5, 2), (6, 4), (3, 1))


def _with_ties(data: Any, x: np.ndarray, mantissa: int) -> np.ndarray:
    """``x`` with drawn elements (at least one, and two where ``x`` has room: the first
    an even tie, the second an odd one) made exact rounding ties for ``mantissa`` bits
    (``float_formats.exact_ties``); unchanged when ``x``'s dtype has no more bits."""
    if x.size == 0 or ml_dtypes.finfo(x.dtype).nmant <= mantissa:
        return x
    where = data.draw(st.lists(st.integers(0, x.size - 1), min_size=min(2, x.size),
                               max_size=x.size, unique=True), label="tie positions")
    odd = data.draw(st.lists(st.booleans(), min_size=len(where), max_size=len(where)),
                    label="odd ties")
    odd[:2] = [False, True][:len(odd[:2])]
    flat = x.reshape(-1).copy()
    flat[where] = float_formats.exact_ties(flat[where], mantissa, np.array(odd))
    return flat.reshape(x.shape)


def _reduce_precision(exponent: int, mantissa: int) -> OpCase:
    wider = [d for d in FLOATS if ml_dtypes.finfo(dtype_helpers.BY_NAME[d].dtype).nmant >= mantissa]

    def inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
        """Values in the dtype's range, scaled by a drawn power of two so that the format's
        overflow, normal and underflow (subnormal of the format: flushed) ranges all occur;
        drawn elements are exact ties of ``mantissa`` bits, even and odd (``_with_ties``)."""
        bound = min(3e5, float(ml_dtypes.finfo(dt.dtype).max) / 2)
        x = arrays(1, low=-bound, high=bound)(data, dt)[0]
        scale = 2.0 ** data.draw(st.integers(-40, 0), label="log2 scale")
        return [_with_ties(data, (x.astype(np.float64) * scale).astype(dt.dtype), mantissa)]
    return OpCase("reduce_precision", f"e{exponent}m{mantissa}", tuple(wider), inputs,
                  lambda args: (lambda x: lax.reduce_precision(x, exponent, mantissa)),
                  lambda args: [float_formats.reduce_precision(args[0], exponent, mantissa)])


def _wide(x: np.ndarray) -> np.ndarray:
    """``x`` in the reference dtype of its dtype (:func:`dtype_helpers.reference_dtype`)."""
    return x.astype(dtype_helpers.reference_dtype(dtype_helpers.BY_NAME[x.dtype.name]))


def _sigmoid(args):
    x = args[0]
    return [(1.0 / (1.0 + np.exp(-_wide(x)))).astype(x.dtype)]


def _spd(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    """A symmetric/Hermitian positive definite n x n matrix: B B^H + n I."""
    n = data.draw(st.sampled_from((1, 3, 8)), label="n")
    b = data.draw(strategies.finite_arrays(dt, (n, n), min_value=-1, max_value=1), label="b")
    wide = b.astype(dtype_helpers.reference_dtype(dt))
    return [(wide @ wide.conj().T + n * np.eye(n)).astype(dt.dtype)]


def _lower_and_rhs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    """A well-conditioned lower-triangular n x n matrix (unit-dominant diagonal) and b."""
    n = data.draw(st.sampled_from((1, 4, 9)), label="n")
    a = data.draw(strategies.finite_arrays(dt, (n, n), min_value=-0.5, max_value=0.5), label="a")
    a = np.tril(a) + (n * np.eye(n)).astype(dt.dtype)
    b = data.draw(strategies.finite_arrays(dt, (n, 2), min_value=-10, max_value=10), label="b")
    return [a.astype(dt.dtype), b]


def _batch_inputs(kind: str):
    def draw(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
        shape = data.draw(st.sampled_from(((4, 3), (2, 5, 4))), label="shape")
        f = shape[-1]
        x = data.draw(strategies.finite_arrays(dt, shape, min_value=-4, max_value=4), label="x")
        vec = [data.draw(strategies.finite_arrays(dt, (f,), min_value=lo, max_value=hi), label=n)
               for n, lo, hi in {"inference": [("scale", -2, 2), ("offset", -2, 2),
                                               ("mean", -1, 1), ("variance", 0.5, 2)],
                                 "training": [("scale", -2, 2), ("offset", -2, 2)],
                                 "grad": [("scale", -2, 2), ("mean", -1, 1),
                                          ("variance", 0.5, 2)]}[kind]]
        extra = [data.draw(strategies.finite_arrays(dt, shape, min_value=-2, max_value=2),
                           label="grad_output")] if kind == "grad" else []
        return [x, *vec, *extra]
    return draw


#: batch_norm's epsilon: an f32 attribute, so the reference uses its float32 value.
EPSILON = 1e-3


def batch_norm_reference(kind: str, args: list[np.ndarray], epsilon: float = EPSILON
                         ) -> list[np.ndarray]:
    """NumPy batch_norm_<kind> over all dimensions but the last (float64, cast back);
    ``epsilon`` is rounded to float32 as the op's attribute is."""
    dtype = args[0].dtype
    epsilon = float(np.float32(epsilon))
    w = [a.astype(np.float64) for a in args]
    axes = tuple(range(w[0].ndim - 1))
    if kind == "inference":
        x, scale, offset, mean, var = w
        return [((x - mean) / np.sqrt(var + epsilon) * scale + offset).astype(dtype)]
    if kind == "training":
        x, scale, offset = w
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        return [((x - mean) / np.sqrt(var + epsilon) * scale + offset).astype(dtype),
                mean.astype(dtype), var.astype(dtype)]
    x, scale, mean, var, dy = w
    n = np.prod([x.shape[a] for a in axes])
    inv = 1.0 / np.sqrt(var + epsilon)
    xhat = (x - mean) * inv
    d_scale = (dy * xhat).sum(axis=axes)
    d_offset = dy.sum(axis=axes)
    dx = scale * inv / n * (n * dy - d_offset - xhat * d_scale)
    return [dx.astype(dtype), d_scale.astype(dtype), d_offset.astype(dtype)]


def _batch_norm(kind: str) -> OpCase:
    return OpCase(f"batch_norm_{kind}", "last-feature", tuple(FLOATS), _batch_inputs(kind),
                  lambda args: stablehlo_text.batch_norm(kind, *args, epsilon=EPSILON),
                  lambda args: batch_norm_reference(kind, args), APPROX,
                  lambda args: stablehlo_bounds.batch_norm(kind, args),
                  outputs=1 if kind == "inference" else 3)


def select_and_scatter_reference(operand: np.ndarray, source: np.ndarray,
                                 window: tuple[int, int]) -> np.ndarray:
    """Each window's first maximum (row-major) receives its source value, summed."""
    out = np.zeros(operand.shape, dtype=np.result_type(source.dtype))
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            block = operand[i:i + window[0], j:j + window[1]]
            r, c = np.unravel_index(np.argmax(block), block.shape)
            out[i + r, j + c] += source[i, j]
    return out.astype(operand.dtype)


def _sas_inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    shape = data.draw(st.sampled_from(((4, 4), (3, 6))), label="shape")
    operand = data.draw(strategies.finite_arrays(dt, shape, min_value=-8, max_value=8),
                        label="operand")
    source = data.draw(strategies.finite_arrays(dt, (shape[0] - 1, shape[1] - 1), min_value=-8,
                                                max_value=8), label="source")
    return [operand, source]


def _if_inputs(data: Any, dt: dtype_helpers.DType) -> list[np.ndarray]:
    pred = np.array(data.draw(st.booleans(), label="pred"))
    return [pred, *arrays(2)(data, dt)]


def _add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x + y`` as StableHLO adds: bool as logical or, integers wrapping, floats rounded
    once to the dtype (ml_dtypes computes narrow floats in float32)."""
    if x.dtype == np.bool_:
        return x | y
    with np.errstate(over="ignore"):
        return np.add(x, y, dtype=x.dtype)


def _ends(x: np.ndarray) -> tuple[int, ...]:
    """The first and last dimensions of ``x`` (one for a 1-d array)."""
    return tuple(sorted({0, x.ndim - 1}))


def _cases() -> list[OpCase]:
    reverse = OpCase("reverse", "dims-0-last", tuple(ALL),
                     arrays(1, bits=True, shapes=BOUNDARY_SHAPES),
                     lambda args: (lambda x: lax.rev(x, _ends(x))),
                     lambda args: [np.flip(args[0], _ends(args[0])).copy()])
    return [
        *[_reduce_precision(e, m) for e, m in REDUCED_FORMATS],
        reverse,
        OpCase("is_finite", "bits", tuple(FP), arrays(1, bits=True, shapes=BOUNDARY_SHAPES),
               lambda args: (lambda x: lax.is_finite(x)),
               lambda args: [np.isfinite(args[0].astype(np.float64))]),
        OpCase("logistic", "text", tuple(FLOATS), arrays(1, low=-30, high=30),
               lambda args: stablehlo_text.unary("logistic", args[0]), _sigmoid, APPROX),
        OpCase("optimization_barrier", "identity", tuple(ALL), arrays(1, bits=True),
               lambda args: (lambda x: lax.optimization_barrier(x)),
               lambda args: [args[0]]),
        OpCase("map", "add", tuple(NUMERIC + FP8 + ["bool"]), arrays(2),
               lambda args: stablehlo_text.map_add(*args),
               lambda args: [_add(*args)], nan_payloads=False),
        OpCase("tuple", "get_tuple_element", tuple(ALL), arrays(2, bits=True),
               lambda args: stablehlo_text.tuple_second(*args), lambda args: [args[1], args[0]],
               outputs=2),
        OpCase("if", "after_all-barrier", tuple(ALL), _if_inputs,
               lambda args: stablehlo_text.if_select(*args),
               lambda args: [args[1] if bool(args[0]) else args[2]]),
        OpCase("select_and_scatter", "max-add-2x2", tuple(
            [d.name for d in dtype_helpers.INTS + dtype_helpers.UINTS] + FLOATS), _sas_inputs,
            lambda args: stablehlo_text.select_and_scatter_max_add(*args, (2, 2)),
            lambda args: [select_and_scatter_reference(*args, (2, 2))], APPROX,
            stablehlo_bounds.select_and_scatter),
        OpCase("cholesky", "lower", ("float32", "float64", "complex64", "complex128"), _spd,
               lambda args: stablehlo_text.cholesky(args[0]),
               lambda args: [np.linalg.cholesky(_wide(args[0])).astype(args[0].dtype)],
               # the upper triangle is implementation-defined
               APPROX, stablehlo_bounds.cholesky, view=np.tril),
        OpCase("triangular_solve", "left-lower", ("float32", "float64", "complex64",
                                                  "complex128"), _lower_and_rhs,
               lambda args: stablehlo_text.triangular_solve(*args),
               lambda args: [np.linalg.solve(*(_wide(a) for a in args)).astype(args[1].dtype)],
               APPROX, stablehlo_bounds.triangular_solve),
        *[_batch_norm(k) for k in ("inference", "training", "grad")],
    ]


CASES: list[OpCase] = _cases() + stablehlo_catalog_gaps.cases()
