"""The suite's hooks and the ``xc`` fixture, registered by
:mod:`conformance.session.pytest_plugin` only in a conformance run
(:mod:`conformance.session.activation`): the report header, the ``device``
parametrization, tiers and capabilities of the collected items, known failures
as strict xfails, ``--write-profile``, and the collected count for
:mod:`conformance.session.results_log`.
"""

from __future__ import annotations

from typing import Any

import hypothesis
import pytest

import conformance
from conformance.certification.provenance import package_nodeid
from conformance.certification.catalog import known_failures
from conformance.certification.catalog import profiles
from conformance.certification.results import records
from conformance.helpers import capabilities
from conformance.session import results_log
from conformance.session import session_state
from conformance.session.run_options import run_options
from runtime import versions, xla_bridge


def pytest_report_header(config: pytest.Config) -> list[str]:
    s = session_state.of(config)
    errors = [f"PJRT plugin failed to load: {cause}" for cause in
              xla_bridge.plugin_errors().values()]
    return errors + [
        f"pjrt-conformance {conformance.__version__}: platform={s.platform}, "
        f"cpu-devices={s.cpu_devices}, hypothesis profile={hypothesis.settings._current_profile}, "
        f"jax {versions.JAX_VERSION}, jaxlib {versions.JAXLIB_VERSION}"
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        client = session_state.of(metafunc.config).client()
        devices = client.local_devices()
        metafunc.parametrize("device", devices, ids=[f"{d.platform}:{d.id}" for d in devices])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark known failures strict-xfail and record each item's tier and capabilities
    (several joined by ``+``: ``bf16+donation``); a capability the certification does not
    know is a usage error naming the test."""
    state = session_state.of(config)
    known_failures.apply(items, state.known, state.platform, state.plugin_library)
    for item in items:
        needs = capabilities.required(item)
        unknown = [n for n in needs if n not in profiles.CAPABILITIES]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: unknown capability {unknown} in its "
                                    f"capability mark; known: {', '.join(profiles.CAPABILITIES)}")
        item.user_properties.append((records.TIER_PROPERTY, state.tier(item)))
        item.user_properties.append((records.CAPABILITY_PROPERTY,
                                     profiles.SEPARATOR.join(needs) if needs else None))
    target = run_options(config).write_profile
    if target is not None:
        tests = {profiles.profile_id(package_nodeid(i.nodeid, str(i.path))):
                 profiles.tier_of(list(i.iter_markers()))
                 for i in items}
        name = target.stem
        version = int("".join(c for c in name if c.isdigit()) or 1)
        target.write_text(profiles.canonical_text(name, version, tests))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test needing a capability the backend lacks for certain (the session knows it
    before the test runs: ``multi_device`` on a one-device platform) is ``not_supported``,
    naming what is missing, whatever else it needs."""
    needs = capabilities.required(item)
    if needs:
        capabilities.check_required(needs, session_state.of(item.config).missing_capabilities())


def pytest_collection_finish(session: pytest.Session) -> None:
    s = session_state.of(session.config)
    results_log.note_collected(session.config, len(session.items))
    rep = session.config.pluginmanager.get_plugin("terminalreporter")
    if s.platform_info and rep is not None:
        p = s.platform_info
        rep.write_line(f"platform: {p['name']} ({p['platform_version']}), "
                       f"{p['local_device_count']} device(s): {', '.join(p['device_kinds'])}")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """pytest-xdist: the collected count, for a run that is interrupted later."""
    results_log.note_collected(node.config, len(ids))


@pytest.fixture(scope="session")
def xc(client: Any, platform: str) -> Any:
    """The module-level xla_client functions for the platform under test
    (``conformance.session.api.module_api``: ``runtime.xla_client`` unless the backend's
    setup registered its own): the areas call ``xc.reorder_shards(...)`` and so on."""
    from conformance.session import api

    return api.module_api(platform)
