"""Area data_movement: transpose, broadcast_in_dim, reverse, concatenate, pad, slice,
reshape and copy on the device, bit for bit, in every dtype.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``): each op is lowered with jax (one StableHLO op per
program; ``copy`` is the identity program, whose result XLA copies out of the argument)
and run through ``runtime`` on every local device at once (one SPMD executable,
replicated inputs). Shapes are non-square, 2-d and 3-d, with axes drawn one below, at
and one above tile and block widths (``strategies.grid_shapes``) under an element budget
(``strategies.element_budget``: 40K elements per operand under ``ci``, 1M under ``nightly``).
Inputs are arbitrary bit patterns (``strategies.seeded_bit_patterns``): every example holds
NaNs with payloads (quiet and signaling, both signs), both zeros, subnormals and
infinities; 8-bit floats all 256 codes, 4-bit types all 16.

Data movement moves bits: the reference does the same movement on the raw bytes in
NumPy (:mod:`conformance.helpers.moved_bytes`), and every device's result must match
it bit for bit (hex bits in the message).
No float behaviour applies: flush-to-zero, NaN canonicalization or a quieted NaN in a
moved element is a wrong result.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import moved_bytes
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction
from conformance.programs import compiled_programs
from conformance.programs import moves

DTYPES = [capabilities.param(d) for d in dtype_helpers.TRANSFER_DTYPES]
#: Half the active profile's examples (``ci``: 4): every example compiles a new program
#: (about 50 ms on XLA:CPU) and the area has 8 ops x 25 dtypes.
HALF = settings(max_examples=max(settings.default.max_examples // 2, 1))


def _budget() -> int:
    """Elements of one operand: 40K under ``ci`` (37K is the largest boundary pair,
    4097 x 9), 1M under ``nightly``."""
    return strategies.element_budget(40_000, 1 << 20)


def _operand(data, dt: dtype_helpers.DType, shape: tuple[int, ...], label: str) -> np.ndarray:
    return data.draw(strategies.seeded_bit_patterns(dt, shape), label=label)


def _run(program_cache, op: str, fn, args: list[np.ndarray], expected: np.ndarray,
         dt: dtype_helpers.DType, call: str) -> None:
    """Run ``fn`` on ``args`` on every device; each result must have ``expected``'s bits."""
    outs, program = compiled_programs.run_everywhere(program_cache, f"data_movement_{op}", fn, args,
                                                     dt, call)
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            assertions.assert_bitwise_equal(out, expected, call=f"{call} on {device}")


def _name(dt: dtype_helpers.DType, shape: tuple[int, ...]) -> str:
    return f"{dt.name}{list(shape)}"


# One jax function per signature (the program cache keys on the function); transpose,
# broadcast_in_dim and reverse are the ones every area's operands are moved with.
@functools.lru_cache(maxsize=None)
def _concatenate(dim: int):
    return lambda *xs: lax.concatenate(xs, dim)


@functools.lru_cache(maxsize=None)
def _pad(config: tuple[tuple[int, int, int], ...]):
    return lambda x, v: lax.pad(x, v, config)


@functools.lru_cache(maxsize=None)
def _slice(start: tuple[int, ...], limit: tuple[int, ...], strides: tuple[int, ...]):
    return lambda x: lax.slice(x, start, limit, strides)


@functools.lru_cache(maxsize=None)
def _reshape(shape: tuple[int, ...]):
    return lambda x: lax.reshape(x, shape)


def _copy(x):
    return x  # lowers to `return %arg0`: the result buffer is XLA's copy of the argument


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_transpose(program_cache, dt, data):
    shape = data.draw(strategies.grid_shapes(_budget()), label="shape")
    identity = tuple(range(len(shape)))
    perm = tuple(data.draw(st.permutations(identity).filter(lambda p: tuple(p) != identity),
                           label="permutation"))
    x = _operand(data, dt, shape, "x")
    expected = moved_bytes.from_bytes(np.transpose(moved_bytes.as_bytes(x), perm + (len(shape),)),
                                      dt.dtype)
    _run(program_cache, "transpose", moves.transpose(perm), [x], expected, dt,
         f"transpose({_name(dt, shape)}, permutation={list(perm)})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_broadcast_in_dim(program_cache, dt, data):
    """A 1-d or 2-d operand into a 2-d or 3-d result: new axes, and operand axes of
    size 1 expanded."""
    out = data.draw(strategies.grid_shapes(_budget()), label="result shape")
    rank = data.draw(st.integers(1, len(out) - 1), label="operand rank")
    dims = tuple(sorted(data.draw(st.permutations(range(len(out))), label="dims")[:rank]))
    ones = data.draw(st.lists(st.booleans(), min_size=rank, max_size=rank),
                     label="expanded operand axes")
    shape = tuple(1 if one else out[d] for d, one in zip(dims, ones))
    x = _operand(data, dt, shape, "x")
    placed = [1] * len(out)
    for d, n in zip(dims, shape):
        placed[d] = n
    b = moved_bytes.as_bytes(x).reshape(tuple(placed) + (dt.dtype.itemsize,))
    expected = moved_bytes.from_bytes(np.broadcast_to(b, tuple(out) + (dt.dtype.itemsize,)),
                                      dt.dtype)
    _run(program_cache, "broadcast_in_dim", moves.broadcast_in_dim(out, dims), [x], expected, dt,
         f"broadcast_in_dim({_name(dt, shape)}, shape={list(out)}, "
         f"broadcast_dimensions={list(dims)})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_reverse(program_cache, dt, data):
    shape = data.draw(strategies.grid_shapes(_budget()), label="shape")
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1),
                                  label="dimensions")))
    x = _operand(data, dt, shape, "x")
    expected = moved_bytes.from_bytes(np.flip(moved_bytes.as_bytes(x), dims), dt.dtype)
    _run(program_cache, "reverse", moves.reverse(dims), [x], expected, dt,
         f"reverse({_name(dt, shape)}, dimensions={list(dims)})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_concatenate(program_cache, dt, data):
    """Two or three operands whose sizes along the dimension differ (drawn by
    ``strategies.axis_sizes``), under the budget together."""
    n = data.draw(st.integers(2, 3), label="operands")
    shape = data.draw(strategies.grid_shapes(_budget() // n), label="first operand shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dimension")
    rest = math.prod(shape) // shape[dim]
    xs = [_operand(data, dt, shape, "x0")]
    for i in range(1, n):
        size = data.draw(strategies.axis_sizes(max(_budget() // n // rest, 1), min_size=1),
                         label=f"x{i} size along dimension")
        xs.append(_operand(data, dt, shape[:dim] + (size,) + shape[dim + 1:], f"x{i}"))
    expected = moved_bytes.from_bytes(
        np.concatenate([moved_bytes.as_bytes(x) for x in xs], axis=dim), dt.dtype)
    _run(program_cache, "concatenate", _concatenate(dim), xs, expected, dt,
         f"concatenate({', '.join(_name(dt, x.shape) for x in xs)}, dimension={dim})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_pad(program_cache, dt, data):
    """Edge padding from -2 to 9 (negative: cropping) and interior padding 0 to 2 per
    axis; the padding value is a drawn bit pattern (a NaN payload, a subnormal...)."""
    shape = data.draw(strategies.grid_shapes(_budget() // 9), label="shape")
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2), label="interior")
        grown = d + (d - 1) * interior
        lo = data.draw(st.integers(max(-2, 1 - grown), 9), label="low")
        hi = data.draw(st.integers(max(-2, 1 - grown - lo), 9), label="high")
        config.append((lo, hi, interior))
    config = tuple(config)
    x = _operand(data, dt, shape, "x")
    value = _operand(data, dt, (), "padding value")
    expected = moved_bytes.pad(x, value, config)
    _run(program_cache, "pad", _pad(config), [x, value], expected, dt,
         f"pad({_name(dt, shape)}, {value!r}, (low, high, interior)={list(config)})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_slice(program_cache, dt, data):
    """Start, limit and stride (1 to 5) drawn per axis; never empty."""
    shape = data.draw(strategies.grid_shapes(_budget()), label="shape")
    start, limit, strides = [], [], []
    for d in shape:
        start.append(data.draw(st.integers(0, d - 1), label="start"))
        limit.append(data.draw(st.integers(start[-1] + 1, d), label="limit"))
        strides.append(data.draw(st.integers(1, 5), label="stride"))
    x = _operand(data, dt, shape, "x")
    cut = tuple(slice(s, e, k) for s, e, k in zip(start, limit, strides))
    expected = moved_bytes.from_bytes(moved_bytes.as_bytes(x)[cut], dt.dtype)
    key = tuple(start), tuple(limit), tuple(strides)
    _run(program_cache, "slice", _slice(*key), [x], expected, dt,
         f"slice({_name(dt, shape)}, start={start}, limit={limit}, strides={strides})")


def _divisors(n: int) -> list[int]:
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    return sorted(set(small + [n // k for k in small]))


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_reshape(program_cache, dt, data):
    """Into another 1-d, 2-d or 3-d factorization of the element count (row-major)."""
    shape = data.draw(strategies.grid_shapes(_budget()), label="shape")
    size = math.prod(shape)
    a = data.draw(st.sampled_from(_divisors(size)), label="first axis")
    b = data.draw(st.sampled_from(_divisors(size // a)), label="second axis")
    new = data.draw(st.sampled_from([(size,), (a, size // a), (a, b, size // a // b)]),
                    label="new shape")
    x = _operand(data, dt, shape, "x")
    expected = moved_bytes.from_bytes(moved_bytes.as_bytes(x).reshape(new + (dt.dtype.itemsize,)),
                                      dt.dtype)
    _run(program_cache, "reshape", _reshape(new), [x], expected, dt,
         f"reshape({_name(dt, shape)}, new_sizes={list(new)})")


@pytest.mark.parametrize("dt", DTYPES)
@HALF
@given(data=st.data())
def test_copy(program_cache, dt, data):
    shape = data.draw(strategies.grid_shapes(_budget()), label="shape")
    x = _operand(data, dt, shape, "x")
    _run(program_cache, "copy", _copy, [x], x.copy(), dt, f"copy({_name(dt, shape)})")
