"""jnp.argmax/argmin of an array with several NaNs may return a later NaN's index on GPU.

Standalone: plain jax and numpy. Exits 3 while the defect is present, 0 when fixed,
4 without a GPU (XLA's CPU client reduces in order, which hides the defect).
Expected (numpy and jax's documented behaviour): the index of the FIRST NaN.
Cause: the reducer jax lowers argmax/argmin to picks the left operand whenever it is
NaN, without comparing indices when both operands are NaN, so it is not commutative
on NaN pairs. A backend that reduces in a tree (XLA GPU: blocks of 32 x 2^k
elements) returns whichever NaN ends up on the left. XLA's CPU client reduces in
order and hides it.
"""
import sys

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, {jax.devices()[0].device_kind}")
if jax.default_backend() != "gpu":
    print("no GPU: the CPU client reduces in order and cannot show the defect")
    sys.exit(4)
wrong = 0
for n, nans in ((16, (1, 2)), (1025, (32, 64, 700)), (4096, (5, 1000, 4000))):
    x = np.zeros(n, np.float32)
    x[list(nans)] = np.nan
    for name in ("argmax", "argmin"):
        expected = int(getattr(np, name)(x))
        observed = int(jax.jit(getattr(jnp, name))(x))
        wrong += observed != expected
        print(f"{name} of float32[{n}] with NaN at {list(nans)}: expected {expected}, "
              f"observed {observed}  {'OK' if observed == expected else 'WRONG'}")
sys.exit(3 if wrong else 0)
