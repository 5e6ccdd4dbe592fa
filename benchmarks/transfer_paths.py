"""Every host<->device transfer path as a speed fraction of memcpy (issue 20 part 5).

The reference is memcpy bandwidth: ``np.copyto`` of the same host array into a
preallocated, already touched array (:func:`memcpy`). Each path is timed interleaved
with its own runs of the reference, in one process, ``REPS`` pairs
(:mod:`benchmarks.pairing`), so a loaded or slow machine moves both. Values are
reference time / path time: 1.0 is memcpy speed, the goal is >= 0.9 for every
host-to-device path; an aliasing path (ZERO_COPY on an aligned array, ``np.asarray`` of
a CPU array) is far above 1. ``bench_transfer.TransferRatio`` tracks the same with its
99% interval. :func:`numpy_alloc_copy` (allocate + copy) is the other reference.

    python -m benchmarks.transfer_paths [MiB ...]   # all paths side by side
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import backend, pairing
from runtime.xla_client import HostBufferSemantics

SIZES_MIB = [64, 256]
REPS = pairing.REPS
_SEMANTICS = {"zero_copy": "ZERO_COPY", "during_call": "IMMUTABLE_ONLY_DURING_CALL",
              "until_done": "IMMUTABLE_UNTIL_TRANSFER_COMPLETES"}
PATHS = ([f"h2d_{s}{fc}_{al}" for s in _SEMANTICS for fc in ("", "_force_copy")
          for al in ("unaligned", "aligned")]
         + ["d2h_np_asarray", "d2h_np_array_copy", "d2h_copy_to_host_async_asarray"])


def host_array(nbytes: int, aligned: bool) -> np.ndarray:
    """float32 host data of ``nbytes``: numpy's own allocation (16 bytes past a page on
    glibc, so not 64-byte aligned) or a slice of it that starts on a 64-byte line."""
    if not aligned:
        a = np.ones(nbytes // 4, np.float32)
        if a.ctypes.data % 64 == 0:  # an allocator that aligns: shift by one element
            a = np.ones(nbytes // 4 + 1, np.float32)[1:]
        return a
    raw = np.ones(nbytes // 4 + 16, np.float32)
    start = (-raw.ctypes.data) % 64 // 4
    return raw[start:start + nbytes // 4]


def path_function(path: str, nbytes: int) -> Callable[[], Any]:
    """A no-argument callable doing one transfer of ``path`` (a name in PATHS) of
    ``nbytes``, waiting until it is done. Raises ValueError for an unknown path."""
    if path not in PATHS:
        raise ValueError(f"path: expected one of {PATHS}, got {path!r}")
    client, dev = backend.client(), backend.device()
    if path.startswith("h2d_"):
        host = host_array(nbytes, path.endswith("_aligned"))
        sem = getattr(HostBufferSemantics, next(v for k, v in _SEMANTICS.items()
                                                if path.startswith(f"h2d_{k}")))
        force = "_force_copy" in path
        return lambda: client.buffer_from_pyval(host, dev, force_copy=force,
                                                host_buffer_semantics=sem).block_until_ready()
    arr = backend.put(host_array(nbytes, False)).block_until_ready()
    if path == "d2h_np_asarray":
        return lambda: np.asarray(arr)
    if path == "d2h_np_array_copy":
        return lambda: np.array(arr, copy=True)

    def async_then_asarray() -> np.ndarray:
        arr.copy_to_host_async()
        return np.asarray(arr)
    return async_then_asarray


def numpy_alloc_copy(nbytes: int) -> Callable[[], np.ndarray]:
    """The reference: allocate like a numpy-allocated (unaligned) array and copy it."""
    a = host_array(nbytes, False)

    def ref() -> np.ndarray:
        out = np.empty_like(a)
        np.copyto(out, a)
        return out
    return ref


def memcpy(nbytes: int) -> Callable[[], None]:
    """The memcpy reference: ``np.copyto`` of a numpy-allocated (unaligned) float32
    array of ``nbytes`` into a preallocated, already touched one (no page faults)."""
    a = host_array(nbytes, False)
    out = np.empty_like(a)
    np.copyto(out, a)
    return lambda: np.copyto(out, a)


def paired_ratios(ref: Callable[[], Any], functions: dict[str, Callable[[], Any]],
                  reps: int = REPS) -> dict[str, float]:
    """``ref`` time / function time for each of ``functions``: the inverse of
    :func:`benchmarks.pairing.paired_ratio` (each function timed side by side with its
    own runs of ``ref``, median of ``reps`` rounds). Raises ValueError for ``reps`` < 1."""
    return {k: 1.0 / pairing.paired_ratio(fn, ref, reps) for k, fn in functions.items()}


def ratios(nbytes: int, paths: list[str] = PATHS, reps: int = REPS) -> dict[str, float]:
    """memcpy time / path time (speed fraction) for each of ``paths`` at ``nbytes``."""
    return paired_ratios(memcpy(nbytes),
                         {p: path_function(p, nbytes) for p in paths}, reps)


if __name__ == "__main__":
    for mib in [int(m) for m in sys.argv[1:]] or SIZES_MIB:
        for p, r in ratios(mib << 20).items():
            print(f"{mib:4d} MiB  {p:40s} {r:6.2f}x memcpy speed")

