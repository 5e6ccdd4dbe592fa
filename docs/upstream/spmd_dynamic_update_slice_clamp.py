"""A dynamic_update_slice of a sharded operand whose start is out of range drops its
update instead of clamping the start (XLA's SPMD partitioner).

Found by the PJRT conformance suite's generated SPMD programs
(conformance/test_programs_spmd.py::test_spmd_generated_programs[float], dev profile,
seed 6603, 8 CPU devices), pinned as
test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start, on jaxlib 0.10.2,
CPU. Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/upstream/spmd_dynamic_update_slice_clamp.py [DEVICES]   (default 2 CPU devices)

``lax.dynamic_update_slice(x, u, (i,))`` of f32[n] sharded over n CPU devices (one
element each), u f32[1], the start i a runtime int32, the result replicated. Expected
(StableHLO dynamic_update_slice): the start is clamped to [0, n - 1], so i = n writes
u into the last element. Observed on jaxlib 0.10.2: x comes back unchanged; the
partitioned program writes u on the device whose shard holds the *unclamped* start
(none). The same with a constant start, and with a start jax wraps to a negative one.
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
x = np.arange(n, dtype=np.float32)  # one element per device
u = np.array([-1.0], np.float32)
dus = jax.jit(lambda a, i: lax.dynamic_update_slice(a, u, (i,)),
              in_shardings=(sharded, rep), out_shardings=rep)
wrong = 0


def expected(start):
    start = start + n if start < 0 else start  # jax counts a negative start from the end
    want = x.copy()
    want[min(max(start, 0), n - 1)] = u[0]  # StableHLO clamps it to [0, n - 1]
    return want


for start in (n - 1, n, n + 3, -n - 1):
    out = np.asarray(dus(jax.device_put(x, sharded), np.int32(start)))
    want = expected(start)
    ok = np.array_equal(out, want)
    wrong += not ok
    print(f"dynamic_update_slice(x, [-1], ({start},)): expected {want}, observed {out}  "
          f"{'OK' if ok else 'WRONG'}")
const = jax.jit(lambda a: lax.dynamic_update_slice(a, u, (n,)), in_shardings=sharded,
                out_shardings=rep)
out = np.asarray(const(jax.device_put(x, sharded)))
ok = np.array_equal(out, expected(n))
wrong += not ok
print(f"dynamic_update_slice(x, [-1], ({n},)) constant start: expected {expected(n)}, "
      f"observed {out}  {'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
