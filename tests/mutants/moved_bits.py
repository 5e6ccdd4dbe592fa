"""Mutation operator ``output`` for data movement, ``rng`` and ``reduce_precision`` ties:
per-device output transforms after execute, each wrong the way a backend's copy kernel,
random number generator or rounding goes wrong.

- one bit of one element flipped, on the last device only;
- the last two rows swapped where the row count is not a multiple of 8 (a tile remainder);
- NaN payloads canonicalized (every NaN becomes the format's quiet NaN of its sign);
- ``rng`` on the last device returns zeros (XLA:CPU's replicated-program defect);
- ``reduce_precision`` rounds exact ties away from zero (only ties differ from the
  correct ties-to-even result).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np

from runtime._client import Client
from tests.mutants.base import (Site, TransformedExecutable, is_float, program_name,
                                program_text, transforming)
from tests.mutants.catalog import add

AREA = "test_data_movement"


def _moved(site: Site) -> bool:
    """A data-movement program: the data_movement area's, an area's operand moved on the
    device (``conformance.programs.moves``: ``moves``) or the sharding area's SPMD moves
    (``one_mib_transpose``, ...)."""
    return (site.program.startswith(("data_movement_", "one_mib_")) or site.program == "moves")


def flip_bit_last_device(site: Site, inputs, outputs):
    """Data-movement results on the last device have the lowest bit of their last element
    flipped."""
    if not _moved(site) or site.index != site.count - 1:
        return outputs
    out = []
    for o in outputs:
        o = np.array(o, copy=True)
        if o.size:
            raw = o.reshape(-1)[-1:].view(np.uint8)
            raw[0] ^= np.uint8(1)
        out.append(o)
    return out


def swap_remainder_rows(site: Site, inputs, outputs):
    """Data-movement results with a row count above 8 and not a multiple of 8 have their
    last two rows swapped."""
    if not _moved(site):
        return outputs
    out = []
    for o in outputs:
        if o.ndim >= 2 and o.shape[0] > 8 and o.shape[0] % 8:
            o = np.array(o, copy=True)
            o[[-1, -2]] = o[[-2, -1]]
        out.append(o)
    return out


def canonical_nans(site: Site, inputs, outputs):
    """Float NaNs in data-movement results become their format's canonical quiet NaN
    (sign kept): the payload is lost."""
    if not _moved(site):
        return outputs
    out = []
    for o in outputs:
        if is_float(o) and o.size:
            wide = o.astype(np.float32)
            quiet, neg = np.array(np.nan, o.dtype), np.array(-np.nan, o.dtype)
            o = np.where(np.isnan(wide), np.where(np.signbit(wide), neg, quiet), o)
        out.append(o)
    return out


def rng_zeros_last_device(site: Site, inputs, outputs):
    """Programs with no jax name (StableHLO text, e.g. ``rng``) return zeros on the last
    device, as XLA:CPU's ``rng`` does on every device but the first."""
    if site.program or site.index != site.count - 1:
        return outputs
    return [np.zeros_like(o) for o in outputs]


_FORMAT = re.compile(r"stablehlo\.reduce_precision %\w+, format = e\d+m(\d+)")


def ties_away(mantissa: int):
    """Transform: float results of a one-input program whose input elements are exact
    ties of ``mantissa`` bits get the tie's away-from-zero neighbour."""
    def transform(site: Site, inputs, outputs):
        if len(inputs) != 1 or not is_float(inputs[0]):
            return outputs
        x = inputs[0]
        nmant = int(ml_dtypes.finfo(x.dtype).nmant)
        if nmant <= mantissa:
            return outputs
        uint = np.dtype(f"u{x.dtype.itemsize}")
        u = np.ascontiguousarray(x).view(uint).astype(np.uint64)
        one, shift = np.uint64(1), np.uint64(nmant - mantissa)
        dropped = (one << shift) - one
        tie = ((u & dropped) == (one << (shift - one))) & np.isfinite(x.astype(np.float64))
        away = ((u & ~dropped) + (one << shift)).astype(uint).view(x.dtype)
        return [np.where(tie, away, o) if o.shape == x.shape and o.dtype == x.dtype else o
                for o in outputs]
    return transform


class TiesAwayReducePrecision(Client):
    """reduce_precision rounds exact ties away from zero (ties to even elsewhere)."""

    def compile_and_load(self, computation, executable_devices, compile_options=None,
                         *args, **kwargs):
        exe = super().compile_and_load(computation, executable_devices, compile_options,
                                       *args, **kwargs)
        m = _FORMAT.search(program_text(computation))
        if m is None:
            return exe
        return TransformedExecutable(exe, self, program_name(computation),
                                     ties_away(int(m.group(1))))


def _register():
    add("out-moved-bit-flip-last-device", "output",
        transforming(flip_bit_last_device, flip_bit_last_device.__doc__),
        f"{AREA}: (test_transpose or test_concatenate) and (uint8 or float32)")
    add("out-moved-swap-remainder-rows", "output",
        transforming(swap_remainder_rows, swap_remainder_rows.__doc__),
        f"{AREA}: (test_transpose or test_pad) and (int32 or complex64)")
    add("out-moved-canonical-nans", "output",
        transforming(canonical_nans, canonical_nans.__doc__),
        f"{AREA}: (test_reverse or test_slice) and (float32 or float64)")
    add("out-rng-zeros-last-device", "output",
        transforming(rng_zeros_last_device, rng_zeros_last_device.__doc__),
        "test_stablehlo_ops: test_rng_in_replicated_program", devices=1)
    add("out-reduce-precision-ties-away", "output", TiesAwayReducePrecision,
        "test_stablehlo_ops: test_op and reduce_precision and (e8m7-float32 or "
        "e5m10-float32 or e4m3-bfloat16)")


_register()
