"""A full disk (or any failed write of the run's own files) during a run: one line, an
exit code of its own, and what was written stays finalizable (issue 27 item 8).

ENOSPC while pytest-reportlog appended to ``results.jsonl``, or while the bundle was
written, ended the run in tracebacks and exit 1 (read as "not certified"). Now:

- a write of a phase report that fails (:class:`Guard`, in the process that merges
  results) stops the run as a cancel does (:func:`conformance.processes.lifetime.stop`);
- a bundle that cannot be written (:func:`write_failed`, called by the recorder)
  leaves the results log and ``run.json``, removes the unfinished manifest, and notes
  the error in the session state, so ``pjrt-conformance run`` exits
  :data:`EXIT_WRITE_FAILED` with that line, and ``pjrt-conformance finalize DIR``
  builds the incomplete bundle once space is free.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

#: Exit status of ``pjrt-conformance run`` when the report bundle could not be written.
EXIT_WRITE_FAILED = 5
#: errno values that mean "no space": the run stops rather than going on without a log.
NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def describe(out: Path | str, err: OSError) -> str:
    """The one line of a failed write of run directory ``out``."""
    return (f"{out}: cannot write the run's files ({err.strerror or err}); the results "
            f"written so far are kept: free space and run 'pjrt-conformance finalize {out}'")


class Guard:
    """Catches a failed write of a phase report (pytest-reportlog's results.jsonl)."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        try:
            return (yield)
        except OSError as err:
            return self._failed(err)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> Any:
        try:
            return (yield)
        except OSError as err:
            return self._failed(err)

    def _failed(self, err: OSError) -> None:
        """No space: pytest-reportlog writes no more, the run stops as a cancel does."""
        if err.errno not in NO_SPACE:
            raise err
        from conformance.processes import lifetime
        from conformance.session import session_state
        from conformance.session.run_options import run_options

        state = self.config.stash.get(session_state.KEY, None)
        if state is not None and state.write_error is None:
            state.write_error = describe(run_options(self.config).report_dir, err)
        log = getattr(self.config, "_report_log_plugin", None)
        if log is not None:
            self.config.pluginmanager.unregister(log)
            self.config._report_log_plugin = None
            try:
                log.close()
            except OSError:
                pass
        lifetime.stop(self.config, f"a full disk ({err.strerror})")


#: A failed write of ``run.json`` as the run began (before any test): its one line.
START_FAILED = pytest.StashKey[str]()


def start_failed(config: pytest.Config, out: Path | str, err: OSError) -> str:
    """Note that ``run.json`` of ``out`` could not be written as the run began (``err``),
    and return the line for a :class:`pytest.UsageError`: nothing ran, so nothing is
    kept; ``pjrt-conformance run`` exits :data:`EXIT_WRITE_FAILED` with it
    (:func:`start_failure`)."""
    line = (f"{out}: cannot write run.json as the run begins ({err.strerror or err}); no "
            "test ran: free space and run the same command again")
    config.stash[START_FAILED] = line
    return line


def start_failure(config: pytest.Config) -> str | None:
    """The line of :func:`start_failed`, or None."""
    return config.stash.get(START_FAILED, None)


def write_failed(config: pytest.Config, out: Path, err: OSError) -> str:
    """Note that the bundle of ``out`` could not be written (``err``); remove its
    unfinished manifest (finalize refuses a directory with one); return the line."""
    from conformance.certification.bundle import bundle_files
    from conformance.session import session_state

    line = describe(out, err)
    try:
        (Path(out) / bundle_files.MANIFEST).unlink(missing_ok=True)
    except OSError:
        pass
    state = config.stash.get(session_state.KEY, None)
    if state is not None:
        state.write_error = state.write_error or line
    return line
