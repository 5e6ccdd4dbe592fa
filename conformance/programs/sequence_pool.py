"""The programs a sequence of runtime calls draws from, each with its NumPy reference.

Every program takes and returns ``int32[n, n]`` arrays, so every result is bit-exact:
XLA's int32 arithmetic wraps modulo 2**32, as NumPy's int32 arrays do. Each program is
kept as the text of a lambda (jax.numpy as ``jnp``, ``jax.lax`` as ``lax``), so that the
test and a standalone reproduction (:mod:`conformance.helpers.sequence_script`) compile
the same source. Kinds: elementwise, reduce, dot, dynamic_update_slice (its start
indices read from the data: negative ones count from the end, as jax defines them, and
out-of-range ones are clamped), and multi-output (two
results, one of them an input's value in swapped order: donation with an output order).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

I32 = np.int32


def _clamp(start: int, size: int, dim: int) -> int:
    """The start index ``lax.dynamic_update_slice`` uses: a negative one counts from the
    end (jax adds ``dim``, as Python indexing does), then StableHLO clamps it into
    ``[0, dim - size]``."""
    start = int(start) + dim if int(start) < 0 else int(start)
    return int(min(max(start, 0), dim - size))


def _dus(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = x.copy()
    upd = y[:2, :3]
    i, j = _clamp(y[0, 0], 2, x.shape[0]), _clamp(y[0, 1], 3, x.shape[1])
    out[i:i + 2, j:j + 3] = upd
    return out


@dataclasses.dataclass(frozen=True)
class Program:
    """``source``: a lambda over ``jnp``/``lax``; ``arity``: its ``int32[n, n]``
    arguments; ``outputs``: its ``int32[n, n]`` results; ``reference``: the text of
    the same function on NumPy int32 arrays (``np``, ``I32``, ``_dus``), returning a
    tuple of them."""

    source: str
    arity: int
    outputs: int
    reference: str


POOL: dict[str, Program] = {
    "scale": Program("lambda x: x * 3 + 1", 1, 1, "lambda x: (x * I32(3) + I32(1),)"),
    "reduce": Program("lambda x: x + jnp.sum(x, axis=0, keepdims=True, dtype=jnp.int32)", 1, 1,
                      "lambda x: (x + x.sum(axis=0, dtype=I32, keepdims=True),)"),
    "dot": Program("lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int32)", 2, 1,
                   "lambda x, y: (np.matmul(x, y),)"),
    "update": Program("lambda x, y: lax.dynamic_update_slice(x, y[:2, :3], (y[0, 0], y[0, 1]))",
                      2, 1, "lambda x, y: (_dus(x, y),)"),
    "pair": Program("lambda x, y: (x + y, x - y)", 2, 2, "lambda x, y: (x + y, x - y)"),
    "swap": Program("lambda x, y: (y, x * 2)", 2, 2, "lambda x, y: (y.copy(), x * I32(2))"),
}
#: The NumPy helpers a reference may call, as text (a reproduction script defines them).
HELPERS = (_clamp, _dus)
#: The programs of one argument (a chain of executions feeds each result to the next).
UNARY = tuple(k for k, p in POOL.items() if p.arity == 1 and p.outputs == 1)


@functools.cache
def function(name: str) -> Callable[..., object]:
    """The jax function of program ``name`` (its lambda evaluated with ``jnp`` and
    ``lax``; one object per name, so a compile cache keyed by it hits). Raises KeyError
    naming an unknown program."""
    if name not in POOL:
        raise KeyError(f"argument 'name': no program {name!r} in the pool {sorted(POOL)}")
    from jax import lax
    from jax import numpy as jnp

    return eval(POOL[name].source, {"jnp": jnp, "lax": lax})  # noqa: S307 (our own text)


def reference(name: str) -> Callable[..., tuple[np.ndarray, ...]]:
    """The NumPy reference of program ``name``. Raises KeyError naming an unknown program."""
    if name not in POOL:
        raise KeyError(f"argument 'name': no program {name!r} in the pool {sorted(POOL)}")
    return eval(POOL[name].reference, {"np": np, "I32": I32, "_dus": _dus})  # noqa: S307


def values(kind: str, key: int, n: int) -> np.ndarray:
    """Host values of an ``int32[n, n]`` put: ``kind`` ``"iota"`` (0, 1, ... times
    ``key``, wrapping) or ``"random"`` (every int32 bit pattern, from the PCG64 stream
    of seed ``abs(key)``). Raises ValueError for another kind."""
    if kind == "iota":
        return (np.arange(n * n, dtype=np.int64) * key).astype(I32).reshape(n, n)
    if kind == "random":
        return np.random.default_rng(abs(key)).integers(-2**31, 2**31, (n, n), dtype=I32)
    raise ValueError(f"argument 'kind' must be 'iota' or 'random', got {kind!r}")
