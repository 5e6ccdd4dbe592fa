"""A slice or gather of a sharded operand, result replicated: -0.0 becomes +0.0,
subnormals are flushed and signaling NaNs quieted; and a one-element stride-3 slice of a
sharded dimension fails to compile (XLA's SPMD partitioner).

Found by the PJRT conformance suite's generated SPMD programs
(conformance/test_programs_spmd.py::test_spmd_generated_programs[data_movement], pinned as
test_sharded_slice_and_gather_keep_bits[*] and
test_strided_slice_of_a_sharded_dimension_compiles) on jaxlib 0.10.2, CPU. Standalone:
plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/upstream/spmd_replicated_move.py [DEVICES]     (default 4 CPU devices)

``lax.slice(x, (0, s), (1, l), (1, k))`` of f32[4, n] sharded over its columns on n CPU
devices (one column each), result replicated. Expected (StableHLO slice: a data movement): the selected
elements' bits. Observed on jaxlib 0.10.2: every -0.0 comes back +0.0 and the signaling
NaN 0xff800001 comes back quiet (0xffc00001), for every stride >= 2 (the partitioned
program gathers the pieces with an add of zeros); with n >= 4, a one-element slice with
stride 3 starting at column >= 1 fails in the HLO verifier after spmd-partitioning. The
same loss of bits happens to ``take(y, [0], axis=0)`` and ``y[0:1]`` of a row-sharded y.
"""
import os
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, {n} CPU devices")
mesh = Mesh(np.array(jax.devices()[:n]), ("d",))
cols, rep = NamedSharding(mesh, P(None, "d")), NamedSharding(mesh, P())
x = np.full((4, n), -0.0, np.float32)  # one column per device
x.view(np.uint32)[0, n - 2] = 0xFF800001  # a signaling NaN, payload 1
wrong = 0


def sliced(start, limit, stride):
    fn = jax.jit(lambda a: lax.slice(a, (0, start), (1, limit), (1, stride)),
                 in_shardings=cols, out_shardings=rep)
    return np.asarray(fn(jax.device_put(x, cols)))


out = sliced(0, n, 2)
want = x[0:1, 0:n:2]
ok = np.array_equal(out.view(np.uint32), want.view(np.uint32))
wrong += not ok
print(f"x[0:1, 0:{n}:2] bits: expected {[hex(v) for v in want.view(np.uint32).ravel()]},\n"
      f"  observed {[hex(v) for v in out.view(np.uint32).ravel()]}  {'OK' if ok else 'WRONG'}")
y = np.ones((n, 4), np.float32)
y.view(np.uint32)[0] = [0x80000000, 0x80000001, 0x7F800001, 0x3F800000]
rows = NamedSharding(mesh, P("d", None))
take = jax.jit(lambda a: jax.numpy.take(a, np.array([0], np.int32), axis=0),
               in_shardings=rows, out_shardings=rep)
out = np.asarray(take(jax.device_put(y, rows)))
ok = np.array_equal(out.view(np.uint32), y[0:1].view(np.uint32))
wrong += not ok
print(f"take(y, [0], axis=0) bits: expected {[hex(v) for v in y[0].view(np.uint32)]},\n"
      f"  observed {[hex(v) for v in out.view(np.uint32).ravel()]}  {'OK' if ok else 'WRONG'}")
if n >= 4:
    try:
        sliced(1, 2, 3)
        print("x[0:1, 1:2:3]: compiles  OK")
    except Exception as err:  # noqa: BLE001 - the defect is an error of any type
        wrong += 1
        print(f"x[0:1, 1:2:3]: {type(err).__name__}: {str(err).splitlines()[0][:160]}  WRONG")
sys.exit(3 if wrong else 0)
