"""What a rewriting mutant did to the programs its child run compiled, for the runner.

The runner names a file in ``PJRT_MUTANT_REWRITE_LOG``; every compile through a rewriting
mutant (in the child pytest or any process it starts) appends one JSON line
``{"mutant", "program", "outcome", "message"}``. :func:`problem` then says whether the
mutant's rewrite did anything: a run where it changed no program, or raised
:class:`~tests.mutants.stablehlo_rewrite.NoOpRewrite`, is a no-op mutant, reported as an error
instead of a survivor or a kill.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ENV = "PJRT_MUTANT_REWRITE_LOG"
CHANGED, SKIPPED, NO_OP, FAILED = "changed", "skipped", "no-op", "failed"


def record(mutant: str, program: str, outcome: str, message: str = "") -> None:
    """Append one compile's ``outcome`` (CHANGED, SKIPPED: nothing selected, NO_OP,
    FAILED: the rewrite raised) to the file named by ``$PJRT_MUTANT_REWRITE_LOG`` (nothing
    when unset). Raises ValueError for an unknown outcome."""
    if outcome not in (CHANGED, SKIPPED, NO_OP, FAILED):
        raise ValueError(f"argument 'outcome': expected one of {CHANGED!r}, {SKIPPED!r}, "
                         f"{NO_OP!r}, {FAILED!r}, got {outcome!r}")
    path = os.environ.get(ENV)
    if not path:
        return
    line = json.dumps({"mutant": mutant, "program": program, "outcome": outcome,
                       "message": message}) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


def problem(path: Path, mutant: str) -> str | None:
    """Why ``mutant``'s rewrite was a no-op in the run logged at ``path`` ("NoOpRewrite:
    ..." naming the mutant) or broke ("RewriteError: ..."), or None when it changed at
    least one program and never raised. A missing or empty log means it compiled
    nothing: a problem too. (A rewrite that raises makes its test fail: that failure is
    the mutant's bug, not a kill.)"""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    entries = [json.loads(line) for line in lines if line.strip()]
    entries = [e for e in entries if e["mutant"] == mutant]
    for e in entries:
        if e["outcome"] == NO_OP:
            return f"NoOpRewrite: {e['message']} (program {e['program'] or '?'})"
        if e["outcome"] == FAILED:
            return (f"RewriteError: mutant {mutant}: its rewrite raised on program "
                    f"{e['program'] or '?'}: {e['message']}")
    if not any(e["outcome"] == CHANGED for e in entries):
        names = sorted({e["program"] or "?" for e in entries})
        return (f"NoOpRewrite: mutant {mutant}: its rewrite changed none of the "
                f"{len(entries)} programs it compiled ({', '.join(names[:8]) or 'none'}): "
                f"it selected no operation in any of them")
    return None
