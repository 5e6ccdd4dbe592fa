"""GPU sparse kernels (cuSPARSE, hipSPARSE) for custom calls (``jaxlib``'s
``gpu_sparse`` kernel registrations)."""

from __future__ import annotations

from typing import Any

from jaxlib import gpu_sparse as _native

from runtime._gpu_kernels import checked_registrations


def registrations() -> dict[str, list[tuple[str, Any, int]]]:
    """{"CUDA": [(target name, capsule, api_version)], "ROCM": [...]} of the
    installed GPU kernel packages. Raises ``GpuLibNotLinkedError`` naming the
    package to install when none is."""
    return checked_registrations("gpu_sparse", _native.registrations)
