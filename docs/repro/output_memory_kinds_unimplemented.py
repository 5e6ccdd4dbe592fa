"""get_output_memory_kinds() of a CPU executable is UNIMPLEMENTED on jaxlib 0.8.

Found by the PJRT conformance suite
(conformance/test_executables.py::test_output_memory_kinds_name_the_default_memory and
conformance/test_collectives.py::test_output_shardings_and_memory_kinds) on jaxlib
0.8.0, CPU. Standalone: plain jax. Exit status: 0 the defect is absent, 3 present.

    python docs/repro/output_memory_kinds_unimplemented.py

Expected: one list of memory kinds per output ([['device']] for one output in the
default memory). Observed on jaxlib 0.8.0: JaxRuntimeError "UNIMPLEMENTED:
GetOutputMemoryKinds is not supported." (jax itself catches it and assumes no kinds).
"""
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402

print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
exe = jax.jit(lambda x: x + 1).lower(jnp.zeros(4, jnp.float32)).compile()
native = exe.runtime_executable()
try:
    kinds = native.get_output_memory_kinds()
except Exception as err:  # noqa: BLE001 - the defect is the error
    print(f"get_output_memory_kinds() raised {type(err).__name__}: {err}")
    sys.exit(3 if "UNIMPLEMENTED" in str(err) else 1)
want = jax.devices("cpu")[0].default_memory().kind
print(f"get_output_memory_kinds() = {kinds} (expected [[{want!r}]])")
sys.exit(0)
