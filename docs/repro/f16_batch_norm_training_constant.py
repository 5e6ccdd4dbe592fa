"""float16 batch_norm_training of a constant input gives a negative variance and NaNs.

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_op[batch_norm_training-last-feature-float16],
`-- --hypothesis-profile=dev --hypothesis-seed=777001`) on jaxlib 0.10.2, CPU.
Standalone: plain jax/jaxlib (the op has no jax.lax function: the StableHLO program is
compiled with the client's compile_and_load). Exit status: 0 absent, 3 present.

    python docs/repro/f16_batch_norm_training_constant.py

The batch variance of a constant input is 0, so the normalized output is `offset`.
On XLA:CPU, float16[2, 5, 4] filled with 1.5625 (or 1.1, 2.7; feature_index 2,
epsilon 0.001) gives variance -0.00195 (the variance is computed as E[x^2] - E[x]^2
in float16, which cancels badly), and since variance + epsilon < 0 every output is NaN.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

T, V = "tensor<2x5x4xf16>", "tensor<4xf16>"
PROGRAM = f"""
func.func public @main(%x: {T}, %scale: {V}, %offset: {V}) -> ({T}, {V}, {V}) {{
  %0:3 = "stablehlo.batch_norm_training"(%x, %scale, %offset)
      {{epsilon = 0.001 : f32, feature_index = 2 : i64}} : ({T}, {V}, {V}) -> ({T}, {V}, {V})
  return %0#0, %0#1, %0#2 : {T}, {V}, {V}
}}
"""

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
client = xla_bridge.get_backend("cpu")
device = client.local_devices()[0]
exe = client.compile_and_load(PROGRAM, xc.DeviceList((device,)), xc.CompileOptions())
wrong = 0
for value in (1.5625, 1.1, 2.7, 3.0):
    args = [jax.device_put(a, device) for a in (np.full((2, 5, 4), value, np.float16),
                                                np.ones(4, np.float16), np.zeros(4, np.float16))]
    outs = [np.asarray(o[0]) for o in
            exe.execute_sharded(args).disassemble_into_single_device_arrays()]
    normalized, mean, variance = outs
    ok = bool((variance >= 0).all() and np.isfinite(normalized).all())
    wrong += not ok
    print(f"batch_norm_training(float16[2,5,4] all {value}, scale 1, offset 0, eps 0.001)")
    print("  expected: variance 0 (>= 0), normalized output 0 (finite)")
    print(f"  observed: mean {mean.tolist()}, variance {variance.tolist()}, "
          f"{int(np.isnan(normalized).sum())} NaN outputs of 40  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
