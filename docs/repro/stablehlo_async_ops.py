"""jaxlib 0.8's StableHLO parser rejects the spec's async_start/async_done ops.

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_op[async_start-all_reduce-one-replica-*]) on
jaxlib 0.8.0, CPU. Standalone: plain jax/jaxlib. Exit status: 0 the defect is absent
(the module parses), 3 present.

    python docs/repro/stablehlo_async_ops.py

Expected: a module with "stablehlo.async_start"/"stablehlo.async_done" and a
!stablehlo.future type (StableHLO spec) parses. Observed on jaxlib 0.8.0:
"error: unknown stablehlo type: future" from jax's own MLIR context.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jaxlib  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402

T, S = "tensor<4xf32>", "tensor<f32>"
TEXT = f"""module @m {{
  func.func public @main(%arg0: {T}) -> {T} {{
    %0 = "stablehlo.async_start"(%arg0) ({{
    ^bb0(%a: {T}):
      %r = "stablehlo.all_reduce"(%a) ({{
      ^bb0(%p: {S}, %q: {S}):
        %sum = stablehlo.add %p, %q : {S}
        "stablehlo.return"(%sum) : ({S}) -> ()
      }}) {{replica_groups = dense<[[0]]> : tensor<1x1xi64>}} : ({T}) -> {T}
      "stablehlo.return"(%r) : ({T}) -> ()
    }}) : ({T}) -> !stablehlo.future<{T}>
    %1 = "stablehlo.async_done"(%0) : (!stablehlo.future<{T}>) -> {T}
    return %1 : {T}
  }}
}}
"""

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
try:
    with mlir.make_ir_context():
        ir.Module.parse(TEXT)
except Exception as err:  # noqa: BLE001 - the defect is the parse error
    text = str(err)
    print(f"parse failed: {type(err).__name__}: {text.splitlines()[0] if text else ''}")
    sys.exit(3 if "future" in text or "async" in text else 1)
print("the module parses")
sys.exit(0)
