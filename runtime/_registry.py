"""The backend registry's state and its registration half (jax's backend
registry, ``jax._src.xla_bridge``).

Everything the registry knows lives in one object, :data:`STATE`, guarded by its
lock: the registered factories, the initialized backends and their errors, the
platform list and the plugins. :mod:`runtime.xla_bridge` is the public face.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from runtime import _platforms
from runtime._gpu import gpu_plugin_installed
from runtime._plugin_library import PluginLibrary

#: Install hints for platforms that need a package (named in errors).
INSTALL_HINTS = {
    "cuda": "Install jax-cuda13-pjrt (pip install 'jax[cuda13]') on a machine with an NVIDIA GPU",
    "rocm": "Install jax-rocm7-pjrt on a machine with an AMD GPU",
    "tpu": "Install libtpu on a TPU VM",
}
#: Plugins that are not experimental (``jax._src.xla_bridge._nonexperimental_plugins``).
NONEXPERIMENTAL_PLUGINS = frozenset({"cuda"})
PLATFORMS_ENV_VAR = "JAX_PLATFORMS"


class ExperimentalPlatformWarning(UserWarning):
    """An experimental platform (a plugin outside the non-experimental set) started."""


@dataclasses.dataclass(frozen=True)
class BackendRegistration:
    """A registered factory (``jax._src.xla_bridge.BackendRegistration``). Higher
    ``priority`` is preferred."""

    factory: Callable[[], Any]
    priority: int
    fail_quietly: bool = False
    experimental: bool = False


@dataclasses.dataclass(frozen=True)
class PluginRegistration:
    """How a PJRT plugin came into the registry (recorded in reports).

    ``source``: ``"register_plugin"``, ``"env"``, ``"module:<name>"`` or what the
    caller of ``register_plugin`` named; ``library``: path, sha256 and C API
    version of the loaded library (None when registered from a ``c_api``
    capsule); ``options``: create options.
    """

    plugin_name: str
    source: str
    library: PluginLibrary | None
    options: dict[str, Any]
    priority: int


@dataclasses.dataclass
class RegistryState:
    """The registry: platform -> factory, platform -> client, and what went wrong.

    Every read and write holds ``lock``. :meth:`snapshot` and :meth:`restore`
    let a test put the whole registry back as it was.
    """

    lock: Any = dataclasses.field(default_factory=threading.RLock)
    factories: dict[str, BackendRegistration] = dataclasses.field(default_factory=dict)
    topology_factories: dict[str, Callable[..., Any]] = dataclasses.field(default_factory=dict)
    backends: dict[str, Any] = dataclasses.field(default_factory=dict)
    errors: dict[str, str] = dataclasses.field(default_factory=dict)
    plugin_errors: dict[str, str] = dataclasses.field(default_factory=dict)
    plugin_registrations: dict[str, PluginRegistration] = dataclasses.field(
        default_factory=dict)
    builtin_gpu_factories: dict[str, Callable[[], Any]] = dataclasses.field(
        default_factory=dict)
    default_platform: str | None = None
    platform_list: list[str] | None = None
    platform_list_set: bool = False
    plugins_registered: bool = False

    def snapshot(self) -> dict[str, Any]:
        """A copy of every field except the lock."""
        with self.lock:
            return {f.name: copy.copy(getattr(self, f.name))
                    for f in dataclasses.fields(self) if f.name != "lock"}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Put back the fields of a :meth:`snapshot`."""
        with self.lock:
            for name, value in snapshot.items():
                setattr(self, name, copy.copy(value))


STATE = RegistryState()


def register_backend_factory(name: str, factory: Callable[[], Any], *, priority: int = 0,
                             fail_quietly: bool = True, experimental: bool = False,
                             make_topology: Callable[..., Any] | None = None) -> None:
    """Register ``factory`` (no arguments, returns a client) under platform ``name``
    (``jax._src.xla_bridge.register_backend_factory``).

    A later registration of the same name replaces the earlier one.
    ``make_topology(topology_name, **kwargs)`` serves ``make_pjrt_topology``.
    Raises TypeError for a bad name, factory or priority, and RuntimeError once
    ``name`` has been initialized (call ``clear_backends()`` first).
    """
    call = "register_backend_factory"
    if not isinstance(name, str) or not name:
        raise TypeError(f"{call}: argument 'name' must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"{call}: argument 'factory' must be callable, got {factory!r}")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"{call}: argument 'priority' must be an int, got {priority!r}")
    if make_topology is not None and not callable(make_topology):
        raise TypeError(f"{call}: argument 'make_topology' must be callable or None, "
                        f"got {make_topology!r}")
    with STATE.lock:
        if name in STATE.backends:
            raise RuntimeError(f"{call}: backend {name!r} is already initialized; call "
                               "xla_bridge.clear_backends() first")
        STATE.factories[name] = BackendRegistration(factory, priority, bool(fail_quietly),
                                                    bool(experimental))
        if make_topology is not None:
            STATE.topology_factories[name] = make_topology


def unregister_backend_factory(name: str) -> None:
    """Remove the registration of ``name`` (for tests). KeyError if unknown,
    RuntimeError if initialized."""
    with STATE.lock:
        if name in STATE.backends:
            raise RuntimeError(f"unregister_backend_factory: backend {name!r} is initialized; "
                               "call xla_bridge.clear_backends() first")
        if name not in STATE.factories:
            raise KeyError(f"unregister_backend_factory: no factory registered as {name!r}")
        del STATE.factories[name]
        STATE.topology_factories.pop(name, None)
        STATE.plugin_registrations.pop(name, None)


def registered_platforms() -> list[str]:
    """Names with a registered factory, highest priority first."""
    with STATE.lock:
        return sorted(STATE.factories, key=lambda n: -STATE.factories[n].priority)


def available_platforms() -> list[str]:
    """Registered platforms that could start here, highest priority first: the
    built-in ``cuda``/``rocm`` factories count only when their plugin is installed."""
    with STATE.lock:
        builtin = {p for p, f in STATE.builtin_gpu_factories.items()
                   if p in STATE.factories and STATE.factories[p].factory is f}
    return [p for p in registered_platforms() if p not in builtin or gpu_plugin_installed(p)]


def set_platforms(platforms: str | Sequence[str] | None) -> None:
    """Set the platform list (``"cuda,cpu"`` or ``["cuda", "cpu"]``); None or ``""``
    clears it so every registered factory is initialized. Overrides
    ``JAX_PLATFORMS``. Raises RuntimeError once backends are initialized,
    TypeError/ValueError for a malformed list."""
    parsed = _platforms.parse_platform_list(platforms)
    with STATE.lock:
        if STATE.backends:
            raise RuntimeError("set_platforms: backends are already initialized; call "
                               "xla_bridge.clear_backends() first")
        STATE.platform_list, STATE.platform_list_set = parsed, True


def platforms() -> list[str] | None:
    """The platform list in force: :func:`set_platforms`, else ``JAX_PLATFORMS``, else None."""
    with STATE.lock:
        if STATE.platform_list_set:
            return None if STATE.platform_list is None else list(STATE.platform_list)
    return _platforms.parse_platform_list(os.getenv(PLATFORMS_ENV_VAR, ""),
                                          arg=PLATFORMS_ENV_VAR, call="JAX_PLATFORMS")
