"""The one place where jaxlib/jax version differences are handled.

Supported: jaxlib 0.10.x (Python 3.11) and 0.11.x (Python 3.12). Every other
module imports version-dependent names from here instead of testing versions.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import jax
import jaxlib
from jaxlib import _jax as native_jax  # classes xla_client does not re-export
from jaxlib import xla_client as native

JAXLIB_VERSION: str = jaxlib.__version__
JAX_VERSION: str = jax.__version__
#: jaxlib's internal extension version (``xla_client._version``).
EXTENSION_VERSION: int = getattr(native, "_version", 0)


def _accepts(fn: Any, name: str) -> bool:
    """True when the native function ``fn`` takes a keyword ``name``."""
    doc = getattr(fn, "__doc__", None) or ""
    if f"{name}:" in doc or f"{name}=" in doc:
        return True
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# batched_device_put canonicalizes 64-bit dtypes to 32 bits unless told not to;
# the runtime is not jax and never changes the dtype the caller handed in.
_DEVICE_PUT_TAKES_X64 = _accepts(native.batched_device_put, "enable_x64")


def device_put_kwargs() -> dict[str, Any]:
    """Extra keywords for ``batched_device_put`` that keep dtypes exactly."""
    return {"enable_x64": True} if _DEVICE_PUT_TAKES_X64 else {}


def shaped_array(shape: tuple[int, ...], dtype: Any) -> Any:
    """An abstract value (jax ``ShapedArray``) for ``batched_device_put``."""
    return jax.core.ShapedArray(tuple(shape), dtype)


def x64_context() -> contextlib.AbstractContextManager:
    """Context in which jax traces 64-bit dtypes as 64-bit (for lowering)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # older jax

    return enable_x64()


def lower_to_stablehlo(fn: Any, avals: tuple[Any, ...], platform: str) -> str:
    """Lower a jax function to StableHLO text for ``platform``."""
    with x64_context():
        traced = jax.jit(fn).trace(*avals)
        lowered = traced.lower(lowering_platforms=(platform,))
    return lowered.as_text()


def confine_jax_to_cpu() -> None:
    """Make jax (used only to lower programs) start its CPU backend alone.

    Lowering initializes jax's own backends; with a GPU plugin installed that
    would be a second GPU client beside the one under test, holding its own
    preallocated memory. No effect once jax's backends are initialized.
    """
    jax.config.update("jax_platforms", "cpu")


def hlo_sharding_of(sharding: Any, ndim: int) -> Any:
    """The ``HloSharding`` of a jax/jaxlib sharding for an array of rank ``ndim``."""
    return sharding._to_xla_hlo_sharding(ndim)


def device_assignment_of(sharding: Any) -> list[Any]:
    """The devices of a sharding in its tile-assignment order."""
    return list(sharding._device_assignment)


def parse_stablehlo(computation: str | bytes) -> Any:
    """An MLIR ``ir.Module`` of StableHLO text or bytecode, in jax's MLIR context.

    jaxlib's ``Client.compile`` (unloaded) takes only a module object, while
    ``compile_and_load`` also takes text and bytes.
    """
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir

    with mlir.make_ir_context():
        return ir.Module.parse(computation)
