"""Deleting one owner of buffers shared through REUSE_INPUT deletes the other array.

Found by the PJRT conformance suite
(conformance/test_copy_semantics.py::test_shared_buffers_live_until_the_last_owner[*]).
Standalone: jaxlib's copy bindings (jax._src.lib.xla_client, as jax uses them) and numpy.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/reuse_input_shared_deletion.py

`out = batched_copy_array_to_devices_with_sharding([x], ..., [REUSE_INPUT])` to the same
devices and sharding shares x's buffers. Expected: deleting x leaves out usable (and
the other way round); buffers live until their last owner is deleted. Observed on
jaxlib 0.10.2 (CPU): out.is_deleted() is True once x is deleted.
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 2)

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
devices = jax.devices()
sharding = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
data = np.arange(8, dtype=np.float32)
wrong = 0
for first in ("input", "result"):
    x = jax.device_put(data, sharding)
    out = xc.batched_copy_array_to_devices_with_sharding(
        [x], [xc.DeviceList(tuple(devices))], [sharding], [xc.ArrayCopySemantics.REUSE_INPUT])[0]
    doomed, survivor = (x, out) if first == "input" else (out, x)
    doomed.delete()
    try:
        alive = not survivor.is_deleted() and np.array_equal(np.asarray(survivor), data)
    except Exception as err:
        alive = False
        print(f"  reading the survivor raised {type(err).__name__}")
    wrong += not alive
    print(f"out = batched_copy([x], same devices, REUSE_INPUT); delete the {first}")
    print(f"  expected: the other array is alive and holds {data.tolist()}")
    print(f"  observed: {'alive' if alive else 'deleted or wrong'}  {'OK' if alive else 'WRONG'}")
sys.exit(3 if wrong else 0)
