"""``OptionError``: the one exception for a bad option value, below every layer.

The session's up-front checks (:mod:`conformance.session.validate`, which re-exports
it), the cluster resolution of the multi-host mode (:mod:`conformance.processes.cluster`)
and the CLI raise it; ``pjrt-conformance run`` prints it and exits 2, the pytest plugin
raises it as ``pytest.UsageError``. It imports nothing, so any layer may raise it.
"""

from __future__ import annotations


class OptionError(ValueError):
    """A bad option value: one line naming the option, the value and what is accepted."""
