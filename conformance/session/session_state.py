"""The per-session state of the pytest plugin: the one client, the run's options
(:class:`conformance.session.run_options.RunOptions`) and the merged results. One :class:`SessionState` per pytest process, in
``config.stash`` (get it with :func:`of`)."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.certification.catalog import defect_catalog
from conformance.certification.provenance import package_nodeid
from conformance.certification.catalog import known_failures
from conformance.certification.catalog import profiles
from conformance.certification.results import records
from conformance.certification.catalog import waivers
from conformance.helpers import float_control_modes
from conformance.programs.compiled_programs import ProgramCache
from conformance.session import backend
from conformance.session.run_options import RunOptions

KEY = pytest.StashKey["SessionState"]()


def of(config: pytest.Config) -> "SessionState":
    """The session state of ``config`` (KeyError before the plugin configured it)."""
    return config.stash[KEY]


class SessionState:
    """Per-session state: the one client, results, header facts."""

    def __init__(self, options: RunOptions, spec: backend.BackendSpec):
        self.options = options
        self.spec: backend.BackendSpec = spec
        self.platform: str = spec.platform
        self.cpu_devices: int = spec.cpu_devices
        self.collector = records.Collector()
        self.known: list[known_failures.Entry] = []
        self.platform_info: dict[str, Any] = {}
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.t0 = time.monotonic()
        self._client: Any = None
        self._cache: ProgramCache | None = None
        self.written: tuple[dict, Path] | None = None
        #: One line when the run's own files could not be written (a full disk).
        self.write_error: str | None = None
        self.profile: profiles.Profile | None = None
        self.declared: list[str] = []
        self.waivers: list[waivers.Waiver] = []
        #: Programs compiled and executables served from the cache, summed over workers.
        self.programs: dict[str, int] = {"compiles": 0, "cache_hits": 0}
        self._float_controls: float_control_modes.FloatControls | None = None
        self._missing: dict[str, str] | None = None

    def program_counts(self) -> dict[str, int]:
        """This process's ProgramCache counters (zeros when no program ran here)."""
        cache = self._cache
        return {"compiles": cache.compiles if cache else 0,
                "cache_hits": cache.hits if cache else 0}

    def add_programs(self, counts: dict[str, int]) -> None:
        """Add one process's ``compiles`` and ``cache_hits`` to the run's totals."""
        for key, value in counts.items():
            self.programs[key] = self.programs.get(key, 0) + int(value)

    def configure_certification(self) -> None:
        """Load --profile, --declare/--declare-file, --waivers, the defect catalog
        (--defects) and --known-failures; check --reference-timeout (ValueError naming the
        option if bad)."""
        opt = self.options
        if opt.profile != "none":
            self.profile = profiles.load(opt.profile)
        self.declared = profiles.parse_declared(list(opt.declare))
        if opt.declare_file is not None:
            try:
                extra = profiles.read_declare_file(opt.declare_file)
            except OSError as err:
                raise ValueError(f"--declare-file: {err}") from err
            self.declared += [c for c in extra if c not in self.declared]
        if opt.waivers is not None:
            self.waivers = waivers.parse(opt.waivers)
        if opt.reference_timeout is not None and opt.reference_timeout <= 0:
            raise ValueError(f"--reference-timeout must be > 0 seconds, got "
                             f"{opt.reference_timeout}")
        self.known = defect_catalog.entries(defect_catalog.load(opt.defects))
        for path in opt.known_failures:
            try:
                self.known += (defect_catalog.entries(defect_catalog.load([str(path)]))
                               if str(path).endswith(".toml") else known_failures.parse(path))
            except (OSError, ValueError) as err:
                raise ValueError(f"--known-failures={path}: {err}") from err

    @property
    def plugin_library(self) -> bool:
        """The backend was loaded from ``--plugin-library`` (a catalog condition)."""
        return self.spec.plugin_library is not None

    def tier(self, item: pytest.Item) -> str:
        """The item's tier: the profile's, else its own markers'."""
        own = profiles.tier_of(list(item.iter_markers()))
        if self.profile is None:
            return own
        return self.profile.tier(profiles.profile_id(
            package_nodeid(item.nodeid, str(item.path)))) or own

    def client(self) -> Any:
        """The client of the platform under test, opened once (pytest.UsageError if it
        cannot start)."""
        if self._client is None:
            try:
                self._client = self.spec.open()
            except RuntimeError as err:
                raise pytest.UsageError(str(err) if str(err).startswith("--platform")
                                        else f"--platform={self.platform}: {err}") from err
            self.platform_info = backend.describe(self._client, self.spec)
        return self._client

    def float_controls(self) -> float_control_modes.FloatControls | None:
        """The run's float-controls declaration, resolved once for the session (the one
        resolution point: the ``float_controls`` fixture hands it to the checks, the report
        records it): ``--float-controls`` as given, ``auto`` resolved from the facts of the
        client under test (:attr:`platform_info`: its name and whether it is a PJRT C API
        plugin's client). None while no client was described."""
        if self._float_controls is None and self.platform_info:
            declared = float_control_modes.parse(self.options.float_controls
                                                 or float_control_modes.AUTO)
            self._float_controls = float_control_modes.for_platform(
                declared, self.platform_info.get("name"),
                bool(self.platform_info.get("using_pjrt_c_api")))
        return self._float_controls

    def missing_capabilities(self) -> dict[str, str]:
        """Capabilities the backend under test lacks for certain, known without running a
        test: name -> why (``multi_device``: fewer than two local devices). A test that
        needs one of them is ``not_supported`` before it runs
        (:func:`conformance.helpers.capabilities.check_required`). Worked out once."""
        if self._missing is None:
            client = self.client()
            count = client.local_device_count()
            self._missing = {} if count >= 2 else {
                "multi_device": f"{client.platform} has {count} local device"}
        return self._missing

    def program_cache(self) -> ProgramCache:
        """The session's ProgramCache over :meth:`client`."""
        if self._cache is None:
            self._cache = ProgramCache(self.client())
        return self._cache
