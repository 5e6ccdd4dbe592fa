"""A method of a deleted jax Array crashes the process instead of raising.

Found by the PJRT conformance suite
(conformance/test_lifecycle.py::test_use_after_delete_raises[is_ready], [clone]) on
jax/jaxlib 0.10.2, CPU. Standalone: plain jax. Exit status: 0 the defect is absent (the
call raises a Python exception, as block_until_ready() does); on jaxlib 0.10.2 the
process is killed by SIGSEGV (a crash: the catalog bisect counts it as present).

    python docs/repro/deleted_array_method.py is_ready
    python docs/repro/deleted_array_method.py clone
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402

if len(sys.argv) != 2 or sys.argv[1] not in ("is_ready", "clone", "block_until_ready"):
    sys.exit("usage: deleted_array_method.py is_ready|clone|block_until_ready")
method = sys.argv[1]
print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
print(f"x = jnp.ones(3); x.delete(); x.{method}()")
print("  expected: a Python exception (the array is deleted)", flush=True)
x = jnp.ones(3)
x.delete()
try:
    getattr(x, method)()
except Exception as err:  # the expected outcome
    print(f"  observed: raised {type(err).__name__}: {str(err)[:120]}")
    sys.exit(0)
print("  observed: returned without error")
sys.exit(3)
