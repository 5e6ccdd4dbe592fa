"""cbrt of normal float32/float64 values is off by many ULP on XLA:CPU of jaxlib 0.8.

Found by the PJRT conformance suite
(conformance/test_kernels_elementwise.py::test_float_accuracy_in_ulp[cbrt-float32],
[cbrt-float64] and test_float_special_values[cbrt-float64]) on jaxlib 0.8.0, CPU.
Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/cbrt_accuracy.py

Expected: cbrt(x) within a few ULP of the cube root (NumPy's, float64 and float32).
Observed on jaxlib 0.8.0: cbrt(1.5548939e-37) in float32 and cbrt(1.8e308),
cbrt(2.2e-308), cbrt(1.38e-277) in float64 are off by 8 ULP (float32) and 72-75 ULP (float64);
jaxlib 0.10.0 and later are within the bound.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402

BOUND = 4  # ULP

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
wrong = 0
cases = {np.float32: [1.5548939e-37, 8.0, 0.5, 3.0],
         np.float64: [1.7976931348623157e308, 2.2250738585072014e-308, 1.38081452e-277, 8.0]}
for dtype, values in cases.items():
    x = np.array(values, dtype)
    exact = np.cbrt(x.astype(np.float64)).astype(dtype)
    out = np.asarray(jax.jit(jnp.cbrt)(x))
    ulp = np.abs(out.astype(np.float64) - exact.astype(np.float64)) / np.spacing(
        np.abs(exact)).astype(np.float64)
    ok = bool(np.all(ulp <= BOUND))
    wrong += not ok
    print(f"{np.dtype(dtype).name}: cbrt({x.tolist()})")
    print(f"  expected: {exact.tolist()}\n  observed: {out.tolist()}\n"
          f"  error (ULP): {ulp.tolist()}  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
