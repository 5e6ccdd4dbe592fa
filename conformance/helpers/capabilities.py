"""Capability gating: undeclared features must fail gracefully, never wrongly.

An error (exception) from the backend for a dtype of a capability module
(bf16, f16, f64, fp8, complex, int4) is reported as ``not_supported``; for a
core dtype it is a failure. Wrong results are never gated: only the calls inside
``gated`` are, not the comparisons.

``not_supported`` travels as the exception type :class:`NotSupported` (a pytest
skip), which the plugin classifies by type; its message is for people only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import NoReturn

import pytest

from conformance.helpers import dtype_helpers as dh
from runtime.xla_client import XlaRuntimeError

#: The status name, also the first word of a NotSupported message.
NOT_SUPPORTED = "not_supported"
_GRACEFUL = (XlaRuntimeError, NotImplementedError, TypeError, ValueError)


class NotSupported(pytest.skip.Exception):
    """A capability the backend cleanly refuses: the test's status is ``not_supported``."""


def not_supported(reason: str) -> NoReturn:
    """Skip the current test as ``not_supported`` (message ``not_supported: <reason>``)."""
    if not isinstance(reason, str) or not reason:
        raise TypeError(f"not_supported(reason=...) needs a non-empty str, got {reason!r}")
    raise NotSupported(f"{NOT_SUPPORTED}: {reason}")


@contextlib.contextmanager
def gated(dt: dh.DType, call: str) -> Iterator[None]:
    """Turn a clean backend error for a capability dtype into a ``not_supported`` skip."""
    try:
        yield
    except _GRACEFUL as err:
        if dt.capability is None:
            raise
        first = str(err).splitlines()[0] if str(err) else ""
        not_supported(f"capability {dt.capability} ({dt.name}): {call} raised "
                      f"{type(err).__name__}: {first}")


def param(dt: dh.DType) -> pytest.param:
    """A pytest param for ``dt`` carrying its capability marker."""
    marks = [pytest.mark.capability(dt.capability)] if dt.capability else []
    return pytest.param(dt, id=dt.name, marks=marks)
