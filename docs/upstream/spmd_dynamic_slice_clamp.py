"""A dynamic_slice whose result is sharded along the sliced dimension, with an
out-of-range start, returns the wrong elements: each device clamps the start of its own
piece instead of the start of the whole slice (XLA's SPMD partitioner).

Found by the PJRT conformance suite's generated SPMD programs
(conformance/test_programs_spmd.py::test_spmd_generated_programs[integer], ci profile,
2 CPU devices, mesh (1, 2): a dynamic_slice of a concatenation of a row-sharded
parameter, start (3, 3) in a 4x4 operand, slice 2x4, combined with the row-sharded
parameter so the partitioner shards the slice by rows), pinned as
test_dynamic_slice_with_a_sharded_result_clamps_its_start, on jaxlib 0.10.2, CPU.
Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/upstream/spmd_dynamic_slice_clamp.py [DEVICES]   (default 2 CPU devices)

``lax.dynamic_slice(a, (i,), (n,))`` of a = f32[2n] (0, 10, 20, ...), the start i a
runtime int32 (or a constant), the result sharded over n CPU devices (one element
each). Expected (StableHLO dynamic_slice): the start is clamped to [0, n], so i = 2n - 1
gives a[n:2n]. Observed on jaxlib 0.10.2: every device clamps its own one-element piece,
so the last elements repeat (n = 2, i = 3: [30, 30] where [20, 30] is right). The operand
may be replicated or sharded; a constant start and a replicated result are right.
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
mesh = Mesh(np.array(jax.devices()[:n]), ("d",))
sharded, rep = NamedSharding(mesh, P("d")), NamedSharding(mesh, P())
a = np.arange(2 * n, dtype=np.float32) * 10
wrong = 0


def expected(start):
    start = start + 2 * n if start < 0 else start  # jax counts a negative start from the end
    start = min(max(start, 0), n)  # StableHLO clamps it to [0, 2n - n]
    return a[start:start + n]


def check(label, out, start):
    global wrong
    want = expected(start)
    ok = np.array_equal(out, want)
    wrong += not ok
    print(f"{label}: expected {want}, observed {out}  {'OK' if ok else 'WRONG'}")


for operand in (rep, sharded):
    ds = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (n,)),
                 in_shardings=(operand, rep), out_shardings=sharded)
    for start in (n, n + 1, 2 * n, -1):
        out = np.asarray(ds(jax.device_put(a, operand), np.int32(start)))
        check(f"dynamic_slice(a, ({start},), ({n},)), a {operand.spec}, result P('d')", out,
              start)
const = jax.jit(lambda x: lax.dynamic_slice(x, (2 * n - 1,), (n,)), in_shardings=rep,
                out_shardings=sharded)
check(f"dynamic_slice(a, ({2 * n - 1},), ({n},)) constant start, result P('d')",
      np.asarray(const(a)), 2 * n - 1)
replicated = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (n,)), in_shardings=(rep, rep),
                     out_shardings=rep)
check(f"dynamic_slice(a, ({n + 1},), ({n},)), result replicated (control)",
      np.asarray(replicated(a, np.int32(n + 1))), n + 1)
sys.exit(3 if wrong else 0)
