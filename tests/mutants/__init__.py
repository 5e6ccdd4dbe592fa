"""Mutant backends: the suite's own mutation score.

``CATALOG`` (name -> :class:`~tests.mutants.catalog.Mutant`) holds every mutant of the
operator modules: ``hlo`` (StableHLO rewrites before compile; ``composition``: where ops
meet), ``outputs`` (per-device output transforms after execute), ``transfer`` (transfers,
copies, reorders, donation, collectives), ``placement`` (placement and memory kinds), ``host_paths`` (aliasing,
writable views, next-device placement, memory-kind labels, multi-axis shards), and the jaxlib-API mutants
(``legacy_io``, ``legacy_api``, ``client_api``). :func:`register_platforms` registers
them as platforms; ``python -m tests.mutants`` scores the suite (see README.md).
"""

from __future__ import annotations

from tests.mutants import (client_api, composition, denormals, hlo, host_paths,  # noqa: F401
                           just_past, legacy_io, legacy_api, moved_bits, optional_features,
                           outputs, placement, sequences, stablehlo_ops, transfer)
from tests.mutants.catalog import CATALOG, KINDS, Mutant, Target

HEALTHY = "healthy-control"
__all__ = ["CATALOG", "HEALTHY", "KINDS", "Mutant", "Target", "register_platforms"]


def _factory(mutant: Mutant):
    def make():
        from runtime._compat import native

        if mutant.setup is not None:
            mutant.setup()
        return mutant.client(native.make_cpu_client(num_devices=mutant.devices))
    return make


def register_platforms(names: list[str] | None = None) -> None:
    """Register the named mutants (default: all) and ``healthy-control`` (an unbroken
    ``Client`` over a 2-device CPU client) with ``runtime.xla_bridge``, each mutant's
    module-level functions with ``conformance.session.api``. Registering twice is a
    no-op. Raises KeyError naming an unknown mutant."""
    from conformance.session import api
    from runtime import xla_bridge
    from runtime._client import Client
    from tests.mutants.base import namespace

    unknown = sorted(set(names or ()) - set(CATALOG))
    if unknown:
        raise KeyError(f"argument 'names': no mutant named {unknown}")
    chosen = [CATALOG[n] for n in (names if names is not None else CATALOG)]
    healthy = Mutant(HEALTHY, "jaxlib_api", "the unbroken Client", Client, (Target("test_"),))
    for mutant in [healthy, *chosen]:
        if mutant.name in xla_bridge.registered_platforms():
            continue
        xla_bridge.register_backend_factory(mutant.name, _factory(mutant), priority=-1)
        if mutant.api:
            api.register_module_api(mutant.name, namespace(**mutant.api))
