"""Integer -> bfloat16 convert rounds twice (through float32) on XLA:CPU.

Found by the PJRT conformance suite
(conformance/test_kernels_convert.py::test_convert_wide_integers_rounds_once). Standalone:
plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/int_to_bf16_double_rounding.py

`lax.convert_element_type(x, bfloat16)` of an integer must round once to nearest even.
v = 2**24 + 2**16 + 1 lies just above the midpoint of the bfloat16 neighbours 2**24 and
2**24 + 2**17, so it rounds up to 2**24 + 2**17; rounded to float32 first it becomes the
midpoint 2**24 + 2**16 (the 1 is lost), which then ties to the even 2**24. int32, int64
and uint64 sources alike.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax import numpy as jnp  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
cases = [(2**24 + 2**16 + 1, 2**24 + 2**17), (-(2**24 + 2**16 + 1), -(2**24 + 2**17)),
         (2**62 + 2**54 + 1, 2**62 + 2**55), (2**24 + 2**16 - 1, 2**24)]
present = False
for dtype in (np.int32, np.int64, np.uint64):
    for v, want in cases:
        if not np.iinfo(dtype).min <= v <= np.iinfo(dtype).max:
            continue
        x = np.array([v], dtype)
        got = float(np.asarray(jax.jit(lambda a: lax.convert_element_type(a, jnp.bfloat16))(x)
                               ).astype(np.float64)[0])
        ok = got == float(want)
        present |= not ok
        print(f"convert({np.dtype(dtype).name} {v}) -> bfloat16 = {got!r}, correctly rounded "
              f"{float(want)!r} {'OK' if ok else 'WRONG'}")
sys.exit(3 if present else 0)
