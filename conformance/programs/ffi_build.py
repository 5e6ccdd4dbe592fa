"""Build the FFI handlers of ``conformance/ffi/`` at test time (area kernels_ffi).

The sources are compiled against the XLA FFI headers that jaxlib ships
(``jax.ffi.include_dir()``) with the system C++ compiler (CPU) or ``nvcc``
(CUDA) into a shared library in a temporary directory, and loaded with ctypes.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

HANDLER_SYMBOL = "PjrtConformanceAxpby"
#: The placement probe: writes the device ordinal of its call context (int32 scalar).
DEVICE_ORDINAL_SYMBOL = "PjrtConformanceDeviceOrdinal"


class NoCompilerError(RuntimeError):
    """No compiler for the handler on this machine (the test skips with this reason)."""


def compiler_for(kind: str) -> list[str]:
    """The command that compiles a shared library: ``kind`` 'cpu' (c++/g++/clang++,
    or $CXX) or 'cuda' (nvcc, or $NVCC). Raises NoCompilerError naming what was looked
    for, ValueError for another kind."""
    if kind == "cpu":
        found = [os.environ.get("CXX", "")] + ["c++", "g++", "clang++"]
        exe = next((shutil.which(c) for c in found if c and shutil.which(c)), None)
        if exe is None:
            raise NoCompilerError("no C++ compiler: looked for $CXX, c++, g++, clang++")
        return [exe, "-std=c++17", "-O2", "-shared", "-fPIC"]
    if kind == "cuda":
        cand = [os.environ.get("NVCC", ""), "nvcc", "/usr/local/cuda/bin/nvcc"]
        exe = next((shutil.which(c) for c in cand if c and shutil.which(c)), None)
        if exe is None:
            raise NoCompilerError("no CUDA compiler: looked for $NVCC, nvcc, "
                                  "/usr/local/cuda/bin/nvcc")
        return [exe, "-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC"]
    raise ValueError(f"compiler_for: argument 'kind' must be 'cpu' or 'cuda', got {kind!r}")


def build_handler(kind: str, out_dir: Path) -> ctypes.CDLL:
    """Compile ``ffi/axpby_<kind>`` (both handlers) into ``out_dir`` and load it.

    Raises NoCompilerError when no compiler is found and RuntimeError with the
    compiler's output when compilation fails (timeout: 300 s).
    """
    import jax.ffi

    source = resources.files("conformance") / "ffi" / ("axpby_cpu.cc" if kind == "cpu"
                                                       else "axpby_cuda.cu")
    cmd = compiler_for(kind)
    lib = Path(out_dir) / f"libpjrt_conformance_axpby_{kind}.so"
    with resources.as_file(source) as src:
        proc = subprocess.run(cmd + [f"-I{jax.ffi.include_dir()}", str(src), "-o", str(lib)],
                              capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {source.name} failed ({' '.join(cmd)}):\n"
                           f"{proc.stderr[-3000:]}")
    return ctypes.cdll.LoadLibrary(str(lib))


def handler_capsule(lib: ctypes.CDLL, symbol: str = HANDLER_SYMBOL):
    """The FFI handler ``symbol`` of ``lib`` (:data:`HANDLER_SYMBOL` or
    :data:`DEVICE_ORDINAL_SYMBOL`) as the PyCapsule ``register_custom_call_target``
    takes. Raises ValueError naming ``symbol`` when ``lib`` does not export it."""
    import jax.ffi

    try:
        handler = getattr(lib, symbol)
    except AttributeError as err:
        raise ValueError(f"handler_capsule: argument 'symbol' {symbol!r} is not exported by "
                         f"{lib._name}") from err
    return jax.ffi.pycapsule(handler)
