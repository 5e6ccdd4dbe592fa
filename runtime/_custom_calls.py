"""jaxlib's custom-call registry (``register_custom_call_target`` and its kin) with checked
arguments.

Registration goes through jaxlib's registry unchanged: a target registered for
a platform whose client does not exist yet waits until that client registers
its handler (``make_cpu_client`` does for ``cpu``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from runtime._compat import native
from runtime._validate import bad_type, bad_value

CustomCallTargetTraits = native.CustomCallTargetTraits

#: Lower-case platform names -> the names XLA's registry uses.
_XLA_PLATFORM_NAMES = {"cpu": "Host", "host": "Host", "gpu": "CUDA", "cuda": "CUDA",
                       "rocm": "ROCM"}


def xla_platform_name(platform: Any, call: str) -> str:
    """The registry's name for ``platform`` ("cpu" -> "Host", "cuda"/"gpu" -> "CUDA")."""
    if not isinstance(platform, str) or not platform.strip():
        raise bad_type("platform", "a platform name such as 'cpu' or 'cuda'", platform, call)
    return _XLA_PLATFORM_NAMES.get(platform.lower(), platform)


def _is_capsule(fn: Any) -> bool:
    return type(fn).__name__ == "PyCapsule"


def register_custom_call_target(name: str, fn: Any, platform: str = "cpu",
                                api_version: int = 0,
                                traits: Any = CustomCallTargetTraits.DEFAULT) -> None:
    """Register a native custom-call target (``xla_client.register_custom_call_target``).

    ``name``: the ``custom_call_target`` string of the StableHLO op (non-empty
    str; bytes are decoded as UTF-8). ``fn``: a PyCapsule holding the function
    pointer (api_version 0, untyped) or the XLA FFI handler (api_version 1), or
    for api_version 1 a dict of FFI stage capsules (``execute``,
    ``instantiate``, ``prepare``, ``initialize``). ``platform``: "cpu", "cuda",
    "rocm", "gpu" or a plugin's platform name. ``api_version``: 0 or 1.
    ``traits``: ``CustomCallTargetTraits``. Raises TypeError/ValueError naming
    the bad argument.
    """
    call = "register_custom_call_target"
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if not isinstance(name, str) or not name:
        raise bad_type("name", "a non-empty str", name, call)
    if api_version not in (0, 1) or isinstance(api_version, bool):
        raise bad_value("api_version", "0 (untyped custom call) or 1 (XLA FFI)", api_version,
                        call)
    if isinstance(fn, dict):
        stages = {"execute", "instantiate", "prepare", "initialize"}
        if api_version != 1 or not fn or not set(fn) <= stages or not all(
                _is_capsule(v) for v in fn.values()):
            raise bad_value("fn", f"for api_version 1, a dict of PyCapsules keyed by "
                            f"{sorted(stages)}", fn, call)
    elif not _is_capsule(fn):
        raise bad_type("fn", "a PyCapsule with the target's function pointer", fn, call)
    if not isinstance(traits, CustomCallTargetTraits):
        raise bad_type("traits", "a CustomCallTargetTraits", traits, call)
    xla_platform_name(platform, call)
    native.register_custom_call_target(name, fn, platform, api_version, traits)


def register_custom_call_handler(platform: str, handler: Callable[..., Any]) -> None:
    """Install the function that registers targets for ``platform``
    (``xla_client.register_custom_call_handler``).

    ``handler(name, fn, xla_platform, api_version, traits)`` receives every
    target registered for the platform so far, then each new one. A second
    handler for a platform is ignored (jaxlib's rule). Raises TypeError.
    """
    call = "register_custom_call_handler"
    xla_platform_name(platform, call)
    if not callable(handler):
        raise bad_type("handler", "a callable(name, fn, platform, api_version, traits)",
                       handler, call)
    native.register_custom_call_handler(platform, handler)


def register_custom_call_partitioner(name: str, prop_user_sharding: Callable[..., Any],
                                     partition: Callable[..., Any],
                                     infer_sharding_from_operands: Callable[..., Any],
                                     can_side_effecting_have_replicated_sharding: bool = False,
                                     c_api: Any = None) -> None:
    """Register SPMD partitioning rules for custom-call target ``name``
    (``xla_client.register_custom_call_partitioner``).

    The three rules are Python callables (see jaxlib's docstring for their
    arguments); ``c_api``: a plugin's ``PJRT_Api`` capsule or None.
    Raises TypeError naming the bad argument.
    """
    call = "register_custom_call_partitioner"
    if not isinstance(name, str) or not name:
        raise bad_type("name", "a non-empty str", name, call)
    for arg, value in [("prop_user_sharding", prop_user_sharding), ("partition", partition),
                       ("infer_sharding_from_operands", infer_sharding_from_operands)]:
        if not callable(value):
            raise bad_type(arg, "a callable", value, call)
    if not isinstance(can_side_effecting_have_replicated_sharding, bool):
        raise bad_type("can_side_effecting_have_replicated_sharding", "a bool",
                       can_side_effecting_have_replicated_sharding, call)
    if c_api is not None and not _is_capsule(c_api):
        raise bad_type("c_api", "a PJRT_Api PyCapsule or None", c_api, call)
    native.register_custom_call_partitioner(name, prop_user_sharding, partition,
                                            infer_sharding_from_operands,
                                            can_side_effecting_have_replicated_sharding, c_api)


def custom_call_targets(platform: str) -> dict[str, Any]:
    """Targets registered with the platform's client: {name: capsule or dict of
    FFI stage capsules} (``xla_client.custom_call_targets``). Targets still waiting for
    the platform's handler are not listed. Raises TypeError for a non-str platform."""
    return dict(native.custom_call_targets(xla_platform_name(platform, "custom_call_targets")))


@functools.cache
def register_cpu_kernels() -> None:
    """Register jaxlib's CPU kernels (LAPACK, CSR sparse) with the cpu platform,
    as jax does on import; targets already listed are left alone. Once per
    process: before jaxlib's CPU client exists, registrations are queued, and
    queueing them again for every client would only grow that queue."""
    from runtime import cpu_sparse, lapack

    listed = native.custom_call_targets("cpu")
    for module in (lapack, cpu_sparse):
        for name, fn, api_version in module.registrations()["cpu"]:
            if name not in listed:
                native.register_custom_call_target(name, fn, "cpu", api_version)
