"""The module-level xla_client API of each platform under test: the suite's seam for backends.

The areas call module-level functions of the xla_client API (``batched_device_put``,
``reorder_shards``, ``batched_copy_array_to_devices_with_sharding``,
``custom_call_targets``, ``dtype_to_etype``, ...) through the ``xc`` fixture, which
asks :func:`module_api` for the platform under test. By default that is
``runtime.xla_client``. A backend whose module functions differ (a vendor's own
``xla_client`` drop-in, or a deliberately broken test double) registers them from
its setup file (a ``conftest.py`` or a ``-p`` plugin) before the session starts::

    from conformance.session import api
    api.register_module_api("my-platform", my_xla_client_module)
"""

from __future__ import annotations

from typing import Any

_MODULES: dict[str, Any] = {}


def _check_platform(platform: Any) -> str:
    if not isinstance(platform, str) or not platform:
        raise TypeError(f"argument 'platform' must be a non-empty str, got {platform!r}")
    return platform


def register_module_api(platform: str, module: Any) -> None:
    """Use ``module`` as the module-level xla_client API when ``--platform=platform`` runs.

    ``platform``: the registry name given to ``--platform``. ``module``: a module or
    any object with the attributes of ``runtime.xla_client`` that the areas call
    (a ``types.SimpleNamespace`` will do). Registering again replaces the earlier one.
    Raises TypeError if ``platform`` is not a non-empty str or ``module`` is None.
    """
    _check_platform(platform)
    if module is None:
        raise TypeError("argument 'module' must be a module or namespace, got None")
    _MODULES[platform] = module


def unregister_module_api(platform: str) -> None:
    """Forget the module registered for ``platform`` (nothing happens if there is none).
    Raises TypeError if ``platform`` is not a non-empty str."""
    _MODULES.pop(_check_platform(platform), None)


def module_api(platform: str) -> Any:
    """The module-level xla_client API for ``platform``: the registered one, else
    ``runtime.xla_client``. Raises TypeError if ``platform`` is not a non-empty str."""
    _check_platform(platform)
    if platform in _MODULES:
        return _MODULES[platform]
    from runtime import xla_client

    return xla_client
