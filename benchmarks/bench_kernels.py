"""Kernels through ``runtime`` vs NumPy/SciPy on the same machine.

matmul (``track_`` reports GFLOP/s), FFT, LU/QR/SVD/eigh, sort and a sum
reduction, each compiled once in ``setup`` and run with inputs already on the
device; the reference runs the NumPy/SciPy routine on the host array.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks import backend, intervals, pairing
from benchmarks.sampling import repeat, rounds, sample_time, warmup_time  # noqa: F401 (asv)


def _run(exe, args):
    for out in exe.execute(args):
        out.block_until_ready()


class Matmul:
    params = ([128, 512, 1024],)
    param_names = ["n"]

    def setup(self, n):
        import jax.numpy as jnp

        rng = np.random.default_rng(0)
        self.a, self.b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        self.exe = backend.compiled(jnp.matmul, ((n, n), np.float32), ((n, n), np.float32))
        self.args = [backend.put(self.a), backend.put(self.b)]

    def time_runtime_matmul(self, n):
        _run(self.exe, self.args)

    def time_ref_numpy_matmul(self, n):
        self.a @ self.b

    track_ratio_matmul_vs_numpy = pairing.make_ratio(
        "time_runtime_matmul", "time_ref_numpy_matmul", "Reference: numpy a @ b on the host.")

    def track_runtime_gflops(self, n):
        """matmul throughput in GFLOP/s (2 n^3 floating-point operations per call, 1e9
        per GFLOP): median of 9 samples of at least 2e8 FLOP each, interval recorded."""
        reps = max(1, int(2e8 // (2 * n ** 3)))
        rates = []
        for _ in range(9):
            start = time.perf_counter()
            for _ in range(reps):
                _run(self.exe, self.args)
            rates.append(2 * n ** 3 * reps / (time.perf_counter() - start) / 1e9)
        return intervals.record(intervals.benchmark_name(self, Matmul.track_runtime_gflops),
                                (n,), rates, reps)

    track_runtime_gflops.unit = "GFLOP/s"


class FFT:
    params = ([1 << 10, 1 << 16, 1 << 20],)
    param_names = ["n"]

    def setup(self, n):
        import jax.numpy as jnp

        self.x = np.random.default_rng(0).standard_normal(n).astype(np.complex64)
        self.exe = backend.compiled(jnp.fft.fft, ((n,), np.complex64))
        self.args = [backend.put(self.x)]

    def time_runtime_fft(self, n):
        _run(self.exe, self.args)

    def time_ref_scipy_fft(self, n):
        import scipy.fft

        scipy.fft.fft(self.x)

    track_ratio_fft_vs_scipy = pairing.make_ratio(
        "time_runtime_fft", "time_ref_scipy_fft", "Reference: scipy.fft.fft on the host.")


class Linalg:
    params = (["lu", "qr", "svd", "eigh"], [64, 256])
    param_names = ["routine", "n"]

    def setup(self, routine, n):
        import jax.numpy as jnp
        import jax.scipy.linalg as jsl
        import scipy.linalg

        m = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
        self.x = (m @ m.T + n * np.eye(n, dtype=np.float32)) if routine == "eigh" else m
        ours = {"lu": jsl.lu_factor, "qr": jnp.linalg.qr, "svd": jnp.linalg.svd,
                "eigh": jnp.linalg.eigh}[routine]
        self.ref = {"lu": scipy.linalg.lu_factor, "qr": scipy.linalg.qr,
                    "svd": scipy.linalg.svd, "eigh": scipy.linalg.eigh}[routine]
        self.exe = backend.compiled(ours, ((n, n), np.float32))
        self.args = [backend.put(self.x)]

    def time_runtime(self, routine, n):
        _run(self.exe, self.args)

    def time_ref_scipy(self, routine, n):
        self.ref(self.x)

    track_ratio_factorization_vs_scipy = pairing.make_ratio(
        "time_runtime", "time_ref_scipy",
        "Reference: scipy.linalg lu_factor/qr/svd/eigh of the same host matrix.")


class SortAndReduce:
    params = ([1 << 16, 1 << 20],)
    param_names = ["n"]

    def setup(self, n):
        import jax.numpy as jnp

        self.x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        self.sort = backend.compiled(jnp.sort, ((n,), np.float32))
        self.sum = backend.compiled(jnp.sum, ((n,), np.float32))
        self.args = [backend.put(self.x)]

    def time_runtime_sort(self, n):
        _run(self.sort, self.args)

    def time_ref_numpy_sort(self, n):
        np.sort(self.x)

    def time_runtime_sum(self, n):
        _run(self.sum, self.args)

    def time_ref_numpy_sum(self, n):
        np.sum(self.x)

    track_ratio_sort_vs_numpy = pairing.make_ratio(
        "time_runtime_sort", "time_ref_numpy_sort", "Reference: np.sort on the host.")
    track_ratio_sum_vs_numpy = pairing.make_ratio(
        "time_runtime_sum", "time_ref_numpy_sum", "Reference: np.sum on the host.")
