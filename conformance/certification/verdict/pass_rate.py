"""The one definition of *pass rate*, used by the scoreboard and by report.md/report.html.

pass rate = passed / (tests run - not supported - skipped)

A test that ran and did not pass -- a wrong result, an error, a crash, a timeout, a
flaky or a waived test, whoever's fault it is (plugin, framework, suite or unattributed)
-- counts against the rate; a test the backend declined (``not_supported``) or that was
skipped is left out of it, so a plugin is not penalised for an optional feature it does
not claim. :data:`DEFINITION` is the sentence the pages print.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Statuses left out of the denominator.
EXCLUDED = ("not_supported", "skipped")
#: The sentence every page that shows a pass rate prints with it.
DEFINITION = ("pass rate = passed / (tests run - not supported - skipped): wrong results, "
              "errors, crashes, timeouts, flaky and waived tests count as not passing, "
              "whoever's fault (plugin, framework, suite); a rate is 100% only when every "
              "counted test passes.")


def counts_of(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Number of results per ``status`` (report.json ``results`` entries)."""
    out: dict[str, int] = {}
    for r in results:
        out[str(r.get("status"))] = out.get(str(r.get("status")), 0) + 1
    return out


def pass_rate(counts: Mapping[str, int]) -> tuple[int, int]:
    """(passed, counted) of a status -> number mapping (report.json ``summary.by_status``,
    an ``areas`` or ``tiers`` row): counted = all results less ``not_supported`` and
    ``skipped``. Raises ValueError on a negative count."""
    if any(n < 0 for n in counts.values()):
        raise ValueError(f"pass_rate: negative count in {dict(counts)}")
    counted = sum(n for s, n in counts.items() if s not in EXCLUDED)
    return counts.get("pass", 0), counted


def percent(passed: int, total: int) -> str:
    """``passed/total`` as a percentage that never rounds to a claim the counts do not
    make: ``100%`` only when all pass, ``0%`` only when none does (206/207 is ``99.5%``,
    not ``100%``; 1/1000 is ``0.1%``). ValueError when ``total`` <= 0 or ``passed`` is
    outside 0..total."""
    if total <= 0 or not 0 <= passed <= total:
        raise ValueError(f"percent: expected 0 <= passed <= total and total > 0, "
                         f"got passed={passed}, total={total}")
    pct = 100 * passed / total
    if passed in (0, total):
        return f"{pct:.0f}%"
    digits = 0
    while round(pct, digits) in (0, 100) and digits < 6:
        digits += 1
    text = f"{pct:.{digits}f}"
    if float(text) in (0.0, 100.0):  # still rounds to a claim: say so with < / >
        return f"{'>99.9' if pct > 50 else '<0.1'}%"
    return f"{text}%"


def text(counts: Mapping[str, int]) -> str:
    """``passed/counted (pct%)`` of :func:`pass_rate`; ``n/a (none counted)`` when every
    result was skipped or not supported, "" for no results at all."""
    passed, counted = pass_rate(counts)
    if not counts or not sum(counts.values()):
        return ""
    return f"{passed}/{counted} ({percent(passed, counted)})" if counted else \
        "n/a (none counted)"
