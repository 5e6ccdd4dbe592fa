"""Initializing the registered backends and looking them up (jax's backend registry,
``jax._src.xla_bridge``).

:func:`backends` initializes the registered factories in priority order the first
time any backend is asked for. Quiet factories that fail are recorded
(:func:`backend_errors`); loud ones raise with a hint. A platform list restricts
initialization to the named platforms, sets their priority by order and makes
every failure loud.
"""

from __future__ import annotations

import warnings
from typing import Any

from runtime import _platforms
from runtime._plugin_registry import discover_and_register_pjrt_plugins, plugin_errors
from runtime._registry import (INSTALL_HINTS, PLATFORMS_ENV_VAR, STATE,
                               ExperimentalPlatformWarning, available_platforms, platforms,
                               registered_platforms)


def _init_backend(platform: str) -> Any:
    registration = STATE.factories.get(platform)
    if registration is None:
        raise RuntimeError(f"Backend '{platform}' is not in the list of known backends: "
                           f"{registered_platforms()}")
    if registration.experimental:
        warnings.warn(ExperimentalPlatformWarning(
            f"Platform '{platform}' is experimental and not all functionality may be "
            "correctly supported"), stacklevel=4)
    backend = registration.factory()
    if backend is None:
        raise RuntimeError(f"Could not initialize backend '{platform}': its factory "
                           "returned None")
    if backend.device_count() == 0:
        raise RuntimeError(f"Backend '{platform}' provides no devices.")
    return backend


def _registrations() -> list[tuple[str, int, bool]]:
    requested = platforms()
    if requested is None:
        return [(p, r.priority, r.fail_quietly) for p, r in STATE.factories.items()]
    out = []
    for rank, name in enumerate(requested):
        concrete = _platforms.expand_platform_alias(name)
        # An alias ("gpu") is satisfied by any one of its platforms (checked in
        # backends()); a plain name always fails loudly.
        out += [(p, len(requested) - rank, len(concrete) > 1) for p in concrete]
    return out


def _check_aliases_satisfied() -> None:
    for name in platforms() or ():
        members = _platforms.expand_platform_alias(name)
        if len(members) > 1 and not any(p in STATE.backends for p in members):
            causes = {p: STATE.errors.get(p, "not registered") for p in members}
            STATE.backends.clear()
            raise RuntimeError(f"Unable to initialize backend '{name}': none of {members} "
                               f"started: {causes}")


def backends() -> dict[str, Any]:
    """Initialize the registered backends once; return platform -> client
    (``jax._src.xla_bridge.backends``).

    Without a platform list every factory is initialized in priority order;
    failures of ``fail_quietly`` factories are recorded in :func:`backend_errors`,
    others raise RuntimeError naming the platform, the cause and the fix. With a
    platform list only those platforms are initialized and every failure raises.
    """
    discover_and_register_pjrt_plugins()
    with STATE.lock:
        if STATE.backends:
            return dict(STATE.backends)
        using_list = platforms() is not None
        best = None
        for platform, priority, fail_quietly in sorted(_registrations(), key=lambda r: -r[1]):
            try:
                STATE.backends[platform] = _init_backend(platform)
            except Exception as err:  # a factory may raise anything
                if fail_quietly:
                    STATE.errors[platform] = f"{type(err).__name__}: {err}"
                    continue
                STATE.backends.clear()
                msg = (f"Unable to initialize backend '{platform}': {err} (registered "
                       f"platforms: {registered_platforms()})")
                msg += (f" (pass a platform list without '{platform}', or unset "
                        f"{PLATFORMS_ENV_VAR}, to choose an available backend)" if using_list
                        else " (you may need to uninstall the failing plugin package, or set "
                        f"{PLATFORMS_ENV_VAR}=cpu to skip this backend)")
                raise RuntimeError(msg) from err
            if best is None or priority > best[1]:
                best = (platform, priority)
        _check_aliases_satisfied()
        if not STATE.backends:
            raise RuntimeError(f"No backend could be initialized: {dict(STATE.errors)}")
        STATE.default_platform = best[0]
        return dict(STATE.backends)


def backends_are_initialized() -> bool:
    """True once :func:`backends` has initialized at least one backend
    (``jax._src.xla_bridge.backends_are_initialized``)."""
    with STATE.lock:
        return bool(STATE.backends)


def backend_errors() -> dict[str, str]:
    """Platform -> why its quiet factory failed."""
    with STATE.lock:
        return dict(STATE.errors)


def clear_backends() -> None:
    """Forget initialized backends, errors and the default (for tests;
    ``jax._src.xla_bridge._clear_backends``). Registrations and the platform list are kept."""
    with STATE.lock:
        STATE.backends.clear()
        STATE.errors.clear()
        STATE.default_platform = None


def is_known_platform(platform: str) -> bool:
    """True for a registered platform or an alias such as ``gpu``
    (``jax._src.xla_bridge.is_known_platform``)."""
    return platform in STATE.factories or platform in _platforms.PLATFORM_ALIASES \
        or platform in _platforms.ALIAS_TO_PLATFORMS


def canonicalize_platform(platform: str) -> str:
    """``"gpu"`` -> ``"cuda"`` or ``"rocm"``, whichever backend is present
    (``jax._src.xla_bridge.canonicalize_platform``).

    Raises RuntimeError when no platform of the alias is present.
    """
    candidates = _platforms.ALIAS_TO_PLATFORMS.get(platform)
    if candidates is None:
        return platform
    live = backends()
    for p in candidates:
        if p in live:
            return p
    raise RuntimeError(f"Unknown backend: '{platform}' requested, but no platforms that are "
                       f"instances of {platform} are present. Platforms present are: "
                       + ",".join(live))


def unknown_platform_error(platform: str) -> RuntimeError:
    """The error for a platform nobody registered: what is available and how to add it
    (in terms of this API; a command line adds its own options)."""
    available = available_platforms()
    hint = INSTALL_HINTS.get(platform, "Register it with register_backend_factory() or "
                             "register_plugin()")
    msg = (f"Unknown platform {platform!r}. Available: {available}. {hint}, or ask "
           f"get_backend() for one of the available platforms.")
    errors = plugin_errors()
    if errors:
        msg += " Plugins that failed to load: " + "; ".join(errors.values())
    return RuntimeError(msg)


def get_backend(platform: None | str | Any = None) -> Any:
    """The client for ``platform``, or the default (highest priority) backend
    (``jax._src.xla_bridge.get_backend``).

    A non-str, non-None ``platform`` is taken to be a client and returned.
    Raises RuntimeError naming the available platforms when ``platform`` is not
    registered, or its initialization error.
    """
    if platform is not None and not isinstance(platform, str):
        return platform
    live = backends()
    if platform is None:
        with STATE.lock:
            return live[STATE.default_platform]
    platform = canonicalize_platform(platform)
    if platform in live:
        return live[platform]
    with STATE.lock:
        if platform in STATE.factories and platform not in STATE.errors:
            # Registered after backends() ran: initialize it alone, loudly.
            try:
                STATE.backends[platform] = _init_backend(platform)
            except Exception as err:  # a factory may raise anything
                STATE.errors[platform] = f"{type(err).__name__}: {err}"
                raise RuntimeError(f"Unable to initialize backend '{platform}': {err}") from err
            return STATE.backends[platform]
        if platform in STATE.errors:
            raise RuntimeError(f"Backend '{platform}' failed to initialize: "
                               f"{STATE.errors[platform]}. Available backends are {list(live)}")
    raise unknown_platform_error(platform)


def get_device_backend(device: Any = None) -> Any:
    """The backend that owns ``device``, or the default backend
    (``jax._src.xla_bridge.get_device_backend``)."""
    if device is None:
        return get_backend()
    for client in backends().values():
        if device.client == client:
            return client
    return device.client
