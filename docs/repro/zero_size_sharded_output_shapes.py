"""Zero-size outputs of a sharded jit carry the global shape in every shard.

Found by the PJRT conformance suite (conformance/test_sharding.py::
test_zero_size_output_shards_have_the_shard_shape) on jax/jaxlib 0.10.2, CPU.
Standalone: plain jax, 8 virtual CPU devices. Exits 3 while the defect is present.

    python docs/repro/zero_size_sharded_output_shapes.py

An int32[0, 8] array under NamedSharding(P(None, 'x')) over 8 devices has shard
shape (0, 1): `jax.device_put` gives shards of (0, 1), but the output of
`jax.jit(f, out_shardings=...)` with the same sharding has shards of (0, 8)
(the global shape), and int32[8, 0] under P('x', None) gives (8, 0) instead of
(1, 0). `out.sharding.shard_shape(out.shape)` disagrees with
`out.addressable_shards[i].data.shape`.
"""

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_platforms", "cpu")


def main() -> int:
    print(f"jax {jax.__version__}, jaxlib {jax.lib.__version__}, {jax.device_count()} devices")
    mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
    broken = 0
    for shape, spec in [((0, 8), P(None, "x")), ((8, 0), P("x", None))]:
        sharding = NamedSharding(mesh, spec)
        x = jax.device_put(np.zeros(shape, np.int32), sharding)
        y = jax.jit(lambda a: a + 1, out_shardings=sharding)(x)
        want = sharding.shard_shape(shape)
        put = {s.data.shape for s in x.addressable_shards}
        got = {s.data.shape for s in y.addressable_shards}
        ok = got == {want}
        broken += not ok
        print(f"int32{list(shape)} {spec}: shard_shape={want}, device_put shards={put}, "
              f"jit output shards={got} -> {'ok' if ok else 'WRONG'}")
    return 3 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
