"""CPU sparse kernels (CSR sparse x dense) for custom calls (``jaxlib.cpu_sparse``'s
kernel registrations)."""

from __future__ import annotations

from typing import Any

from jaxlib import cpu_sparse as _native


def registrations() -> dict[str, list[tuple[str, Any, int]]]:
    """{"cpu": [(target name, capsule, api_version)]}: jaxlib's CPU sparse
    kernels (``cpu_csr_sparse_dense_ffi``, XLA FFI, api_version 1)."""
    return _native.registrations()
