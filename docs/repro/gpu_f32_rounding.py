"""float32 divide / sqrt on XLA GPU are not correctly rounded.

Found by the PJRT conformance suite (conformance/test_execute.py::
test_elementwise[divide-float32], [sqrt-float32]) on the CUDA plugin with jaxlib 0.11.2
(openxla/xla#37181: XLA GPU emits div.full.f32). Standalone: plain jax and numpy.
Exit status: 0 the defect is absent, 3 present, 4 no GPU here.

    python docs/repro/gpu_f32_rounding.py divide|sqrt

Expected (IEEE 754, as on XLA:CPU): 3/7 = 0.42857143, sqrt(17.695) = 4.206543 in float32.
Observed on an H100: 0.42857146 and 4.2065434 (1 ULP off).
"""
import sys

import jax
import jaxlib
import numpy as np

if len(sys.argv) != 2 or sys.argv[1] not in ("divide", "sqrt"):
    sys.exit("usage: gpu_f32_rounding.py divide|sqrt")
op = sys.argv[1]
print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, backend {jax.default_backend()}")
if jax.default_backend() != "gpu":
    print("no GPU: cannot test here")
    sys.exit(4)
rng = np.random.default_rng(0)
x = rng.uniform(1, 100, 4096).astype(np.float32)
y = rng.uniform(1, 100, 4096).astype(np.float32)
if op == "divide":
    expected, out = x / y, np.asarray(jax.jit(lambda a, b: a / b)(x, y))
else:
    expected, out = np.sqrt(x), np.asarray(jax.jit(jax.numpy.sqrt)(x))
bad = int((out != expected).sum())
print(f"float32 {op} of 4096 values")
print(f"  expected: every result correctly rounded (as numpy)\n  observed: {bad} differ")
sys.exit(3 if bad else 0)
