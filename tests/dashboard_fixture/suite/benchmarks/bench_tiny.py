"""Two cheap benchmarks whose real asv results are the dashboard tests' fixture."""

import time

import numpy as np


class Copy:
    params = ([1 << 10, 1 << 16], ["built-in", "plugin-a"])
    param_names = ["nbytes", "backend"]

    def setup(self, nbytes, backend):
        self.a = np.ones(nbytes, dtype=np.uint8)
        self.b = np.empty_like(self.a)

    def time_copy(self, nbytes, backend):
        self.a.copy()

    def track_ratio_copy_vs_copyto(self, nbytes, backend):
        """numpy copy into preallocated memory (np.copyto)"""
        pairs = []
        for _ in range(21):
            t0 = time.perf_counter()
            self.a.copy()
            t1 = time.perf_counter()
            np.copyto(self.b, self.a)
            pairs.append((t1 - t0) / max(time.perf_counter() - t1, 1e-9))
        return float(np.median(pairs))

    track_ratio_copy_vs_copyto.unit = "ratio"
