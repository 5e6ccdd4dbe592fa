"""broadcast_in_dim of a bfloat16 array flushes its subnormals to zero on XLA:CPU.

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_op[dynamic_broadcast_in_dim-lead-2-bfloat16]).
Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/bf16_broadcast_flushes_subnormals.py

broadcast_in_dim (and dynamic_broadcast_in_dim) only copies elements, so every bit
pattern must come out unchanged. `jnp.broadcast_to` of a bfloat16[n] array of the
smallest subnormal (bits 0x0001) to (2, n) gives zeros for n >= 5 on jaxlib 0.10.2
and 0.12.0.1 (CPU); smaller n, and float32, keep the subnormals.
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
for dtype, bits in ((ml_dtypes.bfloat16, np.uint16), (np.float32, np.uint32)):
    for n in (4, 7, 64):
        x = np.ones(n, bits).view(dtype)  # the smallest positive subnormal
        out = np.asarray(jax.jit(lambda a, n=n: jnp.broadcast_to(a, (2, n)))(x)).view(bits)
        ok = bool((out == 1).all())
        wrong += not ok
        print(f"broadcast_to({np.dtype(dtype).name}[{n}] of bits 0x1, (2, {n}))")
        print(f"  expected: every element bits 0x1\n  observed: bits {sorted(set(out.ravel().tolist()))}"
              f"  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
