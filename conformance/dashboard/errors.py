"""The two ways dashboard input can be wrong; each message is one line naming the file."""

from __future__ import annotations


class UsageError(ValueError):
    """An input path is missing or empty (no results to show): exit status 2."""


class MalformedInput(ValueError):
    """An input file exists but is not what it should be (bad JSON, a missing or
    mistyped key): exit status 3."""
