"""A pad with interior padding, its result sharded along the padded dimension, is wrong
(XLA's SPMD partitioner): the interior padding is dropped and the operand's rows repeat,
and with an elementwise op after the pad the partitioned HLO fails its verifier.

Found by the PJRT conformance suite's generated SPMD programs with sharded outputs
(conformance/test_programs_spmd.py::test_spmd_generated_programs[float], ci profile,
2 CPU devices, mesh (2, 1): -pad(p1, 0, ((0, 1, 1), (0, 0, 0))) of a replicated f32[2, 2],
the output sharded P('x', None)), pinned as
test_pad_with_interior_padding_into_a_sharded_result, on jaxlib 0.10.2, CPU.
Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/upstream/spmd_pad_interior_sharded_result.py [DEVICES]   (default 2 CPU devices)

``lax.pad(x, 0, ((lo, hi, 1), (0, 0, 0)))`` of x = f32[n, 2] (replicated), the result
sharded P('x', None) over n CPU devices. Expected (StableHLO pad): one zero row between
the operand's rows. Observed on jaxlib 0.10.2: the zero rows are missing and every
operand row appears twice; ``-pad(...)`` does not compile ("hlo verifier: Expected
instruction to have shape equal to f32[1,2], actual shape is f32[2,2] ... Failed after
spmd-partitioning"). A sharded operand, a replicated result, and a pad without interior
padding are right.
"""
import os
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, {n} CPU devices")
mesh = Mesh(np.array(jax.devices()[:n]), ("x",))
rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("x", None))
x = np.arange(1, 1 + 2 * n, dtype=np.float32).reshape(n, 2)
wrong = 0
for config in (((0, 1, 1), (0, 0, 0)), ((1, 0, 1), (0, 0, 0))):
    for negate in (False, True):
        def fn(a, config=config, negate=negate):
            padded = lax.pad(a, np.float32(0), config)
            return -padded if negate else padded
        want = np.asarray(jax.jit(fn)(x))   # unpartitioned: right
        label = f"{'-' if negate else ''}pad(x, 0, {config}), x replicated, result P('x', None)"
        try:
            out = np.asarray(jax.jit(fn, in_shardings=rep, out_shardings=rows)(x))
        except Exception as err:  # noqa: BLE001 -- the partitioner's verifier error
            wrong += 1
            print(f"{label}: expected {want.tolist()}, observed an error: "
                  f"{str(err).splitlines()[0][:200]}  WRONG")
            continue
        ok = np.array_equal(out, want)
        wrong += not ok
        print(f"{label}: expected {want.tolist()}, observed {out.tolist()}  "
              f"{'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
