"""reverse replaces float8 NaN payloads with the canonical NaN on XLA:CPU (jaxlib 0.12).

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_op[reverse-dims-0-last-float8_e5m2], and
float8_e4m3, float8_e3m4) on jaxlib 0.12.0.1, CPU. Standalone: plain jax and numpy.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/float8_reverse_nan_payload.py

`lax.rev` lowers to a single `stablehlo.reverse`, a data-movement op: the StableHLO
spec defines it as `result[result_index] = operand[operand_index]`, an element copy,
and these three types follow IEEE 754 conventions (spec, "Types"), where a copy keeps
a NaN's payload and sign. On jaxlib 0.12.0.1 the NaNs come out canonical:
e5m2 0x7d -> 0x7f, e4m3 0x79 -> 0x7c, e3m4 0x71 -> 0x78; e4m3/e3m4 keep the sign,
e5m2 drops it (0xfd -> 0x7f). jaxlib 0.10.2 keeps every bit.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
wrong = 0
for name, nan in (("float8_e5m2", 0x7D), ("float8_e4m3", 0x79), ("float8_e3m4", 0x71)):
    bits = np.array([nan, 0x3C, nan | 0x80, 0x01], np.uint8)
    x = bits.view(getattr(ml_dtypes, name))
    out = np.asarray(jax.jit(lambda a: lax.rev(a, (0,)))(x)).view(np.uint8)
    ok = bool((out[::-1] == bits).all())
    wrong += not ok
    print(f"lax.rev({name} bits {[hex(b) for b in bits]})")
    print(f"  expected: {[hex(b) for b in bits[::-1]]}\n  observed: {[hex(b) for b in out]}"
          f"  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
