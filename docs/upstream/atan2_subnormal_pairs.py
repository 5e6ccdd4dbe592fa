"""atan2(y, x) with both y and x subnormal is wrong on XLA's CPU backend.

Standalone: plain jax and numpy. Exits 3 while the defect is present, 0 when fixed.
Expected: atan2 of two subnormals is the angle of (x, y) (+-pi/4, +-3pi/4 for equal
magnitudes), as numpy computes it. Observed on jaxlib 0.10.2 (CPU): NaN for float32
and bfloat16, +-pi/2 for float64. atan2 at (+-inf, +-inf) is correct.
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
for dtype in (np.float32, ml_dtypes.bfloat16, np.float64):
    s = ml_dtypes.finfo(dtype).smallest_subnormal
    y = np.array([s, s, -s, -s], dtype)
    x = np.array([s, -s, s, -s], dtype)
    expected = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    observed = np.asarray(jax.jit(jnp.arctan2)(y, x)).astype(np.float64)
    # Tolerance: a few ULPs of the dtype (bfloat16 has 8 significant bits).
    tol = 4 * float(ml_dtypes.finfo(dtype).eps)
    ok = np.allclose(observed, expected, rtol=tol, atol=0)
    wrong += not ok
    print(f"{np.dtype(dtype).name}: atan2(y, x) for y = {y.tolist()}, x = {x.tolist()}")
    print(f"  expected {expected.tolist()}")
    print(f"  observed {observed.tolist()}  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
