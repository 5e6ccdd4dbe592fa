"""pad of an int4/uint4 array kills the process on the CUDA PJRT plugin.

Found by the PJRT conformance suite (conformance/test_data_movement.py::test_pad[int4]
and [uint4], jax-cuda13-pjrt 0.11.2 on an H100: the xdist worker died, twice).
Standalone: plain jax, numpy and ml_dtypes. Exit status: 0 the defect is absent (every
case returns the padded bits), 3 present (a wrong result; a crash kills this process
with a signal, which counts as present), 4 no CUDA device here.

    python docs/repro/cuda_pad_int4_crash.py

`lax.pad` of int4[16, 4] with padding (low, high, interior) = [(1, -2, 2), (8, -1, 2)]
aborts in XLA's GPU compiler: `algebraic_simplifier.cc:6179 RET_CHECK
equal(slice->shape(), pad->shape())` (jax-cuda13-pjrt 0.11.2); int8 compiles. pad only
copies elements and the padding value, so the result must equal the same program on
the CPU backend. Each case runs in its own child so the first crash names it.
"""
import subprocess
import sys

# (shape, [(low, high, interior) per dimension]); the first is the suite's failing draw
CASES = [((16, 4), [(1, -2, 2), (8, -1, 2)]), ((16, 4), [(0, 0, 0), (0, 1, 0)]),
         ((16, 4), [(0, -1, 0), (0, 0, 0)]), ((16, 4), [(0, 0, 1), (0, 0, 0)])]
CHILD = r"""
import sys, jax, numpy as np, ml_dtypes
from jax import lax
shape, config, name = eval(sys.argv[1]), eval(sys.argv[2]), sys.argv[3]
dt = np.dtype(getattr(ml_dtypes, name, None) or name)
lo, hi = (-8, 8) if name == "int4" else (0, 16) if name == "uint4" else (-8, 8)
x = (np.arange(int(np.prod(shape))) % (hi - lo) + lo).reshape(shape).astype(dt)
f = jax.jit(lambda a, v: lax.pad(a, v, config))
v = np.array(lo + 1, dt)
got = np.asarray(f(x, v))
cpu = jax.devices("cpu")[0]
want = np.asarray(f(jax.device_put(x, cpu), jax.device_put(v, cpu)))
sys.exit(0 if np.array_equal(got.astype(np.int8), want.astype(np.int8)) else 3)
"""


def main() -> int:
    try:
        import jax
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise RuntimeError("no GPU")
        print(f"jax {jax.__version__}, devices {jax.devices()}")
    except Exception as err:  # noqa: BLE001  (no CUDA backend: untestable here)
        print(f"untestable: {err}")
        return 4
    present = 0
    for name in ("int4", "uint4", "int8"):
        for shape, config in CASES:
            r = subprocess.run([sys.executable, "-c", CHILD, repr(shape), repr(config), name],
                               capture_output=True, text=True, timeout=300)
            what = ("OK" if r.returncode == 0 else "WRONG" if r.returncode == 3 else
                    f"CRASH (signal {-r.returncode})" if r.returncode < 0 else
                    f"ERROR exit {r.returncode}: {r.stderr.strip().splitlines()[-1:]}")
            print(f"pad({name}{list(shape)}, {config}): {what}")
            present += r.returncode != 0 and name != "int8"
    return 3 if present else 0


if __name__ == "__main__":
    sys.exit(main())
