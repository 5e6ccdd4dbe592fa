"""Registrations of the GPU kernel packages, loud when they are absent (jaxlib's
kernel registrations).

jaxlib's ``gpu_linalg``/``gpu_sparse`` return empty lists when no GPU kernel
package is installed, which a caller cannot tell from a package with no
kernels. Here that case raises ``GpuLibNotLinkedError`` naming the package.
"""

from __future__ import annotations

from typing import Any

from runtime._gpu import GpuLibNotLinkedError

#: XLA platform -> pip package that ships its kernels (jax_cuda13_plugin, ...).
KERNEL_PACKAGES = {"CUDA": "jax-cuda13-plugin", "ROCM": "jax-rocm7-plugin"}


def checked_registrations(module: str, native_registrations: Any
                          ) -> dict[str, list[tuple[str, Any, int]]]:
    """``native_registrations()`` ({"CUDA": [(name, capsule, api_version)], "ROCM": [...]})
    unless every list is empty; then GpuLibNotLinkedError naming the packages."""
    regs = native_registrations()
    if not any(regs.values()):
        wanted = " or ".join(f"{KERNEL_PACKAGES.get(p, p)} ({p})" for p in regs)
        raise GpuLibNotLinkedError(
            f"{module}.registrations: no GPU kernels are installed; install {wanted}, "
            f"e.g. pip install 'jax[cuda13]'")
    return regs
