"""LAPACK kernels of jaxlib's CPU backend for custom calls (``jaxlib.lapack``'s
kernel registrations).

Target names are ``lapack_<prefix><routine>_ffi`` with the LAPACK type prefix
``s`` (float32), ``d`` (float64), ``c`` (complex64), ``z`` (complex128).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib import lapack as _native

from runtime._validate import bad_type, bad_value

#: dtype -> LAPACK type prefix.
LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                 np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def registrations() -> dict[str, list[tuple[str, Any, int]]]:
    """{"cpu": [(target name, capsule, api_version)]}: every LAPACK target."""
    return _native.registrations()


def routines() -> list[str]:
    """LAPACK routine names (``getrf``, ``geqrf``, ``syevd``...) with targets."""
    names = {name for name, _, _ in registrations()["cpu"]}
    return sorted({n[len("lapack_") + 1:-len("_ffi")] for n in names
                   if n.startswith("lapack_") and n.endswith("_ffi")})


def prepare_lapack_call(fn_base: str, dtype: Any) -> str:
    """The LAPACK function name for routine ``fn_base`` and ``dtype``
    (``prepare_lapack_call("getrf", np.float32) == "lapack_sgetrf"``; the
    registered custom-call target adds ``_ffi``); ``jaxlib.lapack.prepare_lapack_call``.

    Raises TypeError for a non-str ``fn_base`` and ValueError for a routine
    without a registered target or a dtype LAPACK has no prefix for (only
    float32, float64, complex64, complex128).
    """
    call = "prepare_lapack_call"
    if not isinstance(fn_base, str):
        raise bad_type("fn_base", "a LAPACK routine name such as 'getrf'", fn_base, call)
    try:
        dt = np.dtype(dtype)
    except TypeError as err:
        raise bad_type("dtype", "a numpy dtype", dtype, call) from err
    if dt not in LAPACK_PREFIX:
        raise bad_value("dtype", "float32, float64, complex64 or complex128", dtype, call)
    name = f"lapack_{LAPACK_PREFIX[dt]}{fn_base}"
    targets = {n for n, _, _ in registrations()["cpu"]}
    if f"{name}_ffi" not in targets:
        raise bad_value("fn_base", "a LAPACK routine with a registered target", fn_base, call,
                        f"Routines: {', '.join(routines())}.")
    return name
