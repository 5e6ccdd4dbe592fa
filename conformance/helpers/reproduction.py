"""One reproduction note per failure, attached by one context manager."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

_MAX_PROGRAM_CHARS = 4000


def describe_inputs(arrays: list[np.ndarray]) -> str:
    parts = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        text = np.array2string(a, threshold=32, max_line_width=120)
        parts.append(f"  arg{i}: {a.dtype}{list(a.shape)} = {text}")
    return "\n".join(parts)


@contextlib.contextmanager
def reproduction(call: str, *, program: str | None = None,
                 inputs: list[np.ndarray] | None = None) -> Iterator[None]:
    """On an exception inside the block, attach the call, inputs and program text.

    The note reaches the pytest report and the certification report's failure
    entry. Skips (pytest outcomes) pass through untouched.
    """
    try:
        yield
    except Exception as err:
        lines = [f"Reproduction: {call}"]
        if inputs is not None:
            lines.append(describe_inputs(inputs))
        if program is not None:
            text = program if len(program) <= _MAX_PROGRAM_CHARS else (
                program[:_MAX_PROGRAM_CHARS] + "\n  ... (truncated)")
            lines.append("  program (StableHLO):\n" + text)
        err.add_note("\n".join(lines))
        raise
