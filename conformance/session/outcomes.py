"""The status and failure facts of one test phase, from what pytest caught.

The status comes from the exception's *type* (``call.excinfo``), never from
pytest's failure text:

- :class:`~conformance.helpers.capabilities.NotSupported` -> ``not_supported``,
  any other skip -> ``skipped``;
- :class:`~conformance.helpers.assertions.BackendCrash` -> ``crash``;
- :class:`~conformance.processes.isolation.BackendHang`, or pytest-timeout's
  failure (raised from its signal handler) -> ``timeout``;
- an ``AssertionError`` in the test call -> ``fail_wrong_result`` (a failed check); a
  :class:`~conformance.helpers.assertions.SpecPropertyViolation` (a result outside what
  the spec allows for any execution) also sets ``spec_property`` in the outcome record,
  so that a re-run that passes leaves it ``fail_wrong_result``, not ``flaky``;
- anything else -> ``fail_error`` (also setup/teardown errors, and a strict XPASS).

An exception group (Hypothesis found several distinct failures) is a ``crash``
or ``timeout`` if one member is, ``fail_wrong_result`` if every member is, and
``fail_error`` otherwise. The facts of a failure are data attached at the source:
the :class:`~conformance.helpers.reproduction.Reproduction` of the exception and
the notes Hypothesis adds (its failing test case and ``@reproduce_failure`` blob).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.helpers import reproduction, ulp_stats
from conformance.helpers.assertions import BackendCrash, SpecPropertyViolation
from conformance.helpers.capabilities import NotSupported
from conformance.processes.isolation import BackendHang
from conformance.programs import compiler_pass
from conformance.programs import sequence_script

#: How Hypothesis' note of the failing example begins (6.1xx, and older versions).
_EXAMPLE_PREFIXES = ("Failing test case: ", "Falsifying example: ",
                     "Falsifying explicit example: ")
_BLOB = "@reproduce_failure("


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions of ``exc``: the members of a group, and in place of a wrapper that
    Hypothesis puts around a BaseException in its ``FlakyFailure`` (pytest-timeout's
    failure is one: a timeout that did not recur when Hypothesis replayed the example)
    the exception it wraps."""
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            yield from _leaves(member)
    elif type(exc).__name__ == "_WrappedBaseException" and exc.__cause__ is not None:
        yield from _leaves(exc.__cause__)
    else:
        yield exc


def _from_pytest_timeout(exc: BaseException) -> bool:
    """True when ``exc`` was raised by pytest-timeout's signal handler."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "pytest_timeout":
            return True
        tb = tb.tb_next
    return False


def _leaf_status(exc: BaseException, when: str) -> str:
    if isinstance(exc, BackendCrash):
        return "crash"
    if isinstance(exc, BackendHang) or _from_pytest_timeout(exc):
        return "timeout"
    if when == "call" and isinstance(exc, AssertionError):
        return "fail_wrong_result"
    return "fail_error"


def status(exc: BaseException | None, *, when: str, outcome: str) -> str:
    """Status of one phase: ``exc`` the exception it raised (None if none),
    ``when`` ``setup``/``call``/``teardown``, ``outcome`` the report's outcome."""
    if exc is None:
        return {"passed": "pass", "skipped": "skipped"}.get(outcome, "fail_error")
    if isinstance(exc, NotSupported):
        return "not_supported"
    if isinstance(exc, pytest.skip.Exception):
        return "skipped"
    statuses = {_leaf_status(e, when) for e in _leaves(exc)}
    for worst in ("crash", "timeout"):
        if worst in statuses:
            return worst
    return "fail_wrong_result" if statuses == {"fail_wrong_result"} else "fail_error"


def _hypothesis_notes(exc: BaseException) -> list[str]:
    """Hypothesis' notes on ``exc``: from its failing example to the end."""
    notes = [str(n) for n in getattr(exc, "__notes__", ())]
    start = next((i for i, n in enumerate(notes) if n.startswith(_EXAMPLE_PREFIXES)), None)
    return [] if start is None else notes[start:]


def _example_and_blob(notes: list[str]) -> tuple[str | None, str | None]:
    if not notes:
        return None, None
    blob_at = next((i for i, n in enumerate(notes) if _BLOB in n), len(notes))
    first = notes[0]
    for prefix in _EXAMPLE_PREFIXES:
        first = first.removeprefix(prefix)
    example = "\n".join([first] + notes[1:blob_at]).strip()
    blob = None
    if blob_at < len(notes):
        text = notes[blob_at][notes[blob_at].index(_BLOB):]
        blob = text[:text.index(")") + 1] if ")" in text else text
    return example, blob


def failure_facts(exc: BaseException) -> dict[str, Any]:
    """``reproduction`` (the note and Hypothesis' failing example and blob),
    ``inputs``, ``program_text``, ``arrays``, ``falsifying_example``, ``hypothesis_blob``
    ``ulp_errors`` (:func:`conformance.helpers.ulp_stats.ulp_histogram`) and
    ``compiler_pass`` (:func:`conformance.programs.compiler_pass.find`'s finding),
    ``sequence`` (a failing sequence's standalone script,
    :func:`conformance.programs.sequence_script.of`)
    of a failure (None where absent; members of a group: the first that has them)."""
    leaves = list(_leaves(exc))
    repro = next((r for r in map(reproduction.of, leaves) if r is not None), None)
    notes = next((n for n in map(_hypothesis_notes, leaves) if n), [])
    example, blob = _example_and_blob(notes)
    parts = ([repro.note()] if repro else []) + [n.strip() for n in notes]
    return {"reproduction": "\n".join(parts), "inputs": repro.inputs if repro else None,
            "program_text": repro.program if repro else None,
            "arrays": repro.arrays() if repro else None,
            "falsifying_example": example, "hypothesis_blob": blob,
            "ulp_errors": next((u for u in map(ulp_stats.of, leaves) if u), None),
            "compiler_pass": next((c for c in map(compiler_pass.of, leaves) if c), None),
            "sequence": next((q for q in map(sequence_script.of, leaves) if q), None)}


def group_message(exc: BaseException) -> str | None:
    """For an exception group (Hypothesis found several distinct failures): its own
    line, then ``first: <type>: <message>`` of its first member, so that the report
    heads the group by a real failure. None for a single exception."""
    if not isinstance(exc, BaseExceptionGroup):
        return None
    first = next(_leaves(exc))
    return (f"{type(exc).__name__}: {exc}\nfirst: {type(first).__name__}: "
            f"{str(first).strip()}")


def of_phase(call: pytest.CallInfo[Any], report: pytest.TestReport) -> dict[str, Any]:
    """The outcome record of one phase: ``status``; for failures the facts of
    :func:`failure_facts` (and ``spec_property``: True for a wrong result that broke a
    spec property), for ``not_supported`` the ``message``."""
    exc = call.excinfo.value if call.excinfo is not None else None
    record: dict[str, Any] = {"status": status(exc, when=call.when, outcome=report.outcome)}
    if record["status"] == "not_supported":
        record["message"] = str(exc.msg)  # "not_supported: <what was refused>"
    elif exc is not None and record["status"] != "skipped":
        record.update(failure_facts(exc))
        if group_message(exc):
            record["message"] = group_message(exc)
        if record["status"] == "timeout":   # the timeout's own line (the limit), first
            record["message"] = timeout_message(exc)
        if record["status"] == "fail_wrong_result" and spec_property(exc):
            record["spec_property"] = True
    return record


def timeout_message(exc: BaseException) -> str:
    """The message of a ``timeout``: the timeout's own line (pytest-timeout:
    ``Timeout (>600.0s) from pytest-timeout.``, the limit), then the group it came in
    (Hypothesis' FlakyFailure: it did not recur when the example was replayed)."""
    leaf = next((e for e in _leaves(exc) if isinstance(e, BackendHang)
                 or _from_pytest_timeout(e)), exc)
    text = f"timed out: {type(leaf).__name__}: {str(leaf).strip()}"
    group = group_message(exc)
    return text + (f"\n(in {group.splitlines()[0]})" if group else "")


def spec_property(exc: BaseException) -> bool:
    """True when ``exc`` (or a member of its group) is a
    :class:`~conformance.helpers.assertions.SpecPropertyViolation`."""
    return any(isinstance(e, SpecPropertyViolation) for e in _leaves(exc))
