"""The controller's side of the coverage matrix: what the phase reports carry.

A test's coverage entry (:data:`conformance.programs.coverage.PROPERTY`, written in
the test's process by :func:`conformance.programs.coverage.take`) and its outcome
(:data:`conformance.certification.results.records.OUTCOME_PROPERTY`) travel in the phase
report's ``user_properties``; :func:`collect` adds them to the run's matrix and its
declined ops, which :func:`conformance.programs.coverage.section` turns into
report.json's coverage keys.
"""

from __future__ import annotations

from typing import Any

from conformance.certification.results.records import OUTCOME_PROPERTY
from conformance.programs import coverage


def collect(matrix: dict[str, dict[str, dict[str, int]]], declined: dict[str, str],
            nodeid: str, properties: list[tuple[str, Any]]) -> None:
    """Controller side: add a phase report's coverage entry (its ``user_properties``) to
    ``matrix``, and the op of a ``not_supported`` test of the generated op area
    (``test_stablehlo_ops.py``, parameter ids ``<op>-<dtype>...``) to ``declined``."""
    for key, value in properties:
        if key == coverage.PROPERTY:
            coverage.add(matrix, value)
        elif (key == OUTCOME_PROPERTY and isinstance(value, dict)
              and value.get("status") == "not_supported" and "test_stablehlo_ops" in nodeid
              and "[" in nodeid):
            op = nodeid.split("[", 1)[1].split("-", 1)[0]
            declined.setdefault(op, str(value.get("message", "")))
