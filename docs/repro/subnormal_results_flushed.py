"""XLA:CPU flushes subnormal inputs and results to zero (FTZ/DAZ).

Documented platform behaviour, not a defect (jax-ml/jax#37762, closed: XLA CPU's DAZ
mode is intended): the suite's float-controls declaration ``xla-cpu``
(conformance/helpers/float_control_modes.py) declares it, and
conformance/test_kernels_elementwise.py::test_denormals_as_declared checks it.
Standalone: plain jax and numpy. Exit status: 0 subnormals are kept, 3 flushed.

    python docs/repro/subnormal_results_flushed.py

Expected (IEEE 754): s * 1 = s and (2 * tiny) / 4 = tiny / 2, a subnormal, for
bfloat16, float32 and float64. Observed on jaxlib 0.10.2 (CPU): 0.
"""
import sys

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402, F401
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
wrong = 0
for dtype in (ml_dtypes.bfloat16, np.float32, np.float64):
    fi = ml_dtypes.finfo(dtype)
    s = np.array([fi.smallest_subnormal] * 8, dtype)
    t = np.array([fi.smallest_normal] * 8, dtype)
    one = np.ones(8, dtype)
    four = np.full(8, 4, dtype)
    mul, div = jax.jit(lambda a, b: a * b), jax.jit(lambda a, b: (a + a) / b)
    got = [float(np.asarray(mul(s, one))[0]), float(np.asarray(div(t, four))[0])]
    want = [float(s[0]), float(t[0]) / 2]
    ok = got == want
    wrong += not ok
    print(f"{np.dtype(dtype).name}: [s * 1, (t + t) / 4] for s the smallest subnormal, "
          f"t the smallest normal")
    print(f"  expected: {want}\n  observed: {got}  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
