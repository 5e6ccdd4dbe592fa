"""The oracle of model workloads: a float64 evaluation, and XLA:CPU's float32 error as scale.

A model (forward and backward passes, optimizer updates, scans) has no useful
elementwise a-priori bound: its worst-case forward error bound grows with every layer
and is orders of magnitude above what any backend returns. The oracle instead
measures, on the same inputs:

- ``ref``: the model lowered at float64 and run on a reference client (jaxlib's CPU
  client, made through ``runtime``, one device): the exact result to within
  ``2**-53``-relative roundings, negligible at float32's scale;
- ``cpu``: the model lowered at float32 and run on the same reference client:
  XLA:CPU's own float32 error ``e_cpu = max|cpu - ref|`` per output tensor.

A device's float32 result ``out`` passes when, per output tensor,

    max|out - ref|  <=  K * e_cpu  +  F,    K = ceil(sqrt(n)),   F = (n + 1) * eps * max|ref|

with ``n`` the model's longest reduction (:attr:`conformance.programs.models.Model.reduction`)
and ``eps`` float32's (the tolerance table's ``derived_rtol`` with ``n`` roundings,
scaled by the output). Derivation (docs/programs.md): both backends run the same
float32 program, so to first order each output's error is a sum of the same rounding
errors times the same condition factors; only the order of the sums (and the
transcendental implementations, within 4 ULP of the tolerance table) differs. A sum
of ``n`` roundings in an arbitrary order has a worst-case error ``n u M`` and a
typical (random-walk) error ``sqrt(n) u M``; XLA:CPU's measured error is such a
typical one, so a healthy backend's is at most ``sqrt(n)`` times larger.
``F`` covers an output whose CPU error happens to be near zero (a tensor of few
elements): ``n`` roundings of ``eps`` relative to the output's scale. A backend that
accumulates in bfloat16, drops a term, truncates, or skips a cross-device sum is
off by far more.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from conformance.helpers import assertions
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.programs import float_format


@functools.lru_cache(maxsize=1)
def reference_cache() -> compiled_programs.ProgramCache:
    """A program cache over a fresh one-device jaxlib CPU client (the reference)."""
    from runtime import xla_client
    return compiled_programs.ProgramCache(xla_client.make_cpu_client(num_devices=1))


def reference_outputs(name: str, fn: Any, args: list[np.ndarray]
                      ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(float64 results, XLA:CPU results) of ``fn`` on ``args`` (float32, or a
    mixed-precision model's bfloat16)."""
    cache = reference_cache()
    device = cache.client.local_devices()[0]
    wide = [a.astype(np.float64) for a in args]
    ref, _ = cache.run(f"{name}_f64", fn, wide, device)
    cpu, _ = cache.run(f"{name}_f32", fn, args, device)
    return ref, cpu


def allowed_error(ref: np.ndarray, cpu: np.ndarray, reduction: int, low: str | None = None
                  ) -> tuple[float, float]:
    """(allowed ``max|out - ref|``, XLA:CPU's ``max|cpu - ref|``) of one output; a
    mixed-precision model's floor adds one rounding to ``low`` (``eps(low)``: its
    bfloat16 output's own) to the ``reduction`` float32 roundings of its sums."""
    ref64 = np.asarray(ref, np.float64)
    e_cpu = float(np.max(np.abs(np.asarray(cpu, np.float64) - ref64), initial=0.0))
    rtol = tolerances.derived_rtol(reduction, "float32") + (
        float_format.of(low).eps if low else 0.0)
    floor = rtol * float(np.max(np.abs(ref64), initial=0.0))
    return math.ceil(math.sqrt(reduction)) * e_cpu + floor, e_cpu


def check(outs: list[np.ndarray], ref: list[np.ndarray], cpu: list[np.ndarray],
          names: tuple[str, ...], reduction: int, where: str, low: str | None = None) -> None:
    """Every output within :func:`allowed_error` of the float64 result (``low``: a
    mixed-precision model's low dtype, see there). AssertionError names the output, the
    device's error, XLA:CPU's and the bound."""
    __tracebackhide__ = True
    assert len(outs) == len(names), (
        f"the program returned {len(outs)} outputs, but the model has {len(names)} "
        f"({', '.join(names)}) [{where}]")
    for name, out, r, c in zip(names, outs, ref, cpu):
        assertions.assert_shape(np.shape(out), np.shape(r), call=f"{where} ({name})")
        allowed, e_cpu = allowed_error(r, c, reduction, low)
        err = np.abs(np.asarray(out, np.float64) - np.asarray(r, np.float64))
        worst = float(np.max(err, initial=0.0)) if np.all(np.isfinite(err)) else math.inf
        if worst <= allowed:
            continue
        at = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(err), err, np.inf))),
                              err.shape) if err.size else ()
        floor = f"({reduction}+1)*eps*max|ref|" + (f" + eps({low})*max|ref|" if low else "")
        raise AssertionError(
            f"{name}: max|out - float64| = {worst:.3g}, but should be <= "
            f"ceil(sqrt({reduction}))*{e_cpu:.3g} (XLA:CPU's error) + "
            f"{floor} = {allowed:.3g} [{where}]\n"
            f"  at {tuple(int(i) for i in at)}: out={np.asarray(out)[at]!r}, "
            f"float64={np.asarray(r)[at]!r}, XLA:CPU={np.asarray(c)[at]!r}")
