"""A dynamic_slice of a dynamic_slice reads the wrong window when a start is clamped.

Found by the PJRT conformance suite's generated programs
(conformance/test_programs.py::test_data_movement_programs, pinned as
test_programs.py::test_nested_dynamic_slice_clamps_each_start) on jaxlib 0.10.2, CPU.
Known upstream: openxla/xla#49121 (open), jax-ml/jax#40849 (open); a fix was proposed in
openxla/xla#48024. XLA's algebraic simplifier merges ``ds(ds(x, i){inner}, j){outer}``
into one dynamic-slice of ``x`` without clamping each start to its own operand. Each op
compiled on its own gives the specified result. Standalone: plain jax and numpy.
Exit status: 0 the defect is absent, 3 present.

    python docs/repro/nested_dynamic_slice_clamp.py [cpu|cuda]

Expected (StableHLO dynamic_slice: each start clamped to [0, dim - size]): the inner
slice x[0:3] and, its start 2 clamped to 3 - 2 = 1, the rows x[1:3] = [8, 16].
Observed on jaxlib 0.10.2 CPU: [16, 24] (x[2:4]: the outer start added unclamped).
"""
import sys

import jax

platform = sys.argv[1] if len(sys.argv) > 1 else "cpu"
jax.config.update("jax_platforms", platform)

import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def nested(x, i, j):
    return lax.dynamic_slice(lax.dynamic_slice(x, [i, 0], (3, 1)), [j, 0], (2, 1))


print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, {jax.devices()[0]}")
x = np.arange(64, dtype=np.float32).reshape(8, 8)
wrong = 0
for i, j in [(0, 2), (7, 0), (-1, 0), (3, 5)]:
    ii = min(max(i + (8 if i < 0 else 0), 0), 8 - 3)
    jj = min(max(j, 0), 3 - 2)
    expected = x[ii:ii + 3, 0:1][jj:jj + 2].ravel()
    out = np.asarray(jax.jit(nested)(x, np.int32(i), np.int32(j))).ravel()
    ok = np.array_equal(out, expected)
    wrong += not ok
    print(f"i={i} j={j}: expected {expected.tolist()}, observed {out.tolist()}  "
          f"{'OK' if ok else 'WRONG'}")
sys.exit(3 if wrong else 0)
