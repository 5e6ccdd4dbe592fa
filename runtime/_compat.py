"""The one place where jaxlib/jax version differences are handled inside the runtime.

Supported: jaxlib 0.10.x (Python 3.11) and 0.11.x (Python 3.12). Every other
runtime module imports version-dependent names from here instead of testing
versions. (Version strings are public: :mod:`runtime.versions`.)
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
from jaxlib import _jax as native_jax  # classes xla_client does not re-export
from jaxlib import xla_client as native


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
