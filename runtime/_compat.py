"""The one place where jaxlib/jax version differences are handled inside the runtime.

Supported: jaxlib 0.8.0 and 0.10.x (Python 3.11+), 0.11.x and 0.12.x (Python 3.12+);
0.7.1 imports, but is not supported (see device_put below; no main job run). Every
other runtime module imports version-dependent names from here instead of testing
versions. (Version strings are public: :mod:`runtime.versions`.) Each difference is
detected from the installed jaxlib's own API (a keyword it takes, an attribute its
client has), never from its version string; :func:`branches` names the branch taken,
and ``tests/test_compat.py`` checks each on whichever release is installed.

Differences taken here:

- ``batched_device_put``'s ``enable_x64`` keyword (:func:`device_put_kwargs`). Absent
  on jaxlib 0.7.1, where (with jax_enable_x64 off) an int64 array keeps its dtype but
  loses its high 32 bits (2**40 -> 0; tests/test_compat.py fails there): not handled,
  one reason 0.7.1 is not supported.
- ``array_result_handler``'s ``_skip_checks`` 4th parameter: present up to 0.11.1,
  gone from 0.11.2 (:func:`result_handler`).
- Telling a PJRT C API (plugin) client from jaxlib's built-in one
  (:func:`is_c_api_client`, :func:`pjrt_c_api_version`). From 0.11.2 clients have an
  ``is_c_api`` attribute, both kinds report ``pjrt_c_api_major_version`` / ``minor``
  ((0, 0) on the built-in CPU client) and a plugin's ``platform_version`` no longer
  starts with ``"PJRT C API"``. Up to 0.11.1, only C API clients have the version
  attributes, and their ``platform_version`` is ``"PJRT C API\\n<platform>"``, except
  GPU plugins (``"cuda 13000"``).
- Where the distributed runtime's ``recoverable`` flag goes
  (:func:`distributed_recoverable_on`): jaxlib 0.7/0.8 take it on
  ``get_distributed_runtime_client``, 0.10 and later on
  ``get_distributed_runtime_service``.
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


# jaxlib <= 0.11.1: array_result_handler(aval, sharding, committed, _skip_checks=False);
# 0.11.2+: (aval, sharding, committed). jax passes _skip_checks=True where it takes it:
# the aval and sharding come from an executed result, so they are consistent.
_RESULT_HANDLER_SKIPS_CHECKS = _accepts(native.array_result_handler, "_skip_checks")


def result_handler(aval: Any, sharding: Any, committed: bool) -> Any:
    """jaxlib's C++ ``ResultHandler`` turning one device buffer per call into an array
    of ``aval`` (a ``ShapedArray``) with ``sharding``, committed or not (for
    ``ExecuteResults.consume_with_handlers``)."""
    if _RESULT_HANDLER_SKIPS_CHECKS:
        return native.array_result_handler(aval, sharding, committed, True)
    return native.array_result_handler(aval, sharding, committed)


def _client_attribute(client: Any, name: str) -> Any:
    """``client.name`` or None; jaxlib's clients raise AttributeError("Unknown
    attribute ...") for names they lack, runtime's ``Client`` delegates to them."""
    try:
        return getattr(client, name)
    except AttributeError:
        return None


def _has_is_c_api(client: Any) -> bool:
    return _client_attribute(client, "is_c_api") is not None


def is_c_api_client(client: Any) -> bool:
    """True when ``client`` (a jaxlib client, runtime ``Client`` or anything with
    ``platform_version``) runs a PJRT plugin through the C API; False for jaxlib's
    built-in clients.

    jaxlib 0.11.2+: the client's own ``is_c_api`` (what jax's ``using_pjrt_c_api``
    reads). Before: ``"PJRT C API"`` in ``platform_version``, or a C API version
    attribute, which only C API clients have there (GPU plugins report
    ``platform_version == "cuda 13000"``).
    """
    flag = _client_attribute(client, "is_c_api")
    if flag is not None:
        return bool(flag)
    if "PJRT C API" in str(_client_attribute(client, "platform_version") or ""):
        return True
    return _client_attribute(client, "pjrt_c_api_major_version") is not None


def pjrt_c_api_version(client: Any) -> tuple[int, int] | None:
    """``(major, minor)`` PJRT C API version the plugin behind ``client`` implements,
    None for a built-in client (from jaxlib 0.11.2 the built-in CPU client reports (0, 0),
    which is no C API version; jax's own ``backend_pjrt_c_api_version`` returns that)."""
    if not is_c_api_client(client):
        return None
    major = _client_attribute(client, "pjrt_c_api_major_version")
    minor = _client_attribute(client, "pjrt_c_api_minor_version")
    if major is None or minor is None:
        return None
    return int(major), int(minor)


# jaxlib 0.7/0.8: get_distributed_runtime_client(..., recoverable=None) and no such
# keyword on the service; 0.10+: get_distributed_runtime_service(..., recoverable=None)
# and none on the client.
_SERVICE_TAKES_RECOVERABLE = _accepts(native_jax.get_distributed_runtime_service,
                                      "recoverable")
_CLIENT_TAKES_RECOVERABLE = _accepts(native_jax.get_distributed_runtime_client,
                                     "recoverable")


def distributed_recoverable_on() -> str | None:
    """Which distributed runtime factory of this jaxlib takes ``recoverable``:
    ``"service"`` (0.10+), ``"client"`` (0.7/0.8) or None (neither)."""
    if _SERVICE_TAKES_RECOVERABLE:
        return "service"
    return "client" if _CLIENT_TAKES_RECOVERABLE else None


def branches(client: Any = None) -> dict[str, str]:
    """Which branch of each difference the installed jaxlib takes (for reports and
    ``tests/test_compat.py``); ``client`` adds how its C API status was told."""
    out = {
        "device_put": "enable_x64 keyword" if _DEVICE_PUT_TAKES_X64 else "no enable_x64 keyword",
        "result_handler": ("4 parameters (_skip_checks)" if _RESULT_HANDLER_SKIPS_CHECKS
                           else "3 parameters (no _skip_checks)"),
        "recoverable": f"on the {distributed_recoverable_on() or 'neither'} factory",
    }
    if client is not None:
        out["c_api"] = ("client.is_c_api" if _has_is_c_api(client)
                        else "platform_version / C API version attributes")
    return out


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
