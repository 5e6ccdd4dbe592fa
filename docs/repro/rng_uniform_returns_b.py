"""stablehlo.rng with UNIFORM distribution returns b itself: [a, b) is violated.

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_rng_uniform_never_returns_b; as an unattributed
`flaky` result of test_rng[UNIFORM-float32] before that). Standalone: plain jax and
numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/rng_uniform_returns_b.py

`lax.rng_uniform(a, b, shape)` lowers to `stablehlo.rng ... distribution = UNIFORM`,
whose values the StableHLO spec draws "following the uniform distribution over the
interval [a, b)". With a = 2**24 - 2 and b = 2**24 in float32 (the only float32 values
in [a, b) are 2**24 - 2 and 2**24 - 1), about a quarter of the 4096 values equal b on
XLA:CPU: `a + (b - a) * u` is rounded to b and not clamped below it. float64
(a = 2**53 - 2, b = 2**53), float16 and bfloat16 behave the same.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
present = False
for dtype, p in ((np.float32, 24), (np.float64, 53)):
    a, b = dtype(2.0**p - 2), dtype(2.0**p)
    v = np.asarray(jax.jit(lambda a, b: lax.rng_uniform(a, b, (64, 64)))(a, b))
    at_b = int((v == b).sum())
    outside = int(((v < a) | (v >= b)).sum())
    print(f"{np.dtype(dtype).name}: rng_uniform({a!r}, {b!r}, (64, 64)): {outside} of {v.size} "
          f"values outside [a, b), {at_b} equal b {'WRONG' if outside else 'OK'}")
    present |= outside > 0
sys.exit(3 if present else 0)
