"""The verdict in two parts: the plugin verdict (one function, one rule a reason)
and the stack findings.

The *plugin verdict* is decided by the results attributed to the plugin and the
unattributed ones (:mod:`conformance.certification.attribution.attribution_sources`): a
result attributed to the framework or the suite (with its evidence) is a *stack finding*,
listed with its upstream link, and does not fail the plugin verdict. Wrong results attributed to the
plugin or unattributed are never waivable (:mod:`~conformance.certification.catalog.waivers`).

The plugin is certified only when every rule holds (rules 3 to 5 over the plugin's and
the unattributed results):

1. tests were collected, and
2. every collected test has a result;
3. no test of any tier is ``crash``, ``timeout`` or ``fail_wrong_result``;
4. every ``core`` test and every test of a declared capability is ``pass`` or ``waived``;
5. tests of undeclared capabilities fail gracefully (``pass``, ``not_supported``,
   ``skipped`` or ``waived``, never ``fail_error``);
6. the run holds exactly the tests of its profile (a missing test is a failure);
7. the report has no errors (invalid, expired or misapplied waivers).

A run that was interrupted (cancelled, killed) is ``incomplete`` whatever its results:
its first reason says why, the others are the rules its finished results break.
A ``flaky`` test (failed, then passed on its re-run) is never a pass.
A run on no profile (``--profile none``) is never ``certified``: one that breaks no rule
is ``not a certification`` (exit 1, as ``verify`` says), one that breaks a rule is
``not certified`` as any other.

``verify`` recomputes the verdict with this same function.
"""

from __future__ import annotations

import collections
from typing import Any

from conformance.certification.attribution.attribution_sources import STACK, stack_findings
from conformance.certification.catalog.profiles import CORE, Profile, tier_capabilities

CERTIFIED, NOT_CERTIFIED, INCOMPLETE = "certified", "not certified", "incomplete"
#: The verdict of a run on no profile (``--profile none``) that breaks no rule: it is not
#: a certification (nothing says which tests a certification needs).
NO_PROFILE = "not a certification"
VERDICTS = (CERTIFIED, NOT_CERTIFIED, INCOMPLETE, NO_PROFILE)
#: The first reason of a :data:`NO_PROFILE` verdict.
NO_PROFILE_REASON = ("no profile (--profile none): a run that checks no profile is not a "
                     "certification")
NEVER_ALLOWED = ("crash", "timeout", "fail_wrong_result")
MANDATORY_OK = ("pass", "waived")
_EXAMPLES = 3


def _counts(results: list[dict[str, Any]]) -> str:
    return ", ".join(f"{n} {s}" for s, n in sorted(collections.Counter(
        r["status"] for r in results).items()))


def _examples(items: list[str], limit: int | None = _EXAMPLES) -> str:
    """``items`` joined, the first ``limit`` of them (None: all) and ``(+N)`` more."""
    if limit is None or len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... (+{len(items) - limit})"


def mandatory(tier: str, declared: list[str]) -> bool:
    """Core tests and tests of declared capabilities must pass (or be waived); a test
    needing several capabilities (``capability:bf16+donation``) once every one is
    declared."""
    caps = tier_capabilities(tier)
    return tier == CORE or (bool(caps) and all(c in declared for c in caps))


def decide(results: list[dict[str, Any]], *, collected: int, profile: Profile | None,
           declared: list[str], device_count: int,
           errors: list[str], interrupted: str | None = None,
           examples: int | None = _EXAMPLES) -> tuple[str, list[str]]:
    """(plugin verdict, reasons) for ``results`` (dicts with ``nodeid``, ``tier``,
    ``status`` and, for results that are not a pass, ``attribution``): results attributed
    to the framework or the suite do not count for rules 3 to 5. ``interrupted``: why the
    run stopped early (None: it ran to the end; otherwise the verdict is ``incomplete``);
    each reason names its first ``examples`` test ids (None: all of them)."""
    reasons = [f"run incomplete ({interrupted}): {len(results)} of {collected} collected "
               "test(s) finished"] if interrupted else []

    def _examples_of(items: list[str]) -> str:
        return _examples(items, examples)

    if collected == 0:
        reasons.append("no test was collected")
    if len(results) < collected:
        reasons.append(f"{collected - len(results)} collected tests have no result")
    everything, results = results, [r for r in results if r.get("attribution") not in STACK]
    for status in NEVER_ALLOWED:
        bad = [r["nodeid"] for r in results if r["status"] == status]
        if bad:
            reasons.append(f"{len(bad)} test(s) with status {status}: {_examples_of(bad)}")
    weak = [r for r in results if mandatory(r["tier"], declared)
            and r["status"] not in MANDATORY_OK + NEVER_ALLOWED]
    if weak:
        reasons.append(f"{len(weak)} core or declared-capability test(s) neither pass nor "
                       f"waived ({_counts(weak)}): {_examples_of([r['nodeid'] for r in weak])}")
    rough = [r["nodeid"] for r in results if r["tier"].startswith("capability:")
             and not mandatory(r["tier"], declared) and r["status"] == "fail_error"]
    if rough:
        reasons.append(f"{len(rough)} test(s) of undeclared capabilities raised an error "
                       f"instead of failing gracefully (not_supported): {_examples_of(rough)}")
    if profile is not None:
        missing, unexpected = profile.completeness([r["nodeid"] for r in everything],
                                                   device_count)
        if missing:
            reasons.append(f"{len(missing)} test(s) of profile {profile.name} missing: "
                           f"{_examples_of(missing)}")
        if unexpected:
            reasons.append(f"{len(unexpected)} test(s) not in profile {profile.name}: "
                           f"{_examples_of(unexpected)}")
    reasons += [f"report error: {e}" for e in errors]
    if interrupted:
        return INCOMPLETE, reasons
    if profile is None and not reasons:   # nothing failed, but nothing says what to run
        return NO_PROFILE, [NO_PROFILE_REASON]
    return (NOT_CERTIFIED if reasons else CERTIFIED), reasons


def headline(doc: dict[str, Any], *, upper: bool = False) -> str:
    """``plugin: certified | stack findings: 9 framework defects (5 linked upstream)``,
    followed by `` | 3 plugin failures shared with XLA`` when some are, for a report.json document (``verdict``, and ``stack_findings`` when present);
    ``upper``: the verdict in capitals (``plugin: NOT CERTIFIED | ...``)."""
    f = doc.get("stack_findings") or stack_findings(doc.get("results", []))
    parts = [f"{f[a]} {a} defect{'s' if f[a] != 1 else ''}" for a in STACK if f[a]]
    stack = (", ".join(parts) + f" ({f['linked_upstream']} linked upstream)") if parts \
        else "none"
    plugin = doc["verdict"].upper() if upper else doc["verdict"]
    shared = (doc.get("shared_with_xla") or {}).get("count", 0)
    tail = f" | {shared} plugin failure{'s' if shared != 1 else ''} shared with XLA" \
        if shared else ""
    return f"plugin: {plugin} | stack findings: {stack}{tail}"


def shared_line(doc: dict[str, Any]) -> str:
    """``3 test(s) in 2 cataloged XLA defect(s): a, b`` (or ``none``) for a report.json
    document with ``shared_with_xla``."""
    s = doc.get("shared_with_xla") or {"count": 0, "defects": []}
    if not s["count"]:
        return "none"
    return (f"{s['count']} test(s) in {len(s['defects'])} cataloged XLA defect(s)"
            + (f": {', '.join(s['defects'])}" if s["defects"] else ""))
