"""One reproduction note per failure, attached by one context manager.

The note is data as well as text: :func:`reproduction` sets the failing
exception's ``pjrt_reproduction`` attribute to a :class:`Reproduction`, which the
pytest plugin records in the test's ``user_properties`` (read it back with
:func:`of`); the note added to the exception is what people see in pytest's output.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import numpy as np

_MAX_PROGRAM_CHARS = 4000
ATTRIBUTE = "pjrt_reproduction"


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """The call that failed, its inputs (``describe_inputs`` text, or None) and the
    whole StableHLO program text (or None)."""

    call: str
    inputs: str | None = None
    program: str | None = None

    def note(self) -> str:
        """The note shown under the failure (the program cut at 4000 characters)."""
        lines = [f"Reproduction: {self.call}"]
        if self.inputs is not None:
            lines.append(self.inputs)
        if self.program is not None:
            text = self.program if len(self.program) <= _MAX_PROGRAM_CHARS else (
                self.program[:_MAX_PROGRAM_CHARS] + "\n  ... (truncated)")
            lines.append("  program (StableHLO):\n" + text)
        return "\n".join(lines)


def describe_inputs(arrays: list[np.ndarray]) -> str:
    """One line per array: ``  argN: dtype[shape] = values`` (summarised past 32 elements)."""
    parts = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        text = np.array2string(a, threshold=32, max_line_width=120)
        parts.append(f"  arg{i}: {a.dtype}{list(a.shape)} = {text}")
    return "\n".join(parts)


def of(err: BaseException) -> Reproduction | None:
    """The :class:`Reproduction` attached to ``err`` by :func:`reproduction`, if any."""
    found = getattr(err, ATTRIBUTE, None)
    return found if isinstance(found, Reproduction) else None


@contextlib.contextmanager
def reproduction(call: str, *, program: str | None = None,
                 inputs: list[np.ndarray] | None = None) -> Iterator[None]:
    """On an exception inside the block, attach the call, inputs and program text.

    ``call``: what the block does, e.g. ``"execute(neg, float32) on cpu:0"``;
    ``program``: the StableHLO text it runs; ``inputs``: its host arrays. The
    facts reach the certification report's failure entry as data and the pytest
    output as a note. Skips (pytest outcomes) pass through untouched.
    """
    try:
        yield
    except Exception as err:
        if of(err) is None:  # the innermost block names the call
            repro = Reproduction(call, None if inputs is None else describe_inputs(inputs),
                                 program)
            setattr(err, ATTRIBUTE, repro)
            err.add_note(repro.note())
        raise
