"""The op x dtype coverage of a run: what it compiled, executed and compared.

In each test process, :class:`conformance.programs.compiled_programs.ProgramCache` notes every
module it loads (:func:`note_compiled`, compiled or served from its cache) and every
module it runs (:func:`note_executed`); areas that run modules another way call the
same functions. After a test's call phase the recorder takes the test's notes
(:func:`take`): the StableHLO/CHLO ops of those modules with their element types
(:func:`conformance.programs.mlir_ops.ops_of`), as ``{op: {dtype: [compiled,
executed, compared]}}`` with 0/1 entries. *Compared* means the module was executed
and the test then passed or failed on a comparison (``pass``, ``fail_wrong_result``):
a skipped, ``not_supported`` or erroring test compared nothing.

The controller adds the tests' entries (:func:`add`, counts of tests; read from the phase
reports by :func:`conformance.certification.results.coverage_records.collect`) and writes
``coverage`` and ``coverage_gaps`` (:func:`section`) into report.json: the gaps are the
spec ops (``stablehlo_spec_ops.json``) that no test compared, each with a reason.
"""

from __future__ import annotations

from typing import Any

from conformance.programs import mlir_ops

#: user_properties key of a test's coverage entry.
PROPERTY = "pjrt_coverage"
#: Statuses after which an executed module counts as compared.
COMPARED_STATUSES = ("pass", "fail_wrong_result")
#: Why the suite does not test a spec op (ops absent here and never compared are
#: "not tested yet").
NOT_TESTED_REASONS = {
    "collective_broadcast": "CPU compile rejects it (jaxlib 0.10.2, in a 2-partition SPMD "
                            "program): UNIMPLEMENTED: HLO opcode `collective-broadcast` is not "
                            "supported by XLA:CPU ThunkEmitter",
    **{op: f"CPU compile rejects it (jaxlib 0.10.2): UNIMPLEMENTED: HLO opcode `{op}` is not "
           "supported by XLA:CPU ThunkEmitter" for op in ("send", "recv")},
    **{op: "CPU compiles it, but execution blocks waiting for the host: the runtime has no "
           "infeed/outfeed host API to feed or drain it, so no test runs it"
       for op in ("infeed", "outfeed")},
}

_compiled: list[str] = []
_executed: list[str] = []


def note_compiled(module_text: str) -> None:
    """Note that the current test compiled (or loaded from a cache) ``module_text``."""
    _compiled.append(module_text)


def note_executed(module_text: str) -> None:
    """Note that the current test executed ``module_text`` (implies compiled)."""
    _compiled.append(module_text)
    _executed.append(module_text)


def reset() -> None:
    """Forget the notes (before a test's setup)."""
    _compiled.clear()
    _executed.clear()


def take(status: str) -> dict[str, dict[str, list[int]]]:
    """The current test's ``{op: {dtype: [compiled, executed, compared]}}`` (0/1) given
    its ``status``, and :func:`reset`. A module that does not parse is left out."""
    entry: dict[str, dict[str, list[int]]] = {}
    compared = status in COMPARED_STATUSES
    for texts, column in ((set(_compiled), 0), (set(_executed), 1)):
        for text in texts:
            try:
                pairs = mlir_ops.ops_of(text)
            except ValueError:
                continue
            for op, dtype in pairs:
                cell = entry.setdefault(op, {}).setdefault(dtype, [0, 0, 0])
                cell[column] = 1
                if column == 1 and compared:
                    cell[2] = 1
    reset()
    return entry


def add(matrix: dict[str, dict[str, dict[str, int]]],
        entry: dict[str, dict[str, list[int]]]) -> None:
    """Add one test's entry (from :func:`take`) to the run's ``matrix``
    (``{op: {dtype: {"compiled": n, "executed": n, "compared": n}}}``, numbers of tests).
    Raises ValueError for an entry that is not of :func:`take`'s form."""
    for op, dtypes in entry.items():
        for dtype, flags in dtypes.items():
            if not (isinstance(flags, (list, tuple)) and len(flags) == 3):
                raise ValueError(f"entry[{op!r}][{dtype!r}]: expected [compiled, executed, "
                                 f"compared], got {flags!r}")
            cell = matrix.setdefault(op, {}).setdefault(
                dtype, {"compiled": 0, "executed": 0, "compared": 0})
            for key, flag in zip(("compiled", "executed", "compared"), flags):
                cell[key] += int(bool(flag))


def gaps(matrix: dict[str, dict[str, dict[str, int]]],
         declined: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Spec ops that no test compared in any dtype: ``[{"op", "reason"}]``.

    ``declined``: op -> message for ops whose tests the platform declined
    (``not_supported``). Reasons, first that applies: compiled but never executed or
    compared; declined by the platform; :data:`NOT_TESTED_REASONS`; "not tested yet"."""
    out = []
    for op in (o["name"] for o in mlir_ops.spec()["ops"]):
        cells = matrix.get(op, {})
        if any(c["compared"] for c in cells.values()):
            continue
        if any(c["executed"] for c in cells.values()):
            reason = "executed but no test compared its result"
        elif cells:
            reason = "compiled but never executed by a test"
        elif declined and op in declined:
            reason = f"not compilable on this platform: {declined[op]}"
        else:
            reason = NOT_TESTED_REASONS.get(op, "not tested yet")
        out.append({"op": op, "reason": reason})
    return out


def section(matrix: dict[str, dict[str, dict[str, int]]],
            declined: dict[str, str] | None = None) -> dict[str, Any]:
    """The report.json keys ``coverage`` (the matrix, sorted), ``coverage_gaps`` and
    ``coverage_summary`` (``spec``: the spec's source, ``spec_ops``, ``spec_ops_compared``,
    ``cells_compared``: op x dtype cells compared, StableHLO and CHLO)."""
    spec_names = {o["name"] for o in mlir_ops.spec()["ops"]}
    ordered = {op: dict(sorted(matrix[op].items())) for op in sorted(matrix)}
    compared_ops = {op for op, cells in matrix.items()
                    if any(c["compared"] for c in cells.values())}
    return {
        "coverage": ordered,
        "coverage_gaps": gaps(matrix, declined),
        "coverage_summary": {
            "spec": mlir_ops.spec()["source"], "spec_ops": len(spec_names),
            "spec_ops_compared": len(compared_ops & spec_names),
            "cells_compared": sum(1 for cells in matrix.values() for c in cells.values()
                                  if c["compared"])},
    }

