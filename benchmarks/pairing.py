"""Paired ratios: an operation timed side by side with its reference in one process.

The one implementation of "ratio to a reference" for every front end: asv's
``track_ratio_*`` benchmarks (made by :func:`make_ratio`), the transfer-path table
(:mod:`benchmarks.transfer_paths`) and the pytest-benchmark summary
(:mod:`benchmarks.ratios`, which prints the ``track_ratio_*`` values). Each round
times the measured operation and its reference back to back (alternating which goes
first), so load that drifts, or a slower machine, moves both sides; the ratio is the
median over rounds of measured time / reference time: 1.0 is reference speed, 2.0
twice as slow.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

REPS = 7
MIN_SECONDS = 0.02  # each side's timing loop runs at least this long (a few scheduler
# periods, so preemption on a shared machine falls on both sides alike)
REF_MEMCPY = ("Reference: memcpy bandwidth, np.copyto of the same array into a preallocated "
              "one.")
REF_NUMPY_ALLOC_COPY = "Reference: numpy allocate+copy (a.copy())."


def seconds(fn: Callable[[], Any]) -> float:
    """Wall seconds of one call of ``fn``; its result is dropped after the timing."""
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    del result  # memory goes back as a caller's would, outside the timing
    return elapsed


def per_call(fn: Callable[[], Any], number: int) -> float:
    """Mean wall seconds of ``fn`` over ``number`` (>= 1) calls in a loop."""
    if number == 1:
        return seconds(fn)
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def calls_for(fn: Callable[[], Any], min_seconds: float = MIN_SECONDS) -> int:
    """How many calls of ``fn`` take at least ``min_seconds`` when nothing preempts it:
    from the fastest of three single calls (preemption only adds time, and a loop that
    is too short would escape the load that a longer one shares)."""
    one = max(min(seconds(fn) for _ in range(3)), 1e-9)
    return max(1, math.ceil(min_seconds / one))


def paired_ratio(measured: Callable[[], Any], reference: Callable[[], Any],
                 reps: int = REPS, min_seconds: float = MIN_SECONDS) -> float:
    """Median over ``reps`` rounds of (seconds per call of ``measured``) / (seconds per
    call of ``reference``), the two timed back to back in each round (dimensionless;
    > 1: ``measured`` is slower). Raises ValueError for ``reps`` < 1 or a negative
    ``min_seconds``."""
    if not isinstance(reps, int) or reps < 1:
        raise ValueError(f"reps: expected an int >= 1, got {reps!r}")
    if not min_seconds >= 0:
        raise ValueError(f"min_seconds: expected >= 0, got {min_seconds!r}")
    n_measured, n_reference = calls_for(measured, min_seconds), calls_for(reference, min_seconds)
    ratios = []
    for rep in range(reps):
        if rep % 2:
            t_measured = per_call(measured, n_measured)
            t_reference = per_call(reference, n_reference)
        else:
            t_reference = per_call(reference, n_reference)
            t_measured = per_call(measured, n_measured)
        ratios.append(t_measured / max(t_reference, 1e-12))
    return statistics.median(ratios)


def make_ratio(measured: str, reference: str, doc: str) -> Callable[..., float]:
    """An asv ``track_`` method (``unit = "ratio"``) giving :func:`paired_ratio` of the
    instance's methods ``measured`` and ``reference``, each called with the benchmark's
    parameters. Assign it in the class body as ``track_ratio_<what>_vs_<reference>``;
    ``doc`` names the reference (the dashboard shows it)."""
    if not (measured and reference and doc):
        raise ValueError("make_ratio: measured, reference and doc must be non-empty")

    def track(self: Any, *params: Any) -> float:
        return paired_ratio(lambda: getattr(self, measured)(*params),
                            lambda: getattr(self, reference)(*params))

    track.unit = "ratio"
    track.ratio_of = (measured, reference)  # asv copies it into benchmarks.json
    track.__doc__ = f"{measured} / {reference} (paired, median; > 1: slower). {doc}"
    return track
