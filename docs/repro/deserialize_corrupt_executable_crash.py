"""Deserializing a corrupted executable kills the process instead of raising.

Found by the PJRT conformance suite
(conformance/test_fuzz.py::test_fuzz_public_function[deserialize_executable-mutated])
on jax/jaxlib 0.10.2, CPU. Standalone: plain jax. Exits 3 while the defect is present.

    python docs/repro/deserialize_corrupt_executable_crash.py

A valid serialized executable (`client.serialize_executable`) is corrupted by
XOR-ing 1 to 4 bytes. `client.deserialize_executable(corrupted, devices)` must
raise (XlaRuntimeError: INVALID_ARGUMENT or similar); on jaxlib 0.10.2 CPU some
corruptions abort (`LLVM ERROR: ABI alignment must be a power of two times the
byte width`, SIGABRT) or segfault. Which corruption aborts depends on the CPU
the executable was compiled for, so seeds 0-199 are tried in turn in a child process
and the first one that kills the child is reported (jaxlib 0.12.0.1: SIGFPE).
"""

import subprocess
import sys

CHILD = r'''
import sys
import jax
import numpy as np
jax.config.update("jax_platforms", "cpu")
from jax._src import xla_bridge
client = xla_bridge.get_backend("cpu")
compiled = jax.jit(lambda x: -x).lower(jax.ShapeDtypeStruct((4,), np.float32)).compile()
blob = bytearray(client.serialize_executable(compiled.runtime_executable()))
for seed in range(int(sys.argv[1]), 200):
    print("SEED", seed, flush=True)
    corrupt = bytearray(blob)
    for k in range(1 + seed % 4):
        i = (seed * 7919 + k * 104729) % len(corrupt)
        corrupt[i] ^= 1 + (seed >> 3) % 255
    try:
        client.deserialize_executable(bytes(corrupt), client.local_devices()[:1], None)
    except Exception as err:  # the expected outcome: a Python error
        pass
'''


def main() -> int:
    import jax
    import jaxlib
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
    print("deserialize_executable of 200 corrupted executables")
    print("  expected: each raises a Python error", flush=True)
    proc = subprocess.run([sys.executable, "-c", CHILD, "0"], capture_output=True,
                          text=True, timeout=600)
    seed = ([line.split()[1] for line in proc.stdout.splitlines() if line.startswith("SEED")]
            or ["?"])[-1]
    if proc.returncode < 0:
        print(f"  observed: seed {seed}: process killed by signal {-proc.returncode}: "
              f"{proc.stderr.strip()[-300:]}")
        return 3
    if proc.returncode != 0:
        print(f"  the child failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        return 1
    print("  observed: every corruption raised: fixed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
