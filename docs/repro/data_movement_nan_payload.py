"""concatenate and pad of bfloat16/float8 arrays rewrite NaN payloads on XLA:CPU.

Found by the PJRT conformance suite (conformance/test_data_movement.py::test_concatenate
and ::test_pad, bfloat16 and float8 dtypes). Standalone: plain jax, numpy and ml_dtypes.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/data_movement_nan_payload.py

concatenate and pad only copy elements (StableHLO spec: the result's elements are the
operands' elements), so every bit pattern, NaN payloads included, must come out
unchanged, as float32 does. XLA:CPU returns the canonical NaN instead (bfloat16 0xffff ->
0xffc0; float8_e4m3 0x7d -> 0x7c; float8_e3m4 0xfc -> 0xf8; float8_e5m2 0x7e -> 0x7f).
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
CASES = [(ml_dtypes.bfloat16, np.uint16, 0xFFFF), (np.float32, np.uint32, 0x7FC00001)]
for name, bits in (("float8_e4m3", 0x7D), ("float8_e3m4", 0xFC), ("float8_e5m2", 0x7E)):
    if hasattr(ml_dtypes, name):
        CASES.append((getattr(ml_dtypes, name), np.uint8, bits))
OPS = {"concatenate": lambda a: jnp.concatenate([a, a], axis=0),
       "pad": lambda a: jnp.pad(a, ((0, 0), (0, 1)), constant_values=1)}
wrong = 0
for dtype, ubits, nan_bits in CASES:
    x = np.array([[nan_bits, nan_bits]], ubits).view(dtype)  # NaNs with a payload
    for op, f in OPS.items():
        out = np.asarray(jax.jit(f)(x)).view(ubits)
        kept = out[..., :2].ravel()
        ok = bool((kept == nan_bits).all())
        wrong += not ok
        print(f"{op}({np.dtype(dtype).name}[1, 2] of NaN bits {nan_bits:#x}): "
              f"bits {sorted({int(v) for v in kept})} {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
