"""Paired ratios: an operation timed interleaved with its reference in one process.

The one implementation of "ratio to a reference" for every front end: asv's
``track_ratio_*`` benchmarks (made by :func:`make_ratio`), the transfer-path table
(:mod:`benchmarks.transfer_paths`) and the pytest-benchmark summary
(:mod:`benchmarks.ratios`, which prints the ``track_ratio_*`` values).

The statistic: ``REPS`` pairs, each one timing loop of the measured operation and one
of its reference back to back (A,B,B,A,A,B,...: the order alternates so neither side
always runs second), each loop at least ``MIN_SECONDS`` long. Each pair gives one
per-pair ratio (measured seconds per call) / (reference seconds per call); the value is
the median of the ``REPS`` per-pair ratios, and :mod:`benchmarks.intervals` persists
them so that asv's result carries the distribution-free 99% interval of that median
(binomial order statistics; with 21 pairs, between the 5th and 17th smallest). Load
that drifts, or a slower machine, moves both sides of a pair alike.

Direction: a time ratio (``unit = "ratio (lower is better)"``) is 1.0 at reference
speed and 2.0 twice as slow; a speed ratio (``"ratio (higher is better)"``,
:func:`make_speed_ratio`) is reference time / measured time, 1.0 at reference speed and
0.5 half as fast.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks import intervals

LOWER = "ratio (lower is better)"
HIGHER = "ratio (higher is better)"

REPS = 21  # pairs: the 99% interval of the median of 21 is [5th, 17th] smallest
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


def paired_samples(measured: Callable[[], Any], reference: Callable[[], Any],
                   reps: int = REPS, min_seconds: float = MIN_SECONDS) -> list[float]:
    """``reps`` per-pair ratios (seconds per call of ``measured``) / (seconds per call of
    ``reference``), the two timing loops of each pair back to back in this process, the
    order alternating (dimensionless; > 1: ``measured`` is slower). Raises ValueError for
    ``reps`` < 1 or a negative ``min_seconds``."""
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
    return ratios


def paired_ratio(measured: Callable[[], Any], reference: Callable[[], Any],
                 reps: int = REPS, min_seconds: float = MIN_SECONDS) -> float:
    """Median of :func:`paired_samples` (dimensionless; > 1: ``measured`` is slower)."""
    return statistics.median(paired_samples(measured, reference, reps, min_seconds))


def make_ratio(measured: str, reference: str, doc: str,
               speed: bool = False) -> Callable[..., float]:
    """An asv ``track_`` method giving the median of :func:`paired_samples` of the
    instance's methods ``measured`` and ``reference`` (each called with the benchmark's
    parameters), its samples recorded for asv's 99% interval (:mod:`benchmarks.
    intervals`). Time ratio measured/reference, ``unit`` :data:`LOWER`; with ``speed``
    the inverse, reference/measured (a speed fraction), ``unit`` :data:`HIGHER`. Assign
    it in the class body as ``track_ratio_<what>_vs_<reference>``; ``doc`` names the
    reference (the dashboard shows it)."""
    if not (measured and reference and doc):
        raise ValueError("make_ratio: measured, reference and doc must be non-empty")

    def track(self: Any, *params: Any) -> float:
        samples = paired_samples(lambda: getattr(self, measured)(*params),
                                 lambda: getattr(self, reference)(*params))
        if speed:
            samples = [1.0 / s for s in samples]
        return intervals.record(intervals.benchmark_name(self, track), params, samples)

    track.unit = HIGHER if speed else LOWER
    track.ratio_of = (measured, reference)  # asv copies it into benchmarks.json
    what = (f"{reference} / {measured} time (speed fraction, paired, median of {REPS}; "
            "< 1: slower than the reference)" if speed else
            f"{measured} / {reference} time (paired, median of {REPS}; > 1: slower)")
    track.__doc__ = f"{what}. {doc}"
    return track
