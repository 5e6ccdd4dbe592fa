"""Hypothesis' derandomized seeds of the suite's tests, independent of the working directory.

Hypothesis' pytest plugin adds the item's ``nodeid`` to the digest from which a
derandomized (``ci`` profile) test draws its seed, for every parametrized test.
The nodeid is relative to pytest's rootdir, which depends on where pytest runs
(``pytest --pyargs conformance`` from another directory gives ``::test_x[...]``
or ``../site-packages/conformance/...``), so the drawn examples depended on the
working directory. This hook replaces that key, just before the test runs, with
the id the test has when run from the repository root
(``conformance/test_x.py::test_y[params]``), so every directory draws the same
examples as the committed reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_PACKAGE = Path(__file__).resolve().parent


def stable_nodeid(item: pytest.Item) -> str:
    """``conformance/<file relative to this package>::<name[params]>`` of ``item``."""
    try:
        rel = Path(item.path).resolve().relative_to(_PACKAGE).as_posix()
    except ValueError:  # not a file of this package: keep pytest's id
        return item.nodeid
    return f"conformance/{rel}::{item.nodeid.split('::', 1)[1]}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Runs inside Hypothesis' own ``pytest_runtest_call`` wrapper, after it set the key."""
    inner = getattr(getattr(getattr(item, "obj", None), "hypothesis", None), "inner_test", None)
    if inner is not None and hasattr(inner, "_hypothesis_internal_add_digest"):
        inner._hypothesis_internal_add_digest = stable_nodeid(item).encode()
