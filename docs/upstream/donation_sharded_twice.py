"""Calling jax.jit(f, donate_argnums=0) twice on an array sharded over 2 CPU devices
crashes the process instead of raising "buffer has been deleted or donated".

Standalone: plain jax and numpy; the calls run in a fresh child process. Exits 3 while
the defect is present (the child is killed by a signal), 0 when the second call raises.
Expected: the second call raises (as it does for an array on one device).
Observed on jaxlib 0.10.2: SIGSEGV after XLA logs "Invalid buffer passed to Execute()
... Buffer has been deleted or donated" (built-in CPU client; also XLA's CPU plugin
fastatomstruct-xla-cpu 2026.6.23 through the PJRT C API).
"""
import subprocess
import sys

CHILD = """
import jax
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", {n})
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:{n}]), ("x",))
x = jax.device_put(np.arange(8, dtype=np.float32), NamedSharding(mesh, P("x")))
f = jax.jit(lambda a: a + 1, donate_argnums=0)
f(x)
try:
    f(x)
except Exception as e:
    print(f"raised {{type(e).__name__}}")
else:
    print("returned without error")
"""

failed = 0
for n in (1, 2):
    proc = subprocess.run([sys.executable, "-c", CHILD.format(n=n)], capture_output=True,
                          text=True, timeout=300)
    observed = (f"process killed by signal {-proc.returncode}" if proc.returncode < 0
                else proc.stdout.strip() or f"exit {proc.returncode}: {proc.stderr[-300:]}")
    failed += proc.returncode != 0
    print(f"donated array sharded over {n} CPU device(s), f(x) called twice")
    print("  expected: raised ValueError (the donated buffer is deleted)")
    print(f"  observed: {observed}")
sys.exit(3 if failed else 0)
