"""The backend against its machine's limits (issue 20 part 7): one JSON file per device.

Each row is a number the runtime reached beside the limit it is measured against:

- ``h2d_*`` / ``d2h_*``: host<->device transfers (GB/s) through the runtime
  (``Client.buffer_from_pyval`` with IMMUTABLE_ONLY_DURING_CALL; ``np.asarray`` of a
  fresh device array) against the link's measured peak: a pinned-host ``cudaMemcpy``
  of the same size through CuPy on a GPU, ``np.copyto`` into preallocated memory on a
  CPU. Pageable (numpy-allocated) and pinned host arrays are both measured on a GPU.
- ``d2d_stream``: a compiled ``x + 1`` over float32 (reads and writes ``nbytes`` each)
  in GB/s counting both, against the measured peak of a device-to-device
  ``cudaMemcpy`` (also read + write) and, in the reference text, the HBM spec.
- ``dispatch_*``: microseconds per ``execute`` of a one-scalar program (``runtime``
  vs ``jax.jit``, 1000 calls back to back, then one wait); the ratio is jit / runtime.
- ``matmul_*``: TFLOP/s (2 n^3 / seconds) of an n x n x n product compiled through the
  runtime, against the datasheet's dense peak for the device (``SPECS``).

    PJRT_BENCH_PLATFORM=cuda python -m benchmarks.device_limits --out benchmarks/gpu/h100.json

The file's schema is ``pjrt-conformance/device-limits/1`` (see :func:`document`); the
dashboard renders every ``benchmarks/gpu/*.json``. Numbers are wall-clock medians of
``--reps`` runs after one warm-up; they hold only for the machine that measured them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import backend
from runtime.xla_client import HostBufferSemantics

SCHEMA = "pjrt-conformance/device-limits/1"
# Dense peaks from NVIDIA's datasheets (SXM parts; TFLOP/s without sparsity, TB/s of HBM).
SPECS = {
    "H100": {"bf16_tflops": 989.4, "tf32_tflops": 494.7, "fp32_tflops": 66.9, "hbm_tbs": 3.35,
             "source": "NVIDIA H100 Tensor Core GPU datasheet (SXM5)"},
    "H200": {"bf16_tflops": 989.4, "tf32_tflops": 494.7, "fp32_tflops": 66.9, "hbm_tbs": 4.8,
             "source": "NVIDIA H200 Tensor Core GPU datasheet (SXM)"},
}


def median_seconds(fn: Callable[[], Any], reps: int) -> float:
    """Median wall seconds of ``reps`` calls of ``fn`` (which must wait for its own
    result) after one untimed warm-up call. Raises ValueError if ``reps`` < 1."""
    if reps < 1:
        raise ValueError(f"reps: expected >= 1, got {reps}")
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(name: str, unit: str, value: float, reference: str,
        reference_value: float | None) -> dict[str, Any]:
    """One result row; ``ratio`` is value / reference_value (None without a reference)."""
    ratio = value / reference_value if reference_value else None
    return {"name": name, "unit": unit, "value": value, "reference": reference,
            "reference_value": reference_value, "ratio": ratio}


def spec_for(device_kind: str) -> dict[str, Any] | None:
    """The datasheet entry whose key occurs in ``device_kind`` (e.g. 'NVIDIA H100 80GB
    HBM3'), or None for a device with no entry (CPU)."""
    return next((v for k, v in SPECS.items() if k in device_kind), None)


def _gpu_cupy() -> Any:
    """CuPy when the backend under benchmark is a GPU and CuPy is installed, else None."""
    if backend.client().platform == "cpu":
        return None
    try:
        import cupy  # noqa: PLC0415 - only on a GPU machine
        return cupy
    except ImportError:
        return None


def _pinned(cupy: Any, nbytes: int) -> np.ndarray:
    mem = cupy.cuda.alloc_pinned_memory(nbytes)
    return np.frombuffer(mem, np.uint8, nbytes).view(np.float32)


def link_peaks(nbytes: int, reps: int) -> dict[str, tuple[str, float]]:
    """Measured peaks as (what, GB/s) for 'h2d', 'd2h', 'd2d' (d2d counts read + write).
    On a GPU: pinned ``cudaMemcpy`` through CuPy; on a CPU (no CuPy): ``np.copyto``
    into preallocated memory for all three."""
    cupy = _gpu_cupy()
    if cupy is None:
        src, dst = np.ones(nbytes // 4, np.float32), np.empty(nbytes // 4, np.float32)
        gbs = nbytes / median_seconds(lambda: np.copyto(dst, src), reps) / 1e9
        what = "np.copyto into preallocated host memory"
        return {"h2d": (what, gbs), "d2h": (what, gbs), "d2d": (what + ", read + write", 2 * gbs)}
    rt, host, dev = cupy.cuda.runtime, _pinned(cupy, nbytes), cupy.empty(nbytes // 4, np.float32)
    other = cupy.empty_like(dev)

    def copy(dst: int, src: int, kind: int) -> Callable[[], None]:
        def run() -> None:
            rt.memcpy(dst, src, nbytes, kind)
            cupy.cuda.Device().synchronize()
        return run
    h2d = copy(dev.data.ptr, host.ctypes.data, rt.memcpyHostToDevice)
    d2h = copy(host.ctypes.data, dev.data.ptr, rt.memcpyDeviceToHost)
    d2d = copy(other.data.ptr, dev.data.ptr, rt.memcpyDeviceToDevice)
    return {"h2d": ("pinned cudaMemcpy H2D (CuPy)", nbytes / median_seconds(h2d, reps) / 1e9),
            "d2h": ("pinned cudaMemcpy D2H (CuPy)", nbytes / median_seconds(d2h, reps) / 1e9),
            "d2d": ("cudaMemcpy device-to-device (CuPy), read + write",
                    2 * nbytes / median_seconds(d2d, reps) / 1e9)}


def transfer_rows(nbytes: int, reps: int) -> list[dict[str, Any]]:
    """H2D, D2H and on-device stream rows at ``nbytes`` (see the module docstring)."""
    client, dev = backend.client(), backend.device()
    mib = nbytes >> 20
    peaks = link_peaks(nbytes, reps)
    hosts = {"pageable": np.ones(nbytes // 4, np.float32)}
    cupy = _gpu_cupy()
    if cupy is not None:
        hosts["pinned"] = _pinned(cupy, nbytes)
        hosts["pinned"][:] = 1
    sem = HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
    rows = []
    for kind, host in hosts.items():
        t = median_seconds(lambda h=host: client.buffer_from_pyval(
            h, dev, host_buffer_semantics=sem).block_until_ready(), reps)
        rows.append(row(f"h2d_{kind}_{mib}MiB", "GB/s", nbytes / t / 1e9, *peaks["h2d"]))
    exe = backend.compiled(_plus_one, ((nbytes // 4,), np.float32))
    x = backend.put(hosts["pageable"])
    fresh = [exe.execute([x])[0] for _ in range(reps + 1)]
    for a in fresh:
        a.block_until_ready()
    t = median_seconds(lambda: np.asarray(fresh.pop()), reps)
    rows.append(row(f"d2h_{mib}MiB", "GB/s", nbytes / t / 1e9, *peaks["d2h"]))
    for way in ("h2d", "d2h"):
        t = child_seconds(way, nbytes, client.platform)
        if t:
            rows.append(row(f"{way}_pageable_{mib}MiB_jax_reference", "GB/s", nbytes / t / 1e9,
                            peaks[way][0] + " (jax.device_put / np.asarray in jax's own "
                            "client: whose path is slow)", peaks[way][1]))
    t = median_seconds(back_to_back(lambda: exe.execute([x])[0], 10), reps) / 10
    spec = spec_for(dev.device_kind)
    d2d_ref = peaks["d2d"][0] + (f"; HBM spec {spec['hbm_tbs']} TB/s ({spec['source']})"
                                 if spec else "")
    rows.append(row(f"d2d_stream_{mib}MiB", "GB/s", 2 * nbytes / t / 1e9,
                    d2d_ref, peaks["d2d"][1]))
    return rows


def _plus_one(x):
    return x + 1


def _matmul(a, b):
    return a @ b


_CHILD = """
import sys
import numpy as np
from benchmarks.device_limits import median_seconds
mode, arg = sys.argv[1], int(sys.argv[2])

def median(fn):
    return median_seconds(fn, 6)

if mode == "torch_matmul":
    import torch
    a = torch.randn(arg, arg, device="cuda", dtype=torch.bfloat16)
    def run():
        for _ in range(10):
            out = a @ a
        torch.cuda.synchronize()
    print(median(run) / 10)
    sys.exit(0)
import jax
if mode == "dispatch":
    f = jax.jit(lambda x: x + 1)
    x = jax.device_put(np.float32(1))
    def run():
        out = None
        for _ in range(arg):
            out = f(x)
        jax.block_until_ready(out)
    print(median(run) / arg)
elif mode == "h2d":
    host = np.ones(arg // 4, np.float32)
    print(median(lambda: jax.device_put(host).block_until_ready()))
elif mode == "d2h":
    f = jax.jit(lambda x: x + 1)
    x = jax.device_put(np.ones(arg // 4, np.float32))
    fresh = [f(x) for _ in range(8)]
    jax.block_until_ready(fresh)
    print(median(lambda: np.asarray(fresh.pop())))
"""


def child_seconds(mode: str, arg: int, platform: str) -> float | None:
    """Seconds measured by a child process (``_CHILD``): jax's own client on ``platform``
    ('dispatch' per call, 'h2d'/'d2h' per transfer of ``arg`` bytes) or torch's
    cuBLAS ('torch_matmul' of n = ``arg``). The child keeps the runtime's client the only
    one in this process. None if the child cannot run it (no torch, say)."""
    root = str(Path(__file__).resolve().parents[1])  # the child imports median_seconds
    env = dict(os.environ, JAX_PLATFORMS="cuda" if platform == "gpu" else platform,
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(arg)], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        print(f"device_limits: child {mode} failed: {done.stderr.strip()[-300:]}",
              file=sys.stderr)
        return None
    return float(done.stdout.split()[-1])


def back_to_back(fn: Callable[[], Any], k: int) -> Callable[[], None]:
    """A callable that runs ``fn`` ``k`` times without waiting, then waits for the last
    result: device time dominates, not dispatch (divide the time by ``k``)."""
    def run() -> None:
        out = None
        for _ in range(k):
            out = fn()
        out.block_until_ready()
    return run


def dispatch_rows(calls: int = 1000) -> list[dict[str, Any]]:
    """Microseconds per call of a one-scalar program: runtime ``execute`` (1000 calls
    back to back, then one wait) vs ``jax.jit`` in a child process (its ratio is
    jit us / runtime us: above 1 means the runtime dispatches faster)."""
    exe = backend.compiled(_plus_one, ((), np.float32))
    args = [backend.put(np.float32(1))]
    t_rt = median_seconds(back_to_back(lambda: exe.execute(args)[0], calls), 5) / calls * 1e6
    runtime = row("dispatch_runtime_execute_1arg", "us", t_rt, "jax.jit of the same function "
                  "(ratio = jit us / runtime us)", None)
    t_jit = child_seconds("dispatch", calls, backend.client().platform)
    if t_jit is None:  # no jax.jit number: no ratio (never NaN in the file)
        return [runtime]
    return [runtime | {"ratio": t_jit * 1e6 / t_rt},
            row("dispatch_jax_jit_1arg", "us", t_jit * 1e6, "jax.jit, jax's own client, "
                "child process", None)]


def matmul_rows(n: int, reps: int) -> list[dict[str, Any]]:
    """TFLOP/s of an n x n x n product in bf16 and float32 (XLA's default precision)
    through the runtime, against the device's datasheet peak where known."""
    import ml_dtypes

    spec = spec_for(backend.device().device_kind)
    rows = []
    for dtype, key, label in ((ml_dtypes.bfloat16, "bf16_tflops", "bf16"),
                              (np.float32, "tf32_tflops", "f32_default_precision")):
        exe = backend.compiled(_matmul, ((n, n), dtype), ((n, n), dtype))
        a = backend.put(np.random.default_rng(0).standard_normal((n, n)).astype(dtype))
        t = median_seconds(back_to_back(lambda: exe.execute([a, a])[0], 10), reps) / 10
        ref = (f"{key.split('_')[0]} dense peak, {spec['source']}" if spec
               else "no datasheet peak for this device")
        rows.append(row(f"matmul_{label}_{n}", "TFLOP/s", 2 * n**3 / t / 1e12, ref,
                        spec[key] if spec else None))
    t = child_seconds("torch_matmul", n, "gpu") if spec else None
    if t:
        rows.append(row(f"matmul_bf16_{n}_torch_reference", "TFLOP/s", 2 * n**3 / t / 1e12,
                        f"bf16 dense peak, {spec['source']} (torch.matmul, cuBLAS)",
                        spec["bf16_tflops"]))
    return rows


def document(sizes_mib: list[int], matmul_n: int, reps: int) -> dict[str, Any]:
    """The whole results document (schema ``SCHEMA``) for the backend under benchmark."""
    import jax
    import jaxlib

    dev = backend.device()
    rows = [r for mib in sizes_mib for r in transfer_rows(mib << 20, reps)]
    rows += dispatch_rows() + matmul_rows(matmul_n, reps)
    return {"schema": SCHEMA, "device": dev.device_kind, "platform": backend.client().platform,
            "jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.device_limits",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--matmul-n", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    if min(args.sizes_mib) < 1 or args.matmul_n < 1 or args.reps < 1:
        parser.error("--sizes-mib, --matmul-n and --reps must be >= 1")
    doc = document(args.sizes_mib, args.matmul_n, args.reps)
    text = json.dumps(doc, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    for r in doc["rows"]:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        print(f"{r['name']:32s} {r['value']:10.2f} {r['unit']:8s} {ratio:>7s}  {r['reference']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
