"""Derived forward-error bounds of the composite ops in ``test_stablehlo_ops``.

Each function takes the op's inputs and returns, per output, ``(roundings,
magnitude)``: the backend's result may differ from the float64 reference by
``tolerances.derived_rtol(roundings, dtype) * magnitude`` elementwise (``magnitude``
float64, broadcastable to the output). ``roundings`` counts the correctly rounded
steps on the longest dependency path (standard model ``fl(a op b) = (a op b)(1 + d)``,
``|d| <= eps``; Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3);
``magnitude`` bounds what each rounding is relative to (sums of absolute values
of the terms), so no bound is relative to a result that cancels. Complex
dtypes double ``roundings`` (a complex multiply-add is two real ones).

These replace the suite's earlier ×4/×16/×64 multipliers of the dtype rtol.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: batch_norm's epsilon attribute (float32), as ``stablehlo_catalog.EPSILON``.
BATCH_NORM_EPSILON = float(np.float32(1e-3))
#: Roundings of the normalisation ``(x - mean) * scale * rsqrt(var + epsilon) + offset``:
#: subtract, add epsilon, rsqrt (XLA's budget: 2 eps, so 2), two multiplies, add offset.
NORMALIZE_ROUNDINGS = 7


def _wide(args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(a).astype(np.complex128 if np.asarray(a).dtype.kind == "c"
                                  else np.float64) for a in args]


def _complex_factor(x: np.ndarray) -> int:
    return 2 if np.asarray(x).dtype.kind == "c" else 1


def add_multiply(args: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """``(x + y) * y``: two roundings, each relative to ``|x + y| |y| <= (|x|+|y|)|y|``."""
    x, y = (np.abs(a) for a in _wide(args))
    return [(2, (x + y) * y)]


def conv_1d(args: list[np.ndarray], reference: Any, padding: tuple[int, int]
            ) -> list[tuple[int, np.ndarray]]:
    """Stride-1 convolution of ``x`` (batch, in, width) with ``w`` (out, in, k), padded by
    ``padding``: a dot product of ``in * k`` terms per output, ``in * k`` roundings (the
    products and the additions of any summation order: ``gamma_n``), relative to
    ``|x| * |w|``, computed by the case's own ``reference(x, w, padding)``."""
    x, w = args
    n = w.shape[1] * w.shape[2]
    magnitude = reference(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)),
                          padding).astype(np.float64)
    return [(n, magnitude)]


def select_and_scatter(args: list[np.ndarray], window: tuple[int, int] = (2, 2)
                       ) -> list[tuple[int, np.ndarray]]:
    """Each operand element receives the sum of up to ``prod(window)`` source values:
    ``prod(window) - 1`` additions by the backend and as many by the reference (it sums
    in the dtype), relative to the sum of the ``|source|`` scattered there."""
    operand, source = args
    k = int(np.prod(window)) - 1
    scattered = np.zeros(operand.shape, np.float64)
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            block = operand[i:i + window[0], j:j + window[1]]
            r, c = np.unravel_index(np.argmax(block), block.shape)
            scattered[i + r, j + c] += abs(float(source[i, j]))
    return [(2 * k, scattered)]


def cholesky(args: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """``L`` of ``A = L L^H`` (n x n): the computed factor is exact for ``A + dA`` with
    ``|dA| <= gamma_{n+1} |L||L^H|`` (Higham Thm 10.3), so ``||dA||_2 <= (n+1) eps n
    ||A||_2``; the factor's perturbation is at most ``kappa_2(A) ||dA|| / ||A|| ||L||_2``
    (Sun 1991, without its 1/sqrt(2)): ``n + 1`` roundings relative to
    ``kappa_2(A) * n * ||L||_2`` for every element."""
    (a,) = _wide(args)
    n = a.shape[0]
    ell = np.linalg.cholesky(a)
    magnitude = np.linalg.cond(a, 2) * n * np.linalg.norm(ell, 2)
    return [((n + 1) * _complex_factor(args[0]), np.asarray(magnitude))]


def triangular_solve(args: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """``x`` of ``T x = b`` by substitution (T n x n lower): ``|x - x_hat| <= gamma_n
    |T^-1| |T| |x|`` componentwise to first order (Higham Thm 8.5): ``n`` roundings
    relative to ``|T^-1| |T| |x|``."""
    t, b = _wide(args)
    x = np.linalg.solve(t, b)
    magnitude = np.abs(np.linalg.inv(t)) @ np.abs(t) @ np.abs(x)
    return [(t.shape[0] * _complex_factor(args[0]), magnitude)]


def batch_norm(kind: str, args: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """batch_norm_<kind> over every axis but the last (``n`` elements per feature).

    XLA expands it (BatchNormExpander) into: ``mean = sum(x)/n`` (``n`` roundings
    relative to ``sum|x|/n``), ``var = sum(x*x)/n - mean**2`` (``n + 3`` roundings
    relative to ``mean(x*x) + mean**2``), then the normalisation (``NORMALIZE_ROUNDINGS``
    relative to ``|x - mean| |scale| / sigma + |offset|``, ``sigma = sqrt(var + eps)``).
    An error ``dm`` in the mean moves ``y`` by ``|scale| dm / sigma``; an error ``dv``
    in the variance by ``|scale| |x - mean| dv / (2 sigma**3)``: first-order propagation,
    all expressed relative to one magnitude with the largest rounding count.
    grad: ``d_offset = sum(dy)``, ``d_scale = sum(dy * xhat)`` (``n + 1 +
    NORMALIZE_ROUNDINGS`` roundings relative to ``sum|dy||xhat|``), and ``dx = scale /
    sigma / n * (n dy - d_offset - xhat d_scale)``, relative to the sum of the absolute
    values of those three terms. A result may also carry a third entry, the ``growth``
    of :func:`conformance.helpers.error_bounds.rounding_bound`: the factor by which the
    normalisation moves an absolute error of ``tiny`` (an intermediate flushed to zero
    on an FTZ/DAZ backend) into it. Raises ValueError for an unknown ``kind``.
    """
    w = _wide(args)
    axes = tuple(range(w[0].ndim - 1))
    x = w[0]
    n = int(np.prod([x.shape[a] for a in axes]))
    eps = BATCH_NORM_EPSILON
    if kind == "inference":
        _, scale, offset, mean, var = w
        sigma = np.sqrt(var + eps)
        return [(NORMALIZE_ROUNDINGS,
                 (np.abs(x) + np.abs(mean)) * np.abs(scale) / sigma + np.abs(offset),
                 1.0 + np.abs(scale) / sigma)]
    if kind == "training":
        _, scale, offset = w
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
        sigma = np.sqrt(var + eps)
        r_var = n + 3
        mean_mag = np.abs(x).mean(axis=axes)
        var_mag = (x * x).mean(axis=axes) + mean * mean
        # each term below is an (absolute error) / eps of y, to first order
        y_mag = (np.abs(scale) * mean_mag / sigma
                 + np.abs(scale) * np.abs(x - mean) * var_mag / (2 * sigma ** 3)
                 + (np.abs(x) + np.abs(mean)) * np.abs(scale) / sigma + np.abs(offset))
        # a flushed (FTZ/DAZ) subnormal x, mean or variance is an absolute error of up to
        # tiny, moved into y by the same factors
        growth = 1.0 + np.abs(scale) / sigma * (1.0 + np.abs(x - mean) / (2 * sigma ** 2))
        return [(r_var + NORMALIZE_ROUNDINGS, y_mag, growth), (n, mean_mag), (r_var, var_mag)]
    if kind == "grad":
        _, scale, mean, var, dy = w
        sigma = np.sqrt(var + eps)
        xhat = (x - mean) / sigma
        absx = (np.abs(x) + np.abs(mean)) / sigma
        d_scale_mag = (np.abs(dy) * absx).sum(axis=axes)
        d_offset_mag = np.abs(dy).sum(axis=axes)
        dx_mag = np.abs(scale) / sigma / n * (n * np.abs(dy) + d_offset_mag
                                               + np.abs(xhat) * d_scale_mag
                                               + absx * d_scale_mag)
        r = n + 1 + NORMALIZE_ROUNDINGS
        # a flushed (FTZ/DAZ) subnormal dy, mean, x - mean or variance is an absolute error
        # of up to tiny (each counted by the roundings); these factors move one into
        # d_scale (through dy * xhat) and dx (through dy, xhat, d_offset, d_scale and
        # sigma), to first order
        scale_growth = (1.0 + np.abs(xhat).max(axis=axes)
                        + np.abs(dy).max(axis=axes) / sigma)
        d_scale = np.abs((dy * xhat).sum(axis=axes))
        # the factor scale / sigma / n itself may underflow (a subnormal scale in float16:
        # 6e-8 / 4 rounds to 0), an absolute error of up to tiny that the bracket
        # (n dy - d_offset - xhat d_scale) multiplies
        bracket = n * np.abs(dy) + d_offset_mag + (np.abs(xhat) + absx) * d_scale_mag
        dx_growth = (1.0 + np.abs(scale) / sigma * (1.0 + (1.0 + d_scale / sigma) / n
                                                    + np.abs(xhat) * scale_growth)
                     + 2.0 * dx_mag / sigma ** 2 + bracket)
        return [(r + 3, dx_mag, dx_growth), (r, d_scale_mag, scale_growth), (n, d_offset_mag)]
    raise ValueError(f"batch_norm: argument 'kind' must be 'inference', 'training' or "
                     f"'grad', got {kind!r}")
