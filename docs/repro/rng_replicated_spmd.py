"""stablehlo.rng in a replicated SPMD program returns zeros on every CPU device but the first.

Found by the PJRT conformance suite
(conformance/test_stablehlo_ops.py::test_rng_in_replicated_program). Standalone: plain
jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/rng_replicated_spmd.py

`lax.rng_uniform` lowers to `stablehlo.rng`; jitted with a replicated output sharding
over 8 CPU devices, each device runs the program. The spec leaves the values
implementation-defined, but each device's result must be a sample of U[a, b): on
XLA:CPU the shards of devices 1..7 are all zeros (outside U[1, 2)).
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 8)

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
mesh = Mesh(np.array(jax.devices()), ("x",))
f = jax.jit(lambda: lax.rng_uniform(np.float32(1), np.float32(2), (64, 64)),
            out_shardings=NamedSharding(mesh, P()))
out = f()
bad = []
for shard in out.addressable_shards:
    v = np.asarray(shard.data)
    ok = bool(((v >= 1) & (v < 2)).all()) and np.unique(v).size > 1
    print(f"{shard.device}: min {v.min():g} max {v.max():g} distinct {np.unique(v).size} "
          f"{'OK' if ok else 'WRONG'}")
    if not ok:
        bad.append(str(shard.device))
sys.exit(3 if bad else 0)
