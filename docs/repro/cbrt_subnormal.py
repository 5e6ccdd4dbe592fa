"""cbrt of a float32/bfloat16 subnormal returns one negative constant on XLA:CPU.

Found by the PJRT conformance suite
(conformance/test_kernels_elementwise.py::test_float_special_values[cbrt-float32]) on
jaxlib 0.10.2, CPU (jax-ml/jax#37761). Standalone: plain jax and numpy.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/cbrt_subnormal.py

Expected: cbrt(s) is the real cube root of s (or 0 where the backend flushes
subnormals): its sign is the sign of s. Observed on jaxlib 0.10.2: cbrt(s), cbrt(-s),
cbrt(4s) are all -5.595e-16 for float32.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
wrong = 0
for dtype in (np.float32, ml_dtypes.bfloat16):
    s = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    x = np.array([s, -s, 4 * s], dtype)
    exact = np.cbrt(x.astype(np.float64))
    out = np.asarray(jax.jit(jnp.cbrt)(x)).astype(np.float64)
    # a flushed result (0) is accepted; otherwise within 1% of the exact cube root
    ok = bool(all(o == 0 or abs(o - e) <= 0.01 * abs(e) for o, e in zip(out, exact)))
    wrong += not ok
    print(f"{np.dtype(dtype).name}: cbrt({x.astype(np.float64).tolist()})")
    print(f"  expected: {exact.tolist()} (or 0: flushed)\n  observed: {out.tolist()}"
          f"  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
