"""Fixtures of the conformance suite: ``client``, ``platform``, ``backend_spec``,
``program_cache``, ``num_processes``, ``two_devices``, ``float_controls`` and ``isolated``
(``xc`` lives in :mod:`conformance.session.pytest_plugin`)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.helpers import float_control_modes
from conformance.processes import isolation
from conformance.programs.compiled_programs import ProgramCache
from conformance.session import backend
from conformance.session import session_state
from conformance.session.run_options import run_options


@pytest.fixture(scope="session")
def client(request: pytest.FixtureRequest) -> Any:
    """The runtime client of the platform under test (one per session)."""
    return session_state.of(request.config).client()


@pytest.fixture(scope="session")
def num_processes(request: pytest.FixtureRequest) -> int:
    """``--num-processes``: processes of the multi_process area."""
    return run_options(request.config).num_processes


@pytest.fixture(scope="session")
def two_devices(client: Any) -> list[Any]:
    """The client's local devices; skips (mark the test capability multi_device)
    on a platform with fewer than two."""
    if client.local_device_count() < 2:
        pytest.skip(f"needs two devices; {client.platform} has {client.local_device_count()}")
    return client.local_devices()


@pytest.fixture(scope="session")
def platform(request: pytest.FixtureRequest) -> str:
    """The ``--platform`` name."""
    return session_state.of(request.config).platform


@pytest.fixture(scope="session")
def backend_spec(request: pytest.FixtureRequest) -> backend.BackendSpec:
    """The :class:`conformance.session.backend.BackendSpec` of the backend under test."""
    return session_state.of(request.config).spec


@pytest.fixture(scope="session")
def float_controls(request: pytest.FixtureRequest,
                   client: Any) -> float_control_modes.FloatControls:
    """The backend's declared denormal handling (``--float-controls``, see
    :mod:`conformance.helpers.float_control_modes`), resolved once for the session
    (:meth:`conformance.session.session_state.SessionState.float_controls`); every check that may
    accept a flushed subnormal takes it as an argument."""
    controls = session_state.of(request.config).float_controls()
    if controls is None:   # never: the client fixture opened the client and described it
        raise RuntimeError("float_controls: the client under test was not described")
    return controls


@pytest.fixture(scope="session")
def program_cache(request: pytest.FixtureRequest) -> ProgramCache:
    """Executables compiled through runtime, cached per (program, avals, device)."""
    return session_state.of(request.config).program_cache()


@pytest.fixture(scope="session")
def isolated(request: pytest.FixtureRequest):
    """``isolated(snippet, device=..., call=...)`` runs a snippet in a child process
    (session-scoped: it holds no state, and Hypothesis tests take it too)."""
    s = session_state.of(request.config)

    def run(snippet: str, *, device: Any, call: str, timeout: float = 120.0) -> str:
        index = [d.id for d in s.client().local_devices()].index(device.id)
        return isolation.run_snippet(snippet, spec=s.spec, device_index=index, call=call,
                                     timeout=timeout)
    return run
