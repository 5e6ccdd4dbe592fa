"""The op catalog: StableHLO ops with their jax lowering, NumPy reference, dtype kinds
and tolerance class. Areas draw their ops from here (one entry per op)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (StableHLO ``divide`` on integers)."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix.astype(q.dtype)).astype(a.dtype)


@dataclasses.dataclass(frozen=True)
class Elementwise:
    """An elementwise StableHLO op and its NumPy reference.

    ``kinds``: dtype kinds the op accepts. ``exact``: IEEE or two's complement
    defines the result exactly (compared with zero rtol). ``domain``: float input
    range (None: +-1e3). ``atol_scale``: absolute tolerance in units of rtol, for
    results near zero. ``int_reference``: reference for integer dtypes if it
    differs from ``reference``.
    """

    name: str
    fn: Callable[..., Any]
    arity: int
    reference: Callable[..., np.ndarray]
    kinds: tuple[str, ...]
    exact: bool = True
    domain: tuple[float, float] | None = None
    atol_scale: float = 1.0
    returns_bool: bool = False
    int_reference: Callable[..., np.ndarray] | None = None


_NUM = ("int", "uint", "float", "complex")
_ORDERED = ("int", "uint", "float")

ELEMENTWISE: dict[str, Elementwise] = {op.name: op for op in [
    Elementwise("add", lax.add, 2, np.add, _NUM),
    Elementwise("subtract", lax.sub, 2, np.subtract, _NUM),
    Elementwise("multiply", lax.mul, 2, np.multiply, _NUM),
    Elementwise("divide", lax.div, 2, np.divide, _NUM, int_reference=_trunc_divide),
    Elementwise("maximum", lax.max, 2, np.maximum, _ORDERED),
    Elementwise("minimum", lax.min, 2, np.minimum, _ORDERED),
    Elementwise("negate", lax.neg, 1, np.negative, _NUM),
    Elementwise("abs", lax.abs, 1, np.abs, ("int", "float", "complex"), exact=False),
    Elementwise("exp", lax.exp, 1, np.exp, ("float",), exact=False, domain=(-10, 10)),
    Elementwise("log", lax.log, 1, np.log, ("float",), exact=False, domain=(1e-3, 1e3)),
    Elementwise("sqrt", lax.sqrt, 1, np.sqrt, ("float",), domain=(0, 1e3)),
    Elementwise("sin", lax.sin, 1, np.sin, ("float",), exact=False, domain=(-30, 30),
                atol_scale=32),
    Elementwise("cos", lax.cos, 1, np.cos, ("float",), exact=False, domain=(-30, 30),
                atol_scale=32),
    Elementwise("tanh", lax.tanh, 1, np.tanh, ("float",), exact=False, domain=(-10, 10)),
    Elementwise("compare_eq", lax.eq, 2, np.equal, _NUM + ("bool",), returns_bool=True),
    Elementwise("compare_ne", lax.ne, 2, np.not_equal, _NUM + ("bool",), returns_bool=True),
    Elementwise("compare_lt", lax.lt, 2, np.less, _ORDERED, returns_bool=True),
    Elementwise("compare_le", lax.le, 2, np.less_equal, _ORDERED, returns_bool=True),
    Elementwise("compare_gt", lax.gt, 2, np.greater, _ORDERED, returns_bool=True),
    Elementwise("compare_ge", lax.ge, 2, np.greater_equal, _ORDERED, returns_bool=True),
]}
