"""``OptionError``: the one exception for a bad option value, below every layer.

The session's up-front checks (:mod:`conformance.session.validate`, which re-exports
it), the cluster resolution of the multi-host mode (:mod:`conformance.processes.cluster`)
and the CLI raise it; ``pjrt-conformance run`` prints it and exits 2, the pytest plugin
raises it as ``pytest.UsageError``. It imports nothing, so any layer may raise it.
"""

from __future__ import annotations


class OptionError(ValueError):
    """A bad option value: one line naming the option, the value and what is accepted."""


#: The most characters of a bad value an error message quotes.
QUOTE_LIMIT = 200


def shown(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``value`` as an error message quotes it: its ``str`` (``repr`` for a non-string),
    cut to ``limit`` characters with the count of those left out, so that a 170 kB value
    never fills the terminal (``'[[[[...' (170,000 characters, the first 200 shown)``)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters, the first {limit} shown)"
