"""Backend registry (seed 002): factories by platform name, initialized on demand.

The conformance suite obtains its client only through :func:`get_backend`, which
is what lets self-tests register a deliberately broken backend.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from runtime import xla_client

#: Install hints for platforms this registry does not provide by default.
_INSTALL_HINTS = {
    "cuda": "Install jax-cuda13-pjrt (or jax[cuda13]) on a machine with an NVIDIA GPU",
    "rocm": "Install jax-rocm7-pjrt on a machine with an AMD GPU",
    "tpu": "Install libtpu on a TPU VM",
}


@dataclasses.dataclass(frozen=True)
class BackendFactory:
    factory: Callable[[], Any]
    priority: int
    fail_quietly: bool = False
    experimental: bool = False


_lock = threading.RLock()
_factories: dict[str, BackendFactory] = {}
_backends: dict[str, Any] = {}
_errors: dict[str, str] = {}


def register_backend_factory(name: str, factory: Callable[[], Any], *, priority: int = 0,
                             fail_quietly: bool = True, experimental: bool = False) -> None:
    """Register ``factory`` (no arguments, returns a client) under platform ``name``.

    Seed 002. A later registration of the same name replaces the earlier one.
    Raises TypeError for a non-callable factory or a non-string name, and
    RuntimeError once ``name`` has been initialized (call ``clear_backends`` first).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_backend_factory: argument 'name' must be a non-empty str, "
                        f"got {name!r}")
    if not callable(factory):
        raise TypeError(f"register_backend_factory: argument 'factory' must be callable, "
                        f"got {factory!r}")
    with _lock:
        if name in _backends:
            raise RuntimeError(f"register_backend_factory: backend {name!r} is already "
                               "initialized; call xla_bridge.clear_backends() first")
        _factories[name] = BackendFactory(factory, priority, fail_quietly, experimental)


def registered_platforms() -> list[str]:
    """Names with a registered factory, highest priority first."""
    with _lock:
        return sorted(_factories, key=lambda n: -_factories[n].priority)


def unknown_platform_error(platform: str) -> RuntimeError:
    available = registered_platforms()
    hint = _INSTALL_HINTS.get(platform, "Register it with register_backend_factory()")
    return RuntimeError(f"Unknown platform {platform!r}. Available: {available}. "
                        f"{hint} or pass --platform={available[0] if available else 'cpu'}.")


def _initialize(name: str) -> Any:
    entry = _factories[name]
    try:
        backend = entry.factory()
    except Exception as err:
        _errors[name] = f"{type(err).__name__}: {err}"
        raise RuntimeError(f"Unable to initialize backend {name!r}: {err}") from err
    if backend is None:
        _errors[name] = "factory returned None"
        raise RuntimeError(f"Unable to initialize backend {name!r}: factory returned None")
    _backends[name] = backend
    return backend


def backends() -> dict[str, Any]:
    """Initialize every registered factory in priority order; return name -> client.

    Failures of ``fail_quietly`` factories are recorded (``backend_errors``);
    others raise RuntimeError naming the backend and the cause.
    """
    with _lock:
        for name in registered_platforms():
            if name in _backends:
                continue
            try:
                _initialize(name)
            except RuntimeError:
                if not _factories[name].fail_quietly:
                    raise
        return dict(_backends)


def backend_errors() -> dict[str, str]:
    with _lock:
        return dict(_errors)


def get_backend(platform: str | None = None) -> Any:
    """The client for ``platform`` (default: highest-priority backend that works).

    Raises RuntimeError naming the available platforms when ``platform`` is not
    registered, or the cause when its factory fails.
    """
    with _lock:
        if platform is None:
            live = backends()
            if not live:
                raise RuntimeError(f"No backend could be initialized: {backend_errors()}")
            return live[next(n for n in registered_platforms() if n in live)]
        if not isinstance(platform, str):
            raise TypeError(f"get_backend: argument 'platform' must be a str or None, "
                            f"got {platform!r}")
        if platform in _backends:
            return _backends[platform]
        if platform not in _factories:
            raise unknown_platform_error(platform)
        return _initialize(platform)


def clear_backends() -> None:
    """Forget initialized backends (for tests); registrations are kept."""
    with _lock:
        _backends.clear()
        _errors.clear()


register_backend_factory("cpu", xla_client.make_cpu_client, priority=0, fail_quietly=False)
