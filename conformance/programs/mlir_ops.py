"""The StableHLO and CHLO ops of a module, with their element types, read by MLIR.

The module text is parsed with jaxlib's MLIR Python bindings (the context of
``jax._src.interpreters.mlir``, where the StableHLO, CHLO and Shardy dialects are
registered) and walked; no regular expressions. An op's element type is that of its
first tensor operand, or of its first tensor result when it has no tensor operand
or the spec types it by its result (:data:`TYPED_BY`, from ``stablehlo_spec_ops.json``).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

#: Dialects whose ops are counted.
DIALECTS = ("stablehlo", "chlo")
#: MLIR element type spelling -> the suite's dtype name (numpy / ml_dtypes).
_NAMES = {"i1": "bool", "i2": "int2", "i4": "int4", "i8": "int8", "i16": "int16",
          "i32": "int32", "i64": "int64", "ui2": "uint2", "ui4": "uint4", "ui8": "uint8",
          "ui16": "uint16", "ui32": "uint32", "ui64": "uint64", "bf16": "bfloat16",
          "f16": "float16", "f32": "float32", "f64": "float64",
          "complex<f32>": "complex64", "complex<f64>": "complex128",
          "f4E2M1FN": "float4_e2m1fn", "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
          "f8E3M4": "float8_e3m4", "f8E4M3": "float8_e4m3", "f8E4M3FN": "float8_e4m3fn",
          "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E4M3B11FNUZ": "float8_e4m3b11fnuz",
          "f8E5M2": "float8_e5m2", "f8E5M2FNUZ": "float8_e5m2fnuz", "f8E8M0FNU": "float8_e8m0fnu"}


@functools.lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    """``stablehlo_spec_ops.json``: ``source`` (repository, commit, versions), ``groups``
    and ``ops`` (each ``name``, ``typed_by``, ``element_types``)."""
    text = resources.files("conformance.programs").joinpath("stablehlo_spec_ops.json")
    return json.loads(text.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _typed_by() -> dict[str, str]:
    return {op["name"]: op["typed_by"] for op in spec()["ops"]}


def element_type_name(mlir_type: Any) -> str:
    """The suite's dtype name of an MLIR type (its element type for a tensor; ``token``,
    ``tuple`` for those; the MLIR spelling for anything unknown). Call in an MLIR context."""
    from jaxlib.mlir import ir

    if isinstance(mlir_type, ir.ShapedType):
        element = str(ir.ShapedType(mlir_type).element_type)
        return _NAMES.get(element, element)
    text = str(mlir_type)
    if "token" in text:
        return "token"
    return "tuple" if text.startswith("tuple<") else text


def _typed_value_type(op: Any, name: str) -> Any:
    """The type of the value that types ``op`` (see the module docstring)."""
    from jaxlib.mlir import ir

    rule = _typed_by().get(name, "operand 0")
    operands = [v.type for v in op.operands]
    results = [r.type for r in op.results]
    if rule.startswith("operand"):
        index = int(rule.split()[1])
        tensors = [t for t in operands if isinstance(t, ir.ShapedType)]
        if len(tensors) > index:
            return tensors[index]
    tensors = [t for t in results if isinstance(t, ir.ShapedType)]
    return (tensors or results or operands or ["none"])[0]


@functools.lru_cache(maxsize=1)
def _context() -> Any:
    """One MLIR context per process with jax's dialects registered."""
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


@functools.lru_cache(maxsize=8192)
def ops_of(module_text: str) -> frozenset[tuple[str, str]]:
    """``{(op, dtype)}`` of every StableHLO/CHLO op in ``module_text`` (op without its
    dialect prefix for StableHLO, ``chlo.<name>`` for CHLO; dtype a suite dtype name).

    Raises ValueError naming ``module_text`` when it does not parse."""
    from jaxlib.mlir import ir

    found: set[tuple[str, str]] = set()
    with _context():
        try:
            module = ir.Module.parse(module_text)
        except Exception as err:  # MLIR raises its own error types
            raise ValueError(f"module_text: not a parsable MLIR module: "
                             f"{str(err).splitlines()[0] if str(err) else err}") from err

        def visit(node: Any) -> Any:
            op = node.operation if hasattr(node, "operation") else node
            dialect, _, short = op.name.partition(".")
            if dialect in DIALECTS:
                name = short if dialect == "stablehlo" else op.name
                found.add((name, element_type_name(_typed_value_type(op, name))))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return frozenset(found)
