"""A one-element slice of the high padding of a pad, along a sharded dimension, aborts
the compiler (XLA's SPMD partitioner: "Check failed: shard_count > 1").

Found by the PJRT conformance suite's generated SPMD programs
(conformance/test_programs_spmd.py::test_spmd_generated_programs[data_movement], nightly
profile, seed 7, 8 CPU devices, mesh (4, 2): p0 i16[8, 24] sharded P(None, 'y'),
lax.slice(lax.pad(p0, 7, [(1, 1, 0), (0, 1, 0)]), (9, 24), (10, 25)), output replicated:
the pytest process aborted), pinned as
test_slice_of_high_padding_of_a_sharded_dimension_compiles, on jaxlib 0.10.2, CPU.
Standalone: plain jax and numpy. Exit status: 0 the defect is absent, 3 present.

    python docs/upstream/spmd_slice_of_high_padding_crash.py [DEVICES]   (default 2 CPU devices)

``lax.slice(lax.pad(x, 7, [(0, 1, 0)]), (n,), (n + 1,))`` of x = f32[n] sharded one
element per device over n CPU devices, the result replicated. Expected: [7.] (the one
element of the high padding). Observed on jaxlib 0.10.2 and 0.12.0.1: the compile aborts
the process (SIGABRT, "spmd_partitioner.cc: Check failed: shard_count > 1 (1 vs. 1)").
Each program is compiled in a child process (this script run with --case), so that the
abort is observed rather than suffered. Controls that compile and are right: the same
slice of the low padding, a two-element slice of a high padding of 2, a slice across the
last element and the padding, and the same one-element slice with a negate between the
pad and the slice.
"""
import os
import subprocess
import sys

CASES = {   # name: (program of x (f32[n]) and n, expected result)
    "one element of the high padding":
        ("lax.slice(lax.pad(x, np.float32(7), [(0, 1, 0)]), (n,), (n + 1,))", [7.0]),
    "one element of a high padding of 3, its last":
        ("lax.slice(lax.pad(x, np.float32(7), [(0, 3, 0)]), (n + 2,), (n + 3,))", [7.0]),
    "control: one element of the low padding":
        ("lax.slice(lax.pad(x, np.float32(7), [(1, 0, 0)]), (0,), (1,))", [7.0]),
    "control: two elements of a high padding of 2":
        ("lax.slice(lax.pad(x, np.float32(7), [(0, 2, 0)]), (n,), (n + 2,))", [7.0, 7.0]),
    "control: the last element and the padding":
        ("lax.slice(lax.pad(x, np.float32(7), [(0, 1, 0)]), (n - 1,), (n + 1,))",
         "[n - 1, 7.0]"),
    "control: a negate between the pad and the slice":
        ("lax.slice(-lax.pad(x, np.float32(7), [(0, 1, 0)]), (n,), (n + 1,))", [-7.0]),
}


def _child(n: int, name: str) -> None:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
    import jax

    jax.config.update("jax_platforms", "cpu")
    import numpy as np
    from jax import lax  # noqa: F401 - the programs use it
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:n]), ("d",))
    fn = eval("lambda x: " + CASES[name][0], {"lax": lax, "np": np, "n": n})
    f = jax.jit(fn, in_shardings=NamedSharding(mesh, P("d")),
                out_shardings=NamedSharding(mesh, P()))
    print(np.asarray(f(np.arange(n, dtype=np.float32))).tolist())


def main() -> int:
    if sys.argv[1:2] == ["--case"]:
        _child(int(sys.argv[2]), sys.argv[3])
        return 0
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    probe = ("import os; os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=1'; "
             "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)")
    versions = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    print(f"jax, jaxlib {versions.stdout.strip()}, {n} CPU devices")
    wrong = 0
    for name, (program, want) in CASES.items():
        want = eval(want, {"n": n}) if isinstance(want, str) else want
        proc = subprocess.run([sys.executable, __file__, "--case", str(n), name],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode < 0:
            check = [line.split("] ", 1)[-1] for line in proc.stderr.splitlines()
                     if "Check failed" in line]
            observed = f"the process aborted (signal {-proc.returncode}) {check[:1]}"
        elif proc.returncode:
            observed = f"an error: {proc.stderr.strip().splitlines()[-1:]}"
        else:
            observed = proc.stdout.strip()
        ok = observed == str([float(v) for v in want])
        wrong += not ok
        print(f"{name}: {program}, x f32[{n}] sharded P('d'), result replicated: "
              f"expected {[float(v) for v in want]}, observed {observed}  "
              f"{'OK' if ok else 'WRONG'}")
    return 3 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
