"""Mutation operator ``output``: a per-device transform of outputs after execute.

Wrong on the last device only, for one dtype only, only when an input is large, only
at a tile remainder, only in a vector loop's tail, only on exact rounding ties, or
for special values (subnormals flushed, NaN dropped, infinities clamped, -0 lost).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from tests.mutants.base import Site, is_float, transforming, wrong_at, wrong_value
from tests.mutants.catalog import add


def _each(pick, site: Site, inputs, outputs):
    """Outputs with the elements ``pick(site, inputs, output)`` (a flat bool mask, or None
    for none) made wrong."""
    out = []
    for o in outputs:
        mask = pick(site, inputs, o)
        out.append(o if mask is None else wrong_at(o, np.broadcast_to(mask, (o.size,))))
    return out


def _all(o: np.ndarray) -> np.ndarray:
    return np.ones(o.size, dtype=bool)


def last_device(site, inputs, o):
    return _all(o) if site.count > 1 and site.index == site.count - 1 else None


def one_dtype(name, site, inputs, o):
    return _all(o) if o.dtype == np.dtype(name) else None


def complex_only(site, inputs, o):
    return _all(o) if o.dtype.kind == "c" else None


def inputs_above(n, site, inputs, o):
    return _all(o) if max((a.size for a in inputs), default=0) >= n else None


def axis_above(n, site, inputs, o):
    return _all(o) if any(max(a.shape, default=0) > n for a in inputs) else None


def tile_remainder(tile, site, inputs, o):
    """Only the element at flat index i with i % tile == tile - 1."""
    return np.arange(o.size) % tile == tile - 1 if o.size >= tile else None


def row_tail(width, site, inputs, o):
    """The last element of each row whose length is over ``width`` and not a multiple."""
    n = o.shape[-1] if o.ndim else 0
    if n <= width or n % width == 0:
        return None
    return (np.arange(o.size) % n) == n - 1


def _floats(fn):
    """``fn`` on float outputs (other outputs pass through unchanged)."""
    def transform(site, inputs, outputs):
        return [fn(o) if is_float(o) and o.size else o for o in outputs]
    transform.__doc__ = fn.__doc__
    return transform


def flush_subnormals(o):
    """Subnormal float results are flushed to (signed) zero."""
    tiny = ml_dtypes.finfo(o.dtype).smallest_normal
    wide = o.astype(np.float64)
    return np.where(np.abs(wide) < float(tiny), np.copysign(0.0, wide), wide).astype(o.dtype)


def nan_to_zero(o):
    """NaN results become 0."""
    return np.where(np.isnan(o.astype(np.float64)), 0, o).astype(o.dtype)


def clamp_infinities(o):
    """Infinite results become the largest finite value of their sign."""
    wide = o.astype(np.float64)
    top = float(ml_dtypes.finfo(o.dtype).max)
    return np.where(np.isinf(wide), np.copysign(top, wide), wide).astype(o.dtype)


def positive_zero(o):
    """-0.0 results become +0.0."""
    return np.where(o.astype(np.float64) == 0, np.zeros((), o.dtype), o).astype(o.dtype)


def ties_away(site: Site, inputs, outputs):
    """Float-to-narrower-float converts round half away from zero (wrong only on ties)."""
    if not site.program.startswith("convert_") or len(inputs) != 1:
        return outputs
    x = inputs[0]
    out = []
    for o in outputs:
        if not (is_float(x) and is_float(o) and o.shape == x.shape
                and o.dtype.itemsize < x.dtype.itemsize):
            out.append(o)
            continue
        wide, got = x.astype(np.float64), o.astype(np.float64)
        # One step away from zero by the bit pattern (sign-magnitude): np.nextafter on
        # ml_dtypes' narrow floats steps in float32 and rounds back to ``o``.
        bits = np.ascontiguousarray(o).view(f"u{o.dtype.itemsize}")
        away = (bits + np.ones_like(bits)).view(o.dtype)
        tie = np.isfinite(got) & (np.abs(wide - got) == np.abs(away.astype(np.float64) - wide)) \
            & (np.abs(wide) > np.abs(got))
        out.append(np.where(tie, away, o))
    return out


def bf16_accumulation(site: Site, inputs, outputs):
    """float32 sums are rounded to bfloat16 precision (a low-precision accumulator)."""
    if not site.program.startswith(("reduce_sum", "cumsum", "dot_", "model_", "float_",
                                    "pinned_elementwise_into_reduce")):
        return outputs
    return [o.astype(ml_dtypes.bfloat16).astype(o.dtype) if o.dtype == np.float32 else o
            for o in outputs]


def fft_large_prime(site: Site, inputs, outputs):
    """FFTs whose length has a prime factor over 7 are wrong."""
    if not site.program.startswith(("fft", "ifft", "rfft", "irfft")) or not inputs:
        return outputs
    n = inputs[0].shape[-1] if inputs[0].ndim else 1
    for p in (2, 3, 5, 7):
        while n > 1 and n % p == 0:
            n //= p
    return [wrong_value(o) for o in outputs] if n > 1 else outputs


def _masked(pick, doc):
    return transforming(functools.partial(_each, pick), doc)


def _register():
    ew, red = "test_kernels_elementwise", "test_kernels_reduce"
    add("out-last-device", "output", _masked(last_device, "Outputs of the last device are wrong."),
        f"{red}: test_reduce and sum-float32; test_execute: test_elementwise and add-int32; "
        "test_programs: test_integer_programs or test_data_movement_programs or "
        "test_float_programs or test_pinned_compositions; test_programs_spmd: "
        "test_spmd_composition or test_spmd_generated_programs; test_models: test_model or "
        "data_parallel")
    for name, area in [("float16", f"{red}: test_reduce and sum-float16"),
                       ("bfloat16", f"{red}: test_reduce and sum-bfloat16"),
                       ("float64", "test_kernels_dot: float64"),
                       ("int8", "test_kernels_indexing: int8 and dynamic_slice"),
                       ("uint16", f"{red}: test_reduce and sum-uint16"),
                       ("bool", f"{red}: test_reduce_bool")]:
        add(f"out-only-{name}", "output",
            _masked(functools.partial(one_dtype, name), f"Only {name} outputs are wrong."), area)
    add("out-only-complex", "output", _masked(complex_only, "Only complex outputs are wrong."),
        "test_kernels_fft: fft-complex64")
    partial = functools.partial
    masks = [  # (name, which elements are wrong, what is wrong, targets)
        ("out-inputs-over-4096", partial(inputs_above, 4096),
         "Wrong only when an input has 4096 elements or more.",
         f"{red}: test_reduce and sum-float32; test_kernels_indexing: gather or scatter"),
        ("out-inputs-over-65536", partial(inputs_above, 65536),
         "Wrong only when an input has 65536 elements or more.",
         f"{red}: test_every_reduction_at_block_boundaries or "
         "(test_reduce and (sum-float32 or max-float32))"),
        ("out-axis-over-128", partial(axis_above, 128),
         "Wrong only when an input has an axis longer than 128.",
         "test_kernels_dot: float32; test_kernels_fft: fft-complex64"),
        ("out-tile-remainder-128", partial(tile_remainder, 128),
         "Only elements at flat index i % 128 == 127 are wrong.",
         f"{ew}: test_float_accuracy_in_ulp and float32; test_kernels_convert: float32-to-bf16"),
        ("out-row-tail-8", partial(row_tail, 8),
         "The last element of rows longer than 8 and not a multiple of 8 is wrong.",
         f"{ew}: test_float_accuracy_in_ulp and float32; test_kernels_dot: float32")]
    for name, pick, doc, targets in masks:
        add(name, "output", _masked(pick, doc), targets)
    for name, fn, area in [
            ("out-flush-subnormals", flush_subnormals, f"{ew}: test_denormals_as_declared and float16; "
             "test_data_movement: test_transpose and float32"),
            ("out-nan-to-zero", nan_to_zero, f"{red}: propagate_nan"),
            ("out-clamp-infinities", clamp_infinities,
             f"{ew}: test_float_special_values and exp-float32"),
            ("out-positive-zero", positive_zero,
             f"{ew}: test_float_special_values and negate-float32")]:
        add(name, "output", transforming(_floats(fn), fn.__doc__), area)
    add("out-convert-ties-away", "output", transforming(ties_away, ties_away.__doc__),
        "test_kernels_convert: test_convert_rounds_ties_to_nearest_even or (test_convert and "
        "(float32-to-bf16 or float32-to-f16 or float64-to-core))")
    add("out-bf16-accumulation", "output",
        transforming(bf16_accumulation, bf16_accumulation.__doc__),
        f"{red}: (test_reduce and sum-float32) or (test_cumsum and float32); "
        "test_programs: test_float_programs or (test_pinned_compositions and "
        "elementwise_into_reduce); test_models: test_model and transformer_block")
    add("out-fft-large-prime", "output", transforming(fft_large_prime, fft_large_prime.__doc__),
        "test_kernels_fft: fft-complex64")


_register()
