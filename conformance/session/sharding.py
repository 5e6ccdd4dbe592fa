"""``--shard I/N`` in a pytest session: keep this shard's tests, record the plan.

:func:`configure` (called by the suite's plugin) checks ``--shard`` and
``--shard-durations`` and, with ``--shard``, registers :class:`ShardPlugin`. In each
process that collects tests (the only process, or every pytest-xdist worker, which
all collect the same items) its last ``pytest_collection_modifyitems`` hook takes the
selected items -- after ``-k``, ``-m`` and the paths given -- plans the split with
:func:`conformance.certification.bundle.shards.plan` and deselects the other shards' tests.
The plan's facts (:func:`conformance.certification.bundle.shards.record`) reach the process
that writes the report through pytest-xdist's ``workeroutput``; :func:`section` is
the report's ``shard`` key. A run killed before a worker finished
(``pjrt-conformance finalize``) has no ``shard`` key, so it cannot be merged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.certification.bundle import shards
from conformance.certification.provenance import package_nodeid
from conformance.session import validate
from conformance.session.run_options import run_options

_KEY = pytest.StashKey[dict[str, Any]]()
_OUTPUT = "pjrt_shard"
_ERROR = pytest.StashKey[str]()   # a --shard usage error found after collection
_ERROR_OUTPUT = "pjrt_shard_error"


def check_options(shard: str | None, durations: str | None) -> tuple[
        shards.Shard | None, Path | None]:
    """The parsed ``--shard`` and the durations file it uses (None, None without
    ``--shard``). Raises :class:`conformance.session.validate.OptionError` (one line)
    for a bad ``--shard`` value or an unreadable ``--shard-durations``, and for
    ``--shard-durations`` without ``--shard``."""
    if shard is None:
        if durations is not None:
            raise validate.OptionError("--shard-durations needs --shard I/N")
        return None, None
    try:
        spec = shards.parse(shard)
        path = shards.durations_path(durations or shards.DEFAULT_DURATIONS)
        shards.load_durations(path)
    except ValueError as err:
        raise validate.OptionError(str(err)) from None
    return spec, path


def configure(config: pytest.Config, profile: dict[str, Any] | None) -> None:
    """Check the shard options and, with ``--shard``, register :class:`ShardPlugin`
    (``profile``: the run's profile header, or None). Raises OptionError."""
    opts = run_options(config)
    spec, path = check_options(opts.shard, opts.shard_durations)
    if spec is not None:
        config.pluginmanager.register(ShardPlugin(spec, path, profile), "pjrt-conformance-shard")


class ShardPlugin:
    """Deselects the other shards' tests and carries the plan to the report."""

    def __init__(self, spec: shards.Shard, durations: Path, profile: dict[str, Any] | None):
        self.spec, self.durations_file, self.profile = spec, durations, profile

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        ids = [package_nodeid(i.nodeid, str(i.path)) for i in items]
        try:
            shards.check_count(self.spec, len(ids))
        except ValueError as err:
            if not hasattr(config, "workerinput"):
                raise pytest.UsageError(str(err)) from None
            # A pytest-xdist worker: a UsageError here is the controller's INTERNALERROR.
            # Nothing runs; the controller gets the error (pytest_testnodedown) and the
            # run ends as a usage error with no report (:func:`usage_error`).
            config.hook.pytest_deselected(items=list(items))
            items[:] = []
            config.stash[_ERROR] = str(err)
            return
        groups = shards.plan(ids, self.spec.count, shards.load_durations(self.durations_file))
        group = groups[self.spec.index - 1]
        keep = set(group.ids)
        dropped = [i for i, nid in zip(items, ids) if nid not in keep]
        items[:] = [i for i, nid in zip(items, ids) if nid in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        config.stash[_KEY] = shards.record(self.spec, ids, group, self.durations_file,
                                           self.profile)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        worker = getattr(session.config, "workeroutput", None)
        if worker is not None and _KEY in session.config.stash:
            worker[_OUTPUT] = session.config.stash[_KEY]
        if worker is not None and _ERROR in session.config.stash:
            worker[_ERROR_OUTPUT] = session.config.stash[_ERROR]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        found = getattr(node, "workeroutput", {}).get(_OUTPUT)
        if found is not None:
            node.config.stash[_KEY] = found
        problem = getattr(node, "workeroutput", {}).get(_ERROR_OUTPUT)
        if problem is not None:
            node.config.stash[_ERROR] = problem


def usage_error(config: pytest.Config) -> str | None:
    """The ``--shard`` usage error a pytest-xdist worker found once it collected (more
    shards than tests: :func:`conformance.certification.bundle.shards.check_count`), or
    None. The recording writes no report for such a run, and ``pjrt-conformance run``
    prints it and exits 2."""
    return config.stash.get(_ERROR, None)


def section(config: pytest.Config) -> dict[str, Any]:
    """``{"shard": <record>}`` for the report of a ``--shard`` run whose plan is known,
    else ``{}``."""
    found = config.stash.get(_KEY, None)
    return {"shard": found} if found is not None else {}
