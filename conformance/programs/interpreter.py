"""The second oracle: jaxlib's StableHLO reference interpreter.

``jaxlib.mlir.dialects.stablehlo.eval_module`` (jaxlib 0.10.2: StableHLO 1.17.0)
evaluates the exact module text the platform compiled, on the same arguments. Its
Python bindings convert arrays of numpy's own dtypes (bool, integers of 8-64 bits,
float16/32/64) in and out; for other dtypes (bfloat16, fp8, int4, complex) and for
ops the interpreter lacks, :func:`evaluate` returns None (no second opinion) and the
check stands on the NumPy/SciPy reference alone.

:func:`check_oracles` compares the interpreter with the NumPy reference, and the
platform's results with them. When the two references disagree the platform is still
judged: a result that matches neither is the platform's wrong result (an
``AssertionError`` that reports the disagreement too); a result that matches one of
them leaves a suite defect, :class:`OracleDisagreement` (not an ``AssertionError``: the
status is ``fail_error``, with attribution ``suite``), never resolved in favour of
either.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: dtypes whose arrays the MLIR bindings convert both ways.
NATIVE = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float16", "float32", "float64"})
#: Ops jaxlib 0.10.2's interpreter does not implement: it aborts the process (LLVM
#: ERROR "Operation ... is unsupported"), so modules with them are never evaluated.
UNSUPPORTED_OPS = frozenset({
    "cholesky", "triangular_solve", "batch_norm_grad", "batch_norm_inference",
    "batch_norm_training", "rng", "rng_bit_generator", "fft", "custom_call", "infeed",
    "outfeed", "send", "recv", "get_dimension_size", "dynamic_broadcast_in_dim",
    "dynamic_conv", "dynamic_gather", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
    "async_start", "async_done", "composite", "collective_broadcast", "uniform_quantize",
    "uniform_dequantize"})
#: Largest argument (elements, all arguments) evaluated: the interpreter is slow.
MAX_ELEMENTS = 4096


#: The start of every :class:`OracleDisagreement` message: a ``fail_error`` whose message
#: holds it is attributed ``suite`` (``conformance.session.evidence``).
SUITE_MARKER = "OracleDisagreement (a defect of the suite):"


class OracleDisagreement(Exception):
    """The two references (NumPy/SciPy and the StableHLO interpreter) disagree on one
    module and input: a defect of the suite. ``attribution`` is ``"suite"``; the message
    starts with :data:`SUITE_MARKER`, ``detail`` is the rest."""

    attribution = "suite"

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(f"{SUITE_MARKER} {detail}")


@functools.lru_cache(maxsize=1)
def _context() -> Any:
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def evaluate(module_text: str, args: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The interpreter's results of ``module_text`` on ``args`` (host arrays), or None
    when an argument or result dtype is not in :data:`NATIVE`, the arguments exceed
    :data:`MAX_ELEMENTS`, or the interpreter does not implement an op of the module
    (:data:`UNSUPPORTED_OPS`, CHLO). Other interpreter errors raise
    :class:`OracleDisagreement` (the interpreter rejects a module the platform ran)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from conformance.programs import mlir_ops

    if any(np.dtype(a.dtype).name not in NATIVE for a in args) or sum(
            int(np.size(a)) for a in args) > MAX_ELEMENTS:
        return None
    if any(op in UNSUPPORTED_OPS or op.startswith("chlo.")
           for op, _ in mlir_ops.ops_of(module_text)):
        return None
    with _context():
        module = ir.Module.parse(module_text)
        attrs = [ir.DenseElementsAttr.get(np.ascontiguousarray(a).reshape(-1),
                                          shape=list(a.shape),
                                          signless=a.dtype.kind != "u")
                 for a in args]
        try:
            out = stablehlo.eval_module(module, attrs)
        except Exception as err:  # the bindings raise their own error types
            raise OracleDisagreement(f"the StableHLO interpreter rejected a module the "
                                     f"platform ran: {str(err).splitlines()[0]}") from err
        results = []
        for attr in out:
            try:
                results.append(_host_array(attr))
            except (ValueError, TypeError):  # a result dtype the bindings cannot convert
                return None
        return results


def _host_array(attr: Any) -> np.ndarray:
    """A copy of the interpreter's result ``attr`` (a ``DenseElementsAttr``) on the host.
    Booleans (``i1``) are read element by element: jaxlib 0.8.0's buffer view of a splat
    ``i1`` result (``dense<false> : tensor<3x5xi1>``) has one element's storage under the
    whole shape, so ``np.array`` read past it (the rest garbage: 7 ``fail_error`` results
    of the 0.8.0 bundle); the element accessors give the values on every jaxlib."""
    from jaxlib.mlir import ir

    if str(attr.type.element_type) == "i1":
        values = ir.DenseIntElementsAttr(attr)
        flat = np.array([bool(values[i]) for i in range(len(values))], dtype=bool)
        return flat.reshape(tuple(attr.type.shape))
    return np.array(attr)


def check_oracles(module_text: str, args: Sequence[np.ndarray],
                  expected: Sequence[np.ndarray],
                  compare: Callable[[np.ndarray, np.ndarray, str], None], *,
                  call: str, device_results: Sequence[Sequence[tuple[Any, np.ndarray]]] = ()
                  ) -> list[np.ndarray] | None:
    """Evaluate ``module_text`` on ``args`` with the interpreter, check that it agrees with
    the NumPy ``expected`` results, and check the platform's ``device_results`` (one list
    of ``(device, host array)`` per result) against the oracles, each comparison through
    ``compare(result, expected, call)`` (it raises AssertionError on a mismatch).

    When the oracles agree (or the interpreter gives no second opinion, see
    :func:`evaluate`), every device result must match ``expected``: AssertionError
    otherwise. When they disagree, the device is still judged: a device result that
    matches neither oracle is the device's failure (AssertionError, which also reports
    the disagreement); if every device result matches one of them, the disagreement is
    the suite's: :class:`OracleDisagreement`.

    Returns the interpreter's results (None: no second opinion)."""
    try:
        results = evaluate(module_text, args)
        disagreement = None if results is None else _disagreement(results, expected,
                                                                  compare, call)
    except OracleDisagreement as err:  # the interpreter rejected the module
        results, disagreement = None, f"{call}: {err.detail}"
    if disagreement is None:
        for i, (per_device, want) in enumerate(zip(device_results, expected)):
            for device, got in per_device:
                compare(got, want, f"{call}: result {i} on {device}")
        return results
    oracles = [("NumPy", list(expected))]
    if results is not None and len(results) == len(expected):
        oracles.append(("interpreter", results))
    wrong = []
    for i, per_device in enumerate(device_results[:len(expected)]):
        for device, got in per_device:
            misses = []
            for name, want in oracles:
                try:
                    compare(got, want[i], f"{call}: result {i} on {device} vs {name}")
                except AssertionError as err:
                    misses.append(str(err).splitlines()[0])
                else:
                    break
            else:
                wrong.append(f"result {i} on {device} matches neither oracle: "
                             + "; ".join(misses))
    if wrong:
        raise AssertionError(f"{call}: " + "\n".join(wrong)
                             + f"\n(and the oracles disagree, a suite defect: {disagreement})")
    raise OracleDisagreement(disagreement)


def _disagreement(results: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                  compare: Callable[[np.ndarray, np.ndarray, str], None],
                  call: str) -> str | None:
    """Why the interpreter's ``results`` disagree with NumPy's ``expected``, or None."""
    if len(results) != len(expected):
        return (f"{call}: interpreter returned {len(results)} results, the NumPy reference "
                f"{len(expected)}")
    for i, (got, want) in enumerate(zip(results, expected)):
        try:
            compare(got, want, f"{call} [interpreter vs NumPy, result {i}]")
        except AssertionError as err:
            return (f"{call}: the StableHLO interpreter and the NumPy reference disagree on "
                    f"result {i} (a suite defect): {err}")
    return None
