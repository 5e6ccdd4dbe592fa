"""pytest plugin of the conformance suite (loaded through the ``pytest11`` entry point).

Options (:mod:`conformance.session.options`): ``--platform`` (default cpu; any
registered or discoverable platform), ``--cpu-devices N`` (default 8),
``--num-processes N``, ``--plugin-library PATH`` and ``--plugin-options JSON-or-FILE``
(certify a PJRT plugin given as a shared library, registered under ``--platform``),
``--expect-platform``, ``--profile``, ``--declare``/``--declare-file``,
``--waivers``, ``--known-failures FILE``; and here ``--report-dir DIR`` and
``--write-profile FILE``. Registers the Hypothesis profiles
(:mod:`conformance.session.hypothesis_profiles`). Provides the fixtures of
:mod:`conformance.session.fixtures` and ``xc``, and parametrizes every test that
takes ``device`` over all addressable devices. Results are recorded and the
report written by :mod:`conformance.session.recording`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hypothesis
import pytest

import conformance
from conformance.certification.provenance import package_nodeid
from conformance.certification import known_failures
from conformance.certification import profiles
from conformance.certification import records
from conformance.session import backend
from conformance.session import hypothesis_profiles
from conformance.session import options
from conformance.session import recording
from conformance.session import state as session_state
from runtime import versions, xla_bridge, xla_client

pytest_plugins = ["conformance.session.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pjrt-conformance", "PJRT conformance suite")
    options.add_to(group.addoption)
    group.addoption("--report-dir", default=None,
                    help="write the report bundle (report.json, report.md, report.html, "
                         "junit.xml, MANIFEST.sha256) into this directory")
    group.addoption("--write-profile", default=None,
                    help="write the collected test ids and tiers as a profile to this path")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    hypothesis_profiles.register(explicit=bool(config.getoption("hypothesis_profile", None)))
    config.addinivalue_line("markers", "capability(name): test needs a capability module")
    config.addinivalue_line("markers", "informational: the result never blocks certification "
                                       "(except crash, timeout, wrong result)")
    cpu_devices = config.getoption("cpu_devices")
    if cpu_devices < 1:
        raise pytest.UsageError(f"--cpu-devices must be >= 1, got {cpu_devices}")
    if config.getoption("num_processes") < 1:
        raise pytest.UsageError(f"--num-processes must be >= 1, got "
                                f"{config.getoption('num_processes')}")
    try:
        spec = backend.BackendSpec(
            platform=config.getoption("platform"), cpu_devices=cpu_devices,
            plugin_library=config.getoption("plugin_library"),
            plugin_options=backend.load_plugin_options(config.getoption("plugin_options")),
            expect_platform=config.getoption("expect_platform"),
            setup_files=tuple(sorted(
                str(Path(p.__file__)) for p in config.pluginmanager.get_plugins()
                if getattr(p, "__name__", "").endswith("conftest")
                and getattr(p, "__file__", None))))
        spec.configure()
    except (RuntimeError, ValueError, TypeError, xla_client.GpuLibNotLinkedError) as err:
        raise pytest.UsageError(f"--platform={config.getoption('platform')}: {err}") from err
    state = session_state.SessionState(config, spec)
    try:
        state.configure_certification()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from err
    if not _is_xdist_controller(config):
        state.client()  # fail fast: a backend that cannot start is a usage error
    config.stash[session_state.KEY] = state
    config.pluginmanager.register(recording.Recorder(config), "pjrt-conformance-recorder")


def _is_xdist_controller(config: pytest.Config) -> bool:
    """True in the pytest-xdist controller, which runs no tests and opens no client."""
    workers = getattr(config.option, "numprocesses", None)
    return not hasattr(config, "workerinput") and workers not in (None, 0)


def pytest_report_header(config: pytest.Config) -> list[str]:
    s = session_state.of(config)
    errors = [f"PJRT plugin failed to load: {cause}" for cause in
              xla_bridge.plugin_errors().values()]
    return errors + [f"pjrt-conformance {conformance.__version__}: platform={s.platform}, "
            f"cpu-devices={s.cpu_devices}, hypothesis profile={hypothesis.settings._current_profile}, "
            f"jax {versions.JAX_VERSION}, jaxlib {versions.JAXLIB_VERSION}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        client = session_state.of(metafunc.config).client()
        devices = client.local_devices()
        metafunc.parametrize("device", devices, ids=[f"{d.platform}:{d.id}" for d in devices])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark known failures strict-xfail and record each item's tier and capability."""
    state = session_state.of(config)
    known_failures.apply(items, state.known, state.platform, state.plugin_library)
    for item in items:
        capability = item.get_closest_marker("capability")
        item.user_properties.append((records.TIER_PROPERTY, state.tier(item)))
        item.user_properties.append((records.CAPABILITY_PROPERTY,
                                     capability.args[0] if capability else None))
    target = config.getoption("write_profile")
    if target:
        tests = {profiles.profile_id(package_nodeid(i.nodeid, str(i.path))):
                 profiles.tier_of(list(i.iter_markers()))
                 for i in items}
        name = Path(target).stem
        version = int("".join(c for c in name if c.isdigit()) or 1)
        Path(target).write_text(profiles.canonical_text(name, version, tests))


def pytest_collection_finish(session: pytest.Session) -> None:
    s = session_state.of(session.config)
    rep = session.config.pluginmanager.get_plugin("terminalreporter")
    if s.platform_info and rep is not None:
        p = s.platform_info
        rep.write_line(f"platform: {p['name']} ({p['platform_version']}), "
                       f"{p['local_device_count']} device(s): {', '.join(p['device_kinds'])}")


@pytest.fixture(scope="session")
def xc(client: Any, platform: str) -> Any:
    """The seed's module-level functions for the platform under test
    (``conformance.session.api.module_api``: ``runtime.xla_client`` unless the backend's
    setup registered its own): the areas call ``xc.reorder_shards(...)`` and so on."""
    from conformance.session import api

    return api.module_api(platform)
