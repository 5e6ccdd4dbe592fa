"""The op catalog: every elementwise StableHLO op under test, once, with its jax lowering,
NumPy reference, dtype kinds, input domain, tolerance class and the areas that check it.

Areas select their ops with :func:`ops` (``EXECUTE``: ``test_execute``;
``FLOAT_KERNELS`` and ``INT_KERNELS``: ``test_kernels_elementwise``); test ids are
``<op name>-<dtype name>``. Tolerances themselves (ULP budgets, rtol) are in
:mod:`conformance.helpers.tolerances` (per op in float64, per dtype otherwise); an op
only says which class applies.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

#: Tolerance classes. ``EXACT``: IEEE 754 / two's complement define the result (0 ULP).
#: ``ULP``: within the dtype's ULP count (relative tolerance where compared in values).
#: ``ARGUMENT_SCALED``: as ``ULP``, or within an absolute error of the tolerance unit times
#: ``max(1, max|x|)``: periodic ops whose range reduction makes the relative error near a
#: zero of the function unbounded on every implementation.
EXACT, ULP, ARGUMENT_SCALED = "exact", "ulp", "argument_scaled"
#: Areas: the execute area (every dtype kind of the op, drawn values), the float and the
#: integer special-value checks of kernels_elementwise.
EXECUTE, FLOAT_KERNELS, INT_KERNELS = "execute", "kernels_float", "kernels_int"


@dataclasses.dataclass(frozen=True)
class Elementwise:
    """An elementwise StableHLO op and its references.

    ``fn``: the jax function lowered to the program (``arity`` array arguments).
    ``reference``: NumPy on float/complex arrays (exact ops run it in the input dtype,
    the others in float64/complex128), and on bool/integer arrays unless
    ``int_reference`` (exact, two's complement wraparound, same dtype) is given.
    ``kinds``: dtype kinds the op accepts ('bool', 'int', 'uint', 'float', 'complex').
    ``tolerance``: its class on real floats (``EXACT``, ``ULP``, ``ARGUMENT_SCALED``).
    ``areas``: the areas that check it. ``domain``: (lo, hi) of drawn float inputs for
    the ULP accuracy check; ``rtol_domain``: a narrower range for checks with a relative
    tolerance, where results must stay finite even in float16 (None: ``domain``).
    ``signed_zeros``: the sign of a zero result is defined. ``complex_exact``: the
    complex form is exact too (False: it rounds several real operations).
    """

    name: str
    fn: Callable[..., Any]
    arity: int
    reference: Callable[..., np.ndarray]
    kinds: tuple[str, ...]
    tolerance: str = EXACT
    areas: tuple[str, ...] = ()
    domain: tuple[float, float] = (-1e3, 1e3)
    rtol_domain: tuple[float, float] | None = None
    signed_zeros: bool = True
    complex_exact: bool = True
    returns_bool: bool = False
    int_reference: Callable[..., np.ndarray] | None = None

    @property
    def exact(self) -> bool:
        """IEEE 754 defines the result on real floats (0 ULP)."""
        return self.tolerance == EXACT

    def exact_on(self, kind: str) -> bool:
        """Whether results of dtype ``kind`` must match the reference exactly."""
        if kind in ("bool", "int", "uint"):
            return True
        return self.exact and (kind != "complex" or self.complex_exact)

    def arg_scale(self, args: Sequence[np.ndarray]) -> float | np.ndarray:
        """Elementwise ``max(1, |args[0]|)`` (float64, the shape of ``args[0]``) for
        ``ARGUMENT_SCALED`` ops, else 1: the factor on the tolerance unit that gives the
        absolute error allowed. Per element: one large argument must not loosen the bound
        of the others (range reduction errs in proportion to its own argument)."""
        if self.tolerance != ARGUMENT_SCALED:
            return 1.0
        return np.maximum(1.0, np.abs(np.asarray(args[0], np.float64)))


def ops(area: str) -> list[Elementwise]:
    """The catalog's ops checked by ``area`` (``EXECUTE``, ``FLOAT_KERNELS``,
    ``INT_KERNELS``), in catalog order. Raises ValueError for another area."""
    if area not in (EXECUTE, FLOAT_KERNELS, INT_KERNELS):
        raise ValueError(f"ops: argument 'area' must be one of {EXECUTE!r}, {FLOAT_KERNELS!r}, "
                         f"{INT_KERNELS!r}, got {area!r}")
    return [op for op in ELEMENTWISE.values() if area in op.areas]


# -- references ------------------------------------------------------------------------------

def wrap_ints(python_ints: Sequence[int], dtype: Any) -> np.ndarray:
    """1-D array of Python integers reduced modulo 2**bits into integer ``dtype``
    (two's complement)."""
    size = np.dtype(dtype).itemsize
    return np.array([v & ((1 << (8 * size)) - 1) for v in python_ints], f"u{size}").view(dtype)


def _on_ints(fn: Callable[..., int], *, width: bool = False) -> Callable[..., np.ndarray]:
    """Array reference computing ``fn`` on Python integers (``width``: the bit width is
    passed last), wrapped into the first argument's dtype and shape."""
    def reference(*args: np.ndarray) -> np.ndarray:
        dtype = args[0].dtype
        extra = (8 * dtype.itemsize,) if width else ()
        flat = zip(*(np.asarray(a).ravel() for a in args))
        return wrap_ints([fn(*(int(v) for v in vals), *extra) for vals in flat],
                         dtype).reshape(np.shape(args[0]))
    return reference


def _unsigned(a: int, bits: int) -> int:
    return a & ((1 << bits) - 1)


def _signed(a: int, bits: int) -> int:
    """``a`` read as a signed integer of width ``bits``."""
    a = _unsigned(a, bits)
    return a - (1 << bits) if a >> (bits - 1) else a


# StableHLO: a shift by an amount outside [0, bits) gives 0 (left, logical right) or the
# sign fill (arithmetic right); amounts are read as the operand's own type.
def _shift_left(a: int, s: int, bits: int) -> int:
    return a << s if 0 <= s < bits else 0


def _shift_right_logical(a: int, s: int, bits: int) -> int:
    return _unsigned(a, bits) >> s if 0 <= s < bits else 0


def _shift_right_arithmetic(a: int, s: int, bits: int) -> int:
    return _signed(a, bits) >> (s if 0 <= s < bits else bits - 1)


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (StableHLO ``divide`` on integers)."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(q.dtype)).astype(a.dtype)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """Round half away from zero, the sign of zero kept (computed exactly in float64)."""
    w = x.astype(np.float64)
    return np.where(np.isfinite(w), np.copysign(np.floor(np.abs(w) + 0.5), w), w).astype(x.dtype)


def _sign(x: np.ndarray) -> np.ndarray:
    """StableHLO sign: -1, +1, the zero itself (signed), NaN."""
    return np.where(x == 0, x, np.sign(x)).astype(x.dtype)


# -- the catalog -----------------------------------------------------------------------------

_NUM = ("int", "uint", "float", "complex")
_ORDERED = ("int", "uint", "float")
_INT = ("int", "uint")
_F = ("float",)
_X, _FK, _IK = (EXECUTE,), (FLOAT_KERNELS,), (INT_KERNELS,)
_ALL = _X + _FK + _IK


def _compare(name: str, fn: Callable[..., Any], ref: Callable[..., np.ndarray],
             kinds: tuple[str, ...]) -> Elementwise:
    return Elementwise(name, fn, 2, ref, kinds, areas=_X, returns_bool=True)


def _bitwise(name: str, fn: Callable[..., Any], arity: int, ref: Callable[..., int], *,
             width: bool = False) -> Elementwise:
    reference = _on_ints(ref, width=width)
    return Elementwise(name, fn, arity, reference, _INT, areas=_IK, int_reference=reference)


ELEMENTWISE: dict[str, Elementwise] = {op.name: op for op in [
    Elementwise("add", lax.add, 2, np.add, _NUM, areas=_ALL,
                int_reference=_on_ints(operator.add)),
    Elementwise("subtract", lax.sub, 2, np.subtract, _NUM, areas=_ALL,
                int_reference=_on_ints(operator.sub)),
    Elementwise("multiply", lax.mul, 2, np.multiply, _NUM, areas=_ALL, complex_exact=False,
                int_reference=_on_ints(operator.mul)),
    Elementwise("divide", lax.div, 2, np.divide, _NUM, areas=_X + _FK, complex_exact=False,
                int_reference=_trunc_divide),
    # IEEE 754-2019 leaves the sign of max(-0, +0) to the implementation.
    Elementwise("maximum", lax.max, 2, np.maximum, _ORDERED, areas=_ALL, signed_zeros=False,
                int_reference=_on_ints(max)),
    Elementwise("minimum", lax.min, 2, np.minimum, _ORDERED, areas=_ALL, signed_zeros=False,
                int_reference=_on_ints(min)),
    Elementwise("negate", lax.neg, 1, np.negative, _NUM, areas=_ALL,
                int_reference=_on_ints(operator.neg)),
    Elementwise("abs", lax.abs, 1, np.abs, ("int", "float", "complex"), areas=_ALL,
                complex_exact=False, int_reference=_on_ints(abs)),
    Elementwise("sign", lax.sign, 1, _sign, _F, areas=_FK),
    Elementwise("floor", lax.floor, 1, np.floor, _F, areas=_FK),
    Elementwise("ceil", lax.ceil, 1, np.ceil, _F, areas=_FK),
    Elementwise("round_nearest_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                1, np.rint, _F, areas=_FK),
    Elementwise("round_nearest_afz", lax.round, 1, _round_half_away, _F, areas=_FK),
    Elementwise("sqrt", lax.sqrt, 1, np.sqrt, _F, areas=_X + _FK, domain=(0, 1e3)),
    Elementwise("exp", lax.exp, 1, np.exp, _F, ULP, _X + _FK, (-80, 80), (-10, 10)),
    Elementwise("expm1", lax.expm1, 1, np.expm1, _F, ULP, _FK, (-20, 20)),
    Elementwise("log", lax.log, 1, np.log, _F, ULP, _X + _FK, (1e-30, 1e30), (1e-3, 1e3)),
    Elementwise("log1p", lax.log1p, 1, np.log1p, _F, ULP, _FK, (-0.99, 1e3)),
    Elementwise("tanh", lax.tanh, 1, np.tanh, _F, ULP, _X + _FK, (-20, 20), (-10, 10)),
    Elementwise("logistic", lax.logistic, 1, lambda x: 1 / (1 + np.exp(-x)), _F, ULP, _FK,
                (-20, 20)),
    Elementwise("sin", lax.sin, 1, np.sin, _F, ARGUMENT_SCALED, _X + _FK, (-100, 100),
                (-30, 30)),
    Elementwise("cos", lax.cos, 1, np.cos, _F, ARGUMENT_SCALED, _X + _FK, (-100, 100),
                (-30, 30)),
    Elementwise("tan", lax.tan, 1, np.tan, _F, ARGUMENT_SCALED, _FK, (-1.5, 1.5)),
    Elementwise("rsqrt", lax.rsqrt, 1, lambda x: 1 / np.sqrt(x), _F, ULP, _FK, (1e-6, 1e6)),
    Elementwise("cbrt", lax.cbrt, 1, np.cbrt, _F, ULP, _FK),
    Elementwise("atan2", lax.atan2, 2, np.arctan2, _F, ULP, _FK),
    Elementwise("power", lax.pow, 2, np.power, _F, ULP, _FK, (0.01, 10)),
    _compare("compare_eq", lax.eq, np.equal, _NUM + ("bool",)),
    _compare("compare_ne", lax.ne, np.not_equal, _NUM + ("bool",)),
    _compare("compare_lt", lax.lt, np.less, _ORDERED),
    _compare("compare_le", lax.le, np.less_equal, _ORDERED),
    _compare("compare_gt", lax.gt, np.greater, _ORDERED),
    _compare("compare_ge", lax.ge, np.greater_equal, _ORDERED),
    _bitwise("and", lax.bitwise_and, 2, operator.and_),
    _bitwise("or", lax.bitwise_or, 2, operator.or_),
    _bitwise("xor", lax.bitwise_xor, 2, operator.xor),
    _bitwise("not", lax.bitwise_not, 1, operator.invert),
    _bitwise("popcnt", lax.population_count, 1,
             lambda a, bits: bin(_unsigned(a, bits)).count("1"), width=True),
    _bitwise("clz", lax.clz, 1, lambda a, bits: bits - _unsigned(a, bits).bit_length(),
             width=True),
    _bitwise("shift_left", lax.shift_left, 2, _shift_left, width=True),
    _bitwise("shift_right_logical", lax.shift_right_logical, 2, _shift_right_logical,
             width=True),
    _bitwise("shift_right_arithmetic", lax.shift_right_arithmetic, 2, _shift_right_arithmetic,
             width=True),
]}
