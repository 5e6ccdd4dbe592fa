"""Threefry-2x32 in NumPy: an independent reference for the platform's PRNG kernel.

Written from the Random123 specification (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3", SC 2011): 20 rounds of the Threefish mix with
the 2x32 rotation constants, a key injection every four rounds, and the key
schedule parity constant 0x1BD11BDA. ``rounds`` is a parameter so a self-test
can show that one round fewer is detected. Checked against the Random123
known-answer vectors in ``tests/test_threefry.py``.
"""

from __future__ import annotations

import numpy as np

ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY = np.uint32(0x1BD11BDA)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(key: tuple[int, int], x0: np.ndarray, x1: np.ndarray, *,
                 rounds: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 of counter words (x0, x1) under ``key`` (two uint32).

    x0, x1: uint32 arrays of one shape. Returns two uint32 arrays of that shape.
    Raises ValueError for rounds outside 1..20 or counters of differing shapes.
    """
    if not 1 <= rounds <= 20:
        raise ValueError(f"threefry2x32: argument 'rounds' must be in 1..20, got {rounds}")
    x0, x1 = np.asarray(x0, np.uint32).copy(), np.asarray(x1, np.uint32).copy()
    if x0.shape != x1.shape:
        raise ValueError(f"threefry2x32: counter words differ in shape: {x0.shape} vs {x1.shape}")
    ks = [np.uint32(key[0]), np.uint32(key[1])]
    ks.append(ks[0] ^ ks[1] ^ PARITY)
    with np.errstate(over="ignore"):
        x0 += ks[0]
        x1 += ks[1]
        for r in range(rounds):
            x0 += x1
            x1 = _rotl(x1, ROTATIONS[r % 8])
            x1 ^= x0
            if r % 4 == 3:  # key injection s after every fourth round
                s = r // 4 + 1
                x0 += ks[s % 3]
                x1 += ks[(s + 1) % 3] + np.uint32(s)
    return x0, x1


def jax_threefry_2x32(key: tuple[int, int], count: np.ndarray, *, rounds: int = 20) -> np.ndarray:
    """``jax.extend.random.threefry_2x32(key, count)``'s layout: a flat even-length count
    is split into halves (x0, x1) and the two outputs are concatenated; an odd length
    is padded with one zero and the last output word dropped."""
    flat = np.asarray(count, np.uint32).ravel()
    odd = flat.size % 2
    if odd:
        flat = np.concatenate([flat, np.zeros(1, np.uint32)])
    half = flat.size // 2
    y0, y1 = threefry2x32(key, flat[:half], flat[half:], rounds=rounds)
    out = np.concatenate([y0, y1])
    return (out[:-1] if odd else out).reshape(np.shape(count))
