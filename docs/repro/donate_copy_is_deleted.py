"""Donating an array to reorder_shards / batched_copy_array_to_devices_with_sharding.

Found by the PJRT conformance suite
(conformance/test_copy_semantics.py::test_donate_input_deletes_the_input[reorder_shards-is_deleted],
[batched_copy-is_deleted]; [*-use_raises] crash the same). Standalone: jaxlib's copy bindings (jax._src.lib.xla_client, as jax
uses them) and numpy; each call runs in a fresh child process.
Exit status: 0 the defect is absent, 3 present, 4 the platform has fewer than 2 devices.

    python docs/repro/donate_copy_is_deleted.py [reorder_shards] [batched_copy] [--platform cuda]

An array sharded over the devices is copied with ArrayCopySemantics.DONATE_INPUT (to
the same devices in another order). Expected: the result holds the data, the input
reports is_deleted() True and np.asarray(input) raises. Observed: jaxlib 0.10.2 (CPU)
crashes (SIGSEGV) in is_deleted() for both calls; the CUDA plugin with jaxlib 0.11.2
crashes in reorder_shards and leaves the input alive after batched_copy.
"""
import argparse
import subprocess
import sys

CHILD = r'''
import sys
import jax
platform, op = sys.argv[1], sys.argv[2]
jax.config.update("jax_platforms", platform)
if platform == "cpu":
    jax.config.update("jax_num_cpu_devices", 4)
import numpy as np
from jax._src.lib import xla_client as xc
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
try:
    devices = jax.devices()
except (RuntimeError, AssertionError) as err:  # no such platform here (jax 0.10: assert)
    print(f"UNTESTABLE no {platform} devices: {err}", flush=True)
    sys.exit(4)
if len(devices) < 2:
    print("UNTESTABLE fewer than 2 devices", flush=True)
    sys.exit(4)
sharding = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
x = np.arange(4 * len(devices), dtype=np.float32)
arr = jax.device_put(x, sharding)
order = devices[1:] + devices[:1]
if op == "reorder_shards":
    # the same shard on the same device, listed in another device order
    old = sharding._to_xla_hlo_sharding(1)
    position = {d.id: i for i, d in enumerate(order)}
    proto = old.to_proto()
    proto.iota_reshape_dims = []
    proto.iota_transpose_perm = []
    current = list(sharding._device_assignment)
    proto.tile_assignment_devices = [position[current[i].id]
                                     for i in old.tile_assignment_devices()]
    dst = xc.GSPMDSharding(order, xc.HloSharding.from_proto(proto))
    out = xc.reorder_shards(arr, dst, xc.ArrayCopySemantics.DONATE_INPUT)
else:
    dst = NamedSharding(Mesh(np.array(order), ("x",)), P("x"))
    out = xc.batched_copy_array_to_devices_with_sharding(
        [arr], [xc.DeviceList(tuple(order))], [dst], [xc.ArrayCopySemantics.DONATE_INPUT])[0]
print("RESULT_OK", bool(np.array_equal(np.asarray(out), x)), flush=True)
print("INPUT_DELETED", arr.is_deleted(), flush=True)
try:
    np.asarray(arr)
    print("USE_RETURNED", flush=True)
except Exception as err:
    print("USE_RAISED", type(err).__name__, flush=True)
'''


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ops", nargs="*", help="reorder_shards, batched_copy (default both)")
    parser.add_argument("--platform", default="cpu")
    ns = parser.parse_args()
    if set(ns.ops) - {"reorder_shards", "batched_copy"}:
        parser.error(f"ops: expected reorder_shards or batched_copy, got {ns.ops}")
    import jax
    import jaxlib
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, platform {ns.platform}")
    wrong = 0
    for op in ns.ops or ["reorder_shards", "batched_copy"]:
        proc = subprocess.run([sys.executable, "-c", CHILD, ns.platform, op],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode == 4:
            print(proc.stdout.strip())
            return 4
        ok = (proc.returncode == 0 and "RESULT_OK True" in proc.stdout
              and "INPUT_DELETED True" in proc.stdout and "USE_RAISED" in proc.stdout)
        if proc.returncode != 0 and proc.returncode >= 0 and not proc.stdout:
            print(f"{op}: the child failed: {proc.stderr.strip()[-500:]}")
            return 1
        wrong += not ok
        observed = " ".join(proc.stdout.split())
        if proc.returncode < 0:
            observed += f" ... killed by signal {-proc.returncode}"
        print(f"{op}(x, DONATE_INPUT) on {ns.platform}")
        print("  expected: RESULT_OK True INPUT_DELETED True USE_RAISED ...")
        print(f"  observed: {observed}  {'OK' if ok else 'WRONG'}")
    return 3 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
