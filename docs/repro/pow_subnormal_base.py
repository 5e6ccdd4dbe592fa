"""pow(x, 0.5) of a subnormal x returns one constant for every x on XLA:CPU.

Found by the PJRT conformance suite
(conformance/test_kernels_elementwise.py::test_float_special_values[power-float32])
on jaxlib 0.10.2, CPU. Standalone: plain jax and numpy.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/pow_subnormal_base.py

Expected: pow(s, y) for y = 0.5 (an array argument) = sqrt(s) (or 0 where the backend flushes subnormals).
Observed on jaxlib 0.10.2: pow(s, 0.5) = pow(4s, 0.5) = 2.647e-23 (float32),
1.5717e-162 (float64): neither sqrt(s) nor 0.
"""
import sys

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
wrong = 0
for dtype in (np.float32, np.float64, ml_dtypes.bfloat16):
    s = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    x = np.array([s, 4 * s], dtype)
    exact = np.sqrt(x.astype(np.float64))
    half = np.full(x.shape, 0.5, dtype)  # an argument: a constant exponent becomes sqrt
    out = np.asarray(jax.jit(jnp.power)(x, half)).astype(np.float64)
    ok = bool(all(o == 0 or abs(o - e) <= 0.01 * e for o, e in zip(out, exact)))
    wrong += not ok
    print(f"{np.dtype(dtype).name}: pow({x.astype(np.float64).tolist()}, 0.5)")
    print(f"  expected: {exact.tolist()} (or 0: flushed)\n  observed: {out.tolist()}"
          f"  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
