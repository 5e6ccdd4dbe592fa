"""The mutant catalog: what a mutant is, and the registry the operator modules fill.

A mutant is a deliberately broken backend: a ``runtime`` ``Client`` subclass over a
CPU client (and optionally replaced module-level xla_client functions), registered as
platform ``name``. It declares its ``kind`` (which mutation operator made it) and
the ``targets`` where the suite should kill it: ``(test module, -k expression)``
pairs; the area of a target is its module name without ``test_``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

KINDS = {
    "hlo": "a StableHLO rewrite before compile (a miscompile)",
    "output": "a per-device transform of outputs after execute",
    "transfer": "the transfer, copy, reorder, donation and collective paths",
    "placement": "memory kinds and placement",
    "jaxlib_api": "the jaxlib API's metadata, registries and argument checks",
}


@dataclasses.dataclass(frozen=True)
class Target:
    """One area a mutant should be killed in: ``module`` (``test_<area>``, no ``.py``)
    and a ``-k`` expression within it (None: the whole module)."""

    module: str
    select: str | None = None

    @property
    def area(self) -> str:
        return self.module.removeprefix("test_")

    def expression(self) -> str:
        """A ``-k`` expression selecting this target's tests in a whole-suite run."""
        own = f"{self.module}.py"
        return f"({own} and ({self.select}))" if self.select else f"({own})"


@dataclasses.dataclass(frozen=True)
class Mutant:
    """A broken backend. ``client``: native jaxlib client -> ``runtime`` Client (a
    subclass instance); ``api``: module-level functions to replace in
    ``runtime.xla_client`` for this platform (or None); ``devices``: CPU devices
    (``--cpu-devices``); ``setup``: called once before the first client is made;
    ``env``: environment variables of its child run (e.g. a worker preload)."""

    name: str
    kind: str
    doc: str
    client: Callable[[Any], Any]
    targets: tuple[Target, ...]
    api: dict[str, Any] | None = None
    devices: int = 2
    setup: Callable[[], None] | None = None
    env: dict[str, str] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"mutant {self.name}: argument 'kind' must be one of "
                             f"{sorted(KINDS)}, got {self.kind!r}")
        if not self.targets:
            raise ValueError(f"mutant {self.name}: argument 'targets' must not be empty")

    @property
    def areas(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.area for t in self.targets))

    def expression(self) -> str:
        return " or ".join(t.expression() for t in self.targets)


CATALOG: dict[str, Mutant] = {}


def parse_targets(spec: str | tuple | list) -> tuple[Target, ...]:
    """Targets from ``"test_a: expr; test_b"`` text or a sequence of Target/tuples."""
    if isinstance(spec, str):
        out = []
        for part in filter(None, (p.strip() for p in spec.split(";"))):
            module, _, select = part.partition(":")
            out.append(Target(module.strip(), select.strip() or None))
        return tuple(out)
    return tuple(t if isinstance(t, Target) else Target(*t) for t in spec)


def add(name: str, kind: str, client: Callable[[Any], Any], targets: Any, *,
        doc: str | None = None, api: dict[str, Any] | None = None, devices: int = 2,
        setup: Callable[[], None] | None = None, env: dict[str, str] | None = None) -> Mutant:
    """Add a mutant to ``CATALOG`` (``doc`` defaults to the client's docstring).
    Raises ValueError for a duplicate name, an unknown kind or no targets."""
    if name in CATALOG:
        raise ValueError(f"argument 'name': mutant {name!r} is already in the catalog")
    text = doc or (getattr(client, "__doc__", None) or "").strip().splitlines()[0]
    mutant = Mutant(name, kind, text, client, parse_targets(targets), api, devices, setup, env)
    CATALOG[name] = mutant
    return mutant
