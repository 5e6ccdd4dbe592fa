"""Platform names: the ``gpu`` alias and platform lists (as in jax's backend
registry, ``jax._src.xla_bridge``).

A platform list is the ``JAX_PLATFORMS`` format: comma-separated names in
priority order (first = highest), e.g. ``"cuda,cpu"``.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Concrete platform -> alias (``jax._src.xla_bridge._platform_aliases``).
PLATFORM_ALIASES = {"cuda": "gpu", "rocm": "gpu"}
ALIAS_TO_PLATFORMS: dict[str, list[str]] = {}
for _platform, _alias in PLATFORM_ALIASES.items():
    ALIAS_TO_PLATFORMS.setdefault(_alias, []).append(_platform)


def expand_platform_alias(platform: str) -> list[str]:
    """``"gpu"`` -> ``["cuda", "rocm"]``; any other name -> ``[name]``
    (``jax._src.xla_bridge.expand_platform_alias``)."""
    return list(ALIAS_TO_PLATFORMS.get(platform, [platform]))


def client_platform(client) -> str:
    """The concrete platform of a client or device: ``"cuda"``/``"rocm"`` for a GPU.

    jaxlib's GPU clients and devices report the alias ``platform == "gpu"``
    and name the vendor in ``platform_version`` (``"cuda 13000"``); jax maps
    them back the same way. Any other platform is returned as reported.
    """
    platform = client.platform
    if platform == "gpu":
        version = str(getattr(client, "platform_version", "")).lower()
        for concrete in ALIAS_TO_PLATFORMS["gpu"]:
            if version.startswith(concrete):
                return concrete
    return platform


def is_gpu(platform: str) -> bool:
    """True for ``"cuda"`` and ``"rocm"`` (``jax._src.xla_bridge.is_gpu``)."""
    return platform in ("cuda", "rocm")


def parse_platform_list(value: str | Sequence[str] | None, *, arg: str = "platforms",
                        call: str = "set_platforms") -> list[str] | None:
    """Validated list of platform names from ``"a,b"`` or ``["a", "b"]``.

    ``None`` or ``""`` means "no list" (None). Raises TypeError for other types
    and ValueError for an empty name (``"cpu,,cuda"``) or a repeated one.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",")]
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise TypeError(f"{call}: argument '{arg}' must be a comma-separated str or a sequence "
                        f"of str, got {value!r}")
    if any(not n for n in names):
        raise ValueError(f"{call}: argument '{arg}' has an empty platform name: {value!r}")
    expanded = [p for n in names for p in expand_platform_alias(n)]
    if len(set(expanded)) != len(expanded):
        raise ValueError(f"{call}: argument '{arg}' names a platform twice: {value!r}")
    return names
