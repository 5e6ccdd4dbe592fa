"""jax's abstract values and the internals of its shardings, read in one place.

The array API's ``batched_device_put`` takes an abstract value, and the sharding areas
compare a jax sharding's ``HloSharding`` and device order with the runtime's. These
need jax only (no lowering, no backend), so both the helpers
(:mod:`conformance.helpers.sharding_helpers`) and the programs
(:mod:`conformance.programs.lowering`, which re-exports them) use them.
"""

from __future__ import annotations

from typing import Any

import jax


def shaped_array(shape: tuple[int, ...], dtype: Any) -> Any:
    """The abstract value (jax ``ShapedArray``) of an array of ``shape`` and ``dtype``: the
    ``aval`` argument of the array API's ``batched_device_put``."""
    return jax.core.ShapedArray(tuple(shape), dtype)


def hlo_sharding_of(sharding: Any, ndim: int) -> Any:
    """The ``HloSharding`` of a jax/jaxlib sharding for an array of rank ``ndim``."""
    return sharding._to_xla_hlo_sharding(ndim)


def device_assignment_of(sharding: Any) -> list[Any]:
    """The devices of a jax/jaxlib sharding in its tile-assignment order."""
    return list(sharding._device_assignment)
