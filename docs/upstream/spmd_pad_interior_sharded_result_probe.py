import os, sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
import jax, numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:n]), ("x",))
rep, sh = NamedSharding(mesh, P()), NamedSharding(mesh, P("x", None))
x = np.arange(1, 1 + 2 * 2, dtype=np.float32).reshape(2, 2)
for cfg in [((0, 1, 1), (0, 0, 0)), ((0, 0, 1), (0, 0, 0)), ((1, 1, 0), (0, 0, 0)), ((0, 2, 0), (0, 0, 0)), ((1, 0, 1), (0, 0, 0))]:
  for neg in (False, True):
    fn = (lambda a, cfg=cfg: -lax.pad(a, np.float32(0), cfg)) if neg else (lambda a, cfg=cfg: lax.pad(a, np.float32(0), cfg))
    want = np.asarray(jax.jit(fn)(x))
    if want.shape[0] % n: continue
    for ins in (rep, sh):
      try:
        got = np.asarray(jax.jit(fn, in_shardings=ins, out_shardings=sh)(x))
        ok = np.array_equal(got, want)
        print(n, cfg, "neg" if neg else "   ", ins.spec, "OK" if ok else f"WRONG got {got.tolist()} want {want.tolist()}")
      except Exception as e:
        print(n, cfg, "neg" if neg else "   ", ins.spec, "ERROR", str(e).splitlines()[0][:150])
print(jax.__version__)
