"""The suite's side of jax: lowering jax functions to StableHLO, abstract values, shardings
(the last two from :mod:`conformance.helpers.jax_shardings`, re-exported here).

The runtime under test never lowers anything; the suite writes its programs as
jax functions and lowers them here for the platform under test. This is also
the one place where the suite handles jax version differences (``enable_x64``
moved from ``jax.experimental`` to ``jax``).
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax

# Abstract values and sharding internals live a layer down (helpers use them too).
from conformance.helpers.jax_shardings import (
    device_assignment_of, hlo_sharding_of, shaped_array)  # noqa: F401 (re-exported)


def x64_context() -> contextlib.AbstractContextManager:
    """Context in which jax traces 64-bit dtypes as 64-bit (for lowering)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # older jax

    return enable_x64()


def lower_to_stablehlo(fn: Any, avals: tuple[Any, ...], platform: str,
                       **jit_options: Any) -> str:
    """StableHLO text of the jax function ``fn`` traced at ``avals`` (``jax.ShapeDtypeStruct``
    or ``ShapedArray`` values, 64-bit dtypes kept) and lowered for ``platform`` (a concrete
    platform name such as ``"cpu"`` or ``"cuda"``, not the alias ``"gpu"``). ``jit_options``
    go to ``jax.jit`` (``in_shardings``, ``out_shardings``, ``donate_argnums``). Every
    argument is kept (``keep_unused=True``), used or not: the suite passes every one to
    the executable, and an executable given more arguments than it takes is an error."""
    with x64_context():
        traced = jax.jit(fn, keep_unused=True, **jit_options).trace(*avals)
        lowered = traced.lower(lowering_platforms=(platform,))
    return lowered.as_text()


def confine_jax_to_cpu() -> None:
    """Make jax (used only to lower programs) start its CPU backend alone.

    Lowering initializes jax's own backends; with a GPU plugin installed that
    would be a second GPU client beside the one under test, holding its own
    preallocated memory. No effect once jax's backends are initialized.
    """
    jax.config.update("jax_platforms", "cpu")
