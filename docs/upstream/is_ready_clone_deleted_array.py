"""ArrayImpl.is_ready() and ArrayImpl.clone() on a deleted array crash the process.

Standalone: plain jax. Each call runs in a fresh child process. Exits 3 while the
defect is present (a child killed by a signal), 0 when every call raises a Python
error as the other methods of a deleted array do.
Expected: a Python exception (as x.block_until_ready() raises on a deleted array).
Observed on jaxlib 0.10.2 (CPU client, and XLA's CPU plugin through the C API): SIGSEGV.
"""
import subprocess
import sys

CHILD = """
import jax
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp
x = jnp.ones(3)
x.delete()
try:
    x.{method}()
except Exception as e:
    print(f"raised {{type(e).__name__}}: {{e}}")
else:
    print("returned without error")
"""

crashed = 0
for method in ("block_until_ready", "is_ready", "clone"):
    proc = subprocess.run([sys.executable, "-c", CHILD.format(method=method)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode < 0:
        observed = f"process killed by signal {-proc.returncode}"
    else:
        observed = proc.stdout.strip() or f"exit {proc.returncode}"
    crashed += proc.returncode < 0
    print(f"x.delete(); x.{method}()")
    print("  expected: raised a Python exception (the array is deleted)")
    print(f"  observed: {observed}")
sys.exit(3 if crashed else 0)
