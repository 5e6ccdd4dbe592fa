"""pytest plugin of the conformance suite (loaded through the ``pytest11`` entry point).

Options: ``--platform`` (default cpu; any registered or discoverable platform),
``--cpu-devices N`` (default 8), ``--plugin-library PATH`` and
``--plugin-options JSON-or-FILE`` (certify a PJRT plugin given as a shared
library, registered under ``--platform``), ``--report-dir DIR``,
``--known-failures FILE``. Registers the Hypothesis
profiles ``ci`` (the default), ``dev`` and ``nightly``; choose one with
Hypothesis' own ``--hypothesis-profile``. Provides the fixtures ``client``,
``platform``, ``program_cache`` and ``isolated``, and parametrizes every test
that takes ``device`` over all addressable devices.
"""

from __future__ import annotations

import datetime
import json
import platform as _platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import hypothesis
import numpy as np
import pytest

import conformance
from conformance.session import backend
from conformance.certification import bundle
from conformance.processes import isolation
from conformance.certification import known_failures
from conformance.session import options
from conformance.session import pjrt_plugin_info as plugin_info
from conformance.certification import profiles
from conformance.certification import report
from conformance.certification import waivers
from conformance.programs.cache import ProgramCache
from runtime import _compat, xla_bridge, xla_client

PROFILES = {
    # The explain phase traces every line after a failure; in long runs it left the
    # interpreter in a state where later tests hit RecursionError, so ci skips it.
    "ci": dict(derandomize=True, database=None, deadline=None, print_blob=True, max_examples=8,
               phases=[p for p in hypothesis.Phase if p.name != "explain"],
               suppress_health_check=[hypothesis.HealthCheck.too_slow]),
    "dev": dict(deadline=None, print_blob=True, max_examples=25),
    "nightly": dict(deadline=None, print_blob=True, max_examples=500,
                    suppress_health_check=[hypothesis.HealthCheck.too_slow]),
}
DEFAULT_PROFILE = "ci"
_STATE = pytest.StashKey["SessionState"]()


class SessionState:
    """Per-session state: the one client, results, header facts."""

    def __init__(self, config: pytest.Config, spec: backend.BackendSpec):
        self.config = config
        self.spec: backend.BackendSpec = spec
        self.platform: str = spec.platform
        self.cpu_devices: int = spec.cpu_devices
        self.collector = report.Collector()
        self.known: list[known_failures.Entry] = []
        self.platform_info: dict[str, Any] = {}
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.t0 = time.monotonic()
        self._client: Any = None
        self._cache: ProgramCache | None = None
        self.written: tuple[dict, Path] | None = None
        self.collected_here = False
        self.profile: profiles.Profile | None = None
        self.declared: list[str] = []
        self.waivers: list[waivers.Waiver] = []
        #: Programs compiled and executables served from the cache, summed over workers.
        self.programs: dict[str, int] = {"compiles": 0, "cache_hits": 0}

    def program_counts(self) -> dict[str, int]:
        """This process's ProgramCache counters (zeros when no program ran here)."""
        cache = self._cache
        return {"compiles": cache.compiles if cache else 0,
                "cache_hits": cache.hits if cache else 0}

    def configure_certification(self) -> None:
        """Load --profile, --declare/--declare-file and --waivers (ValueError if bad)."""
        opt = self.config.getoption
        if opt("profile") != "none":
            self.profile = profiles.load(opt("profile"))
        declared = list(opt("declare"))
        self.declared = profiles.parse_declared(declared)
        if opt("declare_file"):
            try:
                extra = profiles.read_declare_file(Path(opt("declare_file")))
            except OSError as err:
                raise ValueError(f"--declare-file: {err}") from err
            self.declared += [c for c in extra if c not in self.declared]
        if opt("waivers"):
            self.waivers = waivers.parse(Path(opt("waivers")))

    def tier(self, item: pytest.Item) -> str:
        own = profiles.tier_of(list(item.iter_markers()))
        if self.profile is None:
            return own
        return self.profile.tier(profiles.profile_id(item.nodeid)) or own

    def client(self) -> Any:
        if self._client is None:
            try:
                self._client = self.spec.open()
            except RuntimeError as err:
                raise pytest.UsageError(str(err) if str(err).startswith("--platform")
                                        else f"--platform={self.platform}: {err}") from err
            self.platform_info = backend.describe(self._client, self.spec)
        return self._client

    def program_cache(self) -> ProgramCache:
        if self._cache is None:
            self._cache = ProgramCache(self.client())
        return self._cache


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
    for name, kwargs in PROFILES.items():
        hypothesis.settings.register_profile(name, **kwargs)
    if not config.getoption("hypothesis_profile", None):
        hypothesis.settings.load_profile(DEFAULT_PROFILE)
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
    state = SessionState(config, spec)
    try:
        state.configure_certification()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from err
    if not _is_xdist_controller(config):
        state.client()  # fail fast: a backend that cannot start is a usage error
    for path in config.getoption("known_failures"):
        try:
            state.known += known_failures.parse(Path(path))
        except (OSError, ValueError) as err:
            raise pytest.UsageError(f"--known-failures={path}: {err}") from err
    config.stash[_STATE] = state
    config.pluginmanager.register(_Recorder(state), "pjrt-conformance-recorder")


def _is_xdist_controller(config: pytest.Config) -> bool:
    """True in the pytest-xdist controller, which runs no tests and opens no client."""
    workers = getattr(config.option, "numprocesses", None)
    return not hasattr(config, "workerinput") and workers not in (None, 0)


def _state(config: pytest.Config) -> SessionState:
    return config.stash[_STATE]


def pytest_report_header(config: pytest.Config) -> list[str]:
    s = _state(config)
    errors = [f"PJRT plugin failed to load: {cause}" for cause in
              xla_bridge.plugin_errors().values()]
    return errors + [f"pjrt-conformance {conformance.__version__}: platform={s.platform}, "
            f"cpu-devices={s.cpu_devices}, hypothesis profile={hypothesis.settings._current_profile}, "
            f"jax {_compat.JAX_VERSION}, jaxlib {_compat.JAXLIB_VERSION}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        client = _state(metafunc.config).client()
        devices = client.local_devices()
        metafunc.parametrize("device", devices, ids=[f"{d.platform}:{d.id}" for d in devices])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = _state(config)
    state.collected_here = True  # not on a pytest-xdist controller
    known_failures.apply(items, state.known, state.platform)
    for item in items:
        item.user_properties.append((report.TIER_PROPERTY, state.tier(item)))
    target = config.getoption("write_profile")
    if target:
        tests = {profiles.profile_id(i.nodeid): profiles.tier_of(list(i.iter_markers()))
                 for i in items}
        name = Path(target).stem
        version = int("".join(c for c in name if c.isdigit()) or 1)
        Path(target).write_text(profiles.canonical_text(name, version, tests))


def pytest_collection_finish(session: pytest.Session) -> None:
    s = _state(session.config)
    rep = session.config.pluginmanager.get_plugin("terminalreporter")
    if s.platform_info and rep is not None:
        p = s.platform_info
        rep.write_line(f"platform: {p['name']} ({p['platform_version']}), "
                       f"{p['local_device_count']} device(s): {', '.join(p['device_kinds'])}")


@pytest.fixture(scope="session")
def client(request: pytest.FixtureRequest) -> Any:
    """The runtime client of the platform under test (one per session)."""
    return _state(request.config).client()


@pytest.fixture(scope="session")
def num_processes(request: pytest.FixtureRequest) -> int:
    """``--num-processes``: processes of the multi_process area."""
    return request.config.getoption("num_processes")


@pytest.fixture(scope="session")
def two_devices(client: Any) -> list[Any]:
    """The client's local devices; skips (mark the test capability multi_device)
    on a platform with fewer than two."""
    if client.local_device_count() < 2:
        pytest.skip(f"needs two devices; {client.platform} has {client.local_device_count()}")
    return client.local_devices()


@pytest.fixture(scope="session")
def xc(client: Any, platform: str) -> Any:
    """The seed's module-level functions for the platform under test
    (``conformance.session.api.module_api``: ``runtime.xla_client`` unless the backend's
    setup registered its own): the areas call ``xc.reorder_shards(...)`` and so on."""
    from conformance.session import api

    return api.module_api(platform)


@pytest.fixture(scope="session")
def platform(request: pytest.FixtureRequest) -> str:
    """The ``--platform`` name."""
    return _state(request.config).platform


@pytest.fixture(scope="session")
def backend_spec(request: pytest.FixtureRequest) -> backend.BackendSpec:
    """The :class:`conformance.session.backend.BackendSpec` of the backend under test."""
    return _state(request.config).spec


@pytest.fixture(scope="session")
def program_cache(request: pytest.FixtureRequest) -> ProgramCache:
    """Executables compiled through runtime, cached per (program, avals, device)."""
    return _state(request.config).program_cache()


@pytest.fixture
def isolated(request: pytest.FixtureRequest):
    """``isolated(snippet, device=..., call=...)`` runs a snippet in a child process."""
    s = _state(request.config)

    def run(snippet: str, *, device: Any, call: str, timeout: float = 120.0) -> str:
        index = [d.id for d in s.client().local_devices()].index(device.id)
        return isolation.run_snippet(snippet, spec=s.spec, device_index=index, call=call,
                                     timeout=timeout)
    return run


def _repro_command(config: pytest.Config, item_path: str, nodeid: str) -> str:
    name = nodeid.split("::", 1)[1] if "::" in nodeid else ""
    path = Path(item_path).resolve()
    if path.parent == Path(conformance.__file__).resolve().parent:
        # Portable: the installed suite, wherever it lives on the reader's machine.
        module = f"conformance.{path.stem}"
        target = f"--pyargs {shlex.quote(f'{module}::{name}' if name else module)}"
    else:
        target = shlex.quote(f"{item_path}::{name}" if name else item_path)
    s = _state(config).spec
    plugin = ""
    if s.plugin_library:
        plugin = f" --plugin-library={shlex.quote(s.plugin_library)}"
        if s.plugin_options:
            plugin += f" --plugin-options={shlex.quote(json.dumps(s.plugin_options))}"
    if s.expect_platform:
        plugin += f" --expect-platform={s.expect_platform}"
    return (f"pytest {target} --platform={s.platform} "
            f"--cpu-devices={s.cpu_devices} "
            f"--num-processes={config.getoption('num_processes')}{plugin} -p no:cacheprovider")


class _Recorder:
    """Feeds every phase report into the session's collector (controller side)."""

    def __init__(self, state: SessionState):
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.location[0] if report.location else report.nodeid.split("::")[0]
        full = str(Path(self.state.config.rootpath, path))
        self.state.collector.add(report, repro_command=_repro_command(self.state.config, full,
                                                                      report.nodeid))


def pytest_testnodedown(node: Any, error: Any) -> None:
    output = getattr(node, "workeroutput", {})
    state = _state(node.config)
    if output.get("pjrt_platform_info"):
        state.platform_info = output["pjrt_platform_info"]
    for key, value in output.get("pjrt_programs", {}).items():
        state.programs[key] = state.programs.get(key, 0) + int(value)


def _git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=Path(conformance.__file__).parent, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def header(state: SessionState) -> dict[str, Any]:
    """Report header: what is needed to reproduce and trust the report."""
    import ml_dtypes
    import scipy

    prof = hypothesis.settings.default
    return {
        "suite": {"name": "pjrt-conformance", "version": conformance.__version__,
                  "git_sha": _git_sha()},
        "platform": (plugin_info.with_framework_version(state.platform_info)
                     if state.platform_info else {"name": state.platform}),
        "requested_platform": state.platform,
        "environment": {"python": _platform.python_version(), "jax": _compat.JAX_VERSION,
                        "jaxlib": _compat.JAXLIB_VERSION, "numpy": np.__version__,
                        "scipy": scipy.__version__, "ml_dtypes": ml_dtypes.__version__,
                        "hypothesis": hypothesis.__version__, "pytest": pytest.__version__,
                        "os": _platform.platform()},
        "hypothesis": {"profile": hypothesis.settings._current_profile,
                       "max_examples": prof.max_examples, "derandomize": prof.derandomize},
        "known_failures": [{"pattern": e.pattern, "requirement": e.requirement,
                            "reason": e.reason, "source": e.source, "matched": e.matched,
                            "active": e.applies(state.platform)} for e in state.known],
        "command": shlex.join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "cpu_devices": state.cpu_devices,
        "num_processes": state.config.getoption("num_processes"),
        "programs": dict(state.programs),
        "started_utc": state.started.isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - state.t0, 2),
    }


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # pytest-xdist worker: hand facts to the controller
        workeroutput["pjrt_platform_info"] = state.platform_info
        workeroutput["pjrt_programs"] = state.program_counts()
        return
    for key, value in state.program_counts().items():  # in-process run (no workers)
        state.programs[key] += value
    out = session.config.getoption("report_dir")
    if not out:
        return
    doc = report.build(list(state.collector.results.values()),
                       collected=session.testscollected, header=header(state),
                       profile=state.profile, declared=tuple(state.declared),
                       waivers=tuple(state.waivers),
                       device_count=state.platform_info.get("local_device_count", 1))
    state.written = (doc, bundle.write(doc, Path(out)))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    written = getattr(state, "written", None)
    if written:
        doc, path = written
        terminalreporter.write_line(f"pjrt-conformance verdict: {doc['verdict']} "
                                    f"({'; '.join(doc['verdict_reasons']) or 'all checks passed'})"
                                    f" -- report: {path}")
    if state is None or not state.collected_here:
        return
    unmatched = [e for e in state.known
                 if e.applies(state.platform) and e.file_collected and not e.matched]
    for e in unmatched:
        terminalreporter.write_line(f"known-failures entry matched no test: {e.pattern} "
                                    f"({e.source})")
