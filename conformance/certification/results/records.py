"""Test records: the facts each test hands to the controller, and their merge.

Every test's facts travel as data in pytest's ``user_properties`` (which
pytest-xdist carries from its workers to the controller), never as text that is
parsed back:

- ``pjrt_tier`` and ``pjrt_capability``: set at collection;
- ``pjrt_outcome``: one dict per phase report, set by the plugin's
  ``pytest_runtest_makereport`` hookwrapper (:mod:`conformance.session.recording`):
  ``status`` (one of :data:`STATUSES` except ``waived``); for failures
  ``reproduction``, ``inputs``, ``program_text``, ``arrays``, ``falsifying_example``,
  ``hypothesis_blob``; ``spec_property`` (True: the failure broke a property the spec
  states for every execution, so a passing re-run leaves it ``fail_wrong_result``, not
  ``flaky``); for ``not_supported`` the ``message``;
- ``pjrt_processes``: the multi_process area's per-process outcomes.

:class:`Collector` merges the phase reports of one run into one
:class:`Result` per test id, in the process that writes the report.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from conformance.certification.catalog import known_failures
from conformance.certification.catalog.profiles import profile_id
from conformance.certification.provenance import package_nodeid

STATUSES = ("pass", "fail_wrong_result", "fail_error", "crash", "timeout", "not_supported",
            "skipped", "waived", "flaky")
#: Statuses whose results carry a message and a reproduction in ``failures``.
FATAL = ("fail_wrong_result", "fail_error", "crash", "timeout")
#: user_properties keys (see the module docstring).
TIER_PROPERTY = "pjrt_tier"
CAPABILITY_PROPERTY = "pjrt_capability"
OUTCOME_PROPERTY = "pjrt_outcome"
PROCESSES_PROPERTY = "pjrt_processes"
#: Failure facts of an outcome, copied into ``report.json["failures"]`` (None where absent).
FAILURE_FACTS = ("falsifying_example", "hypothesis_blob", "program_text", "inputs",
                 "arrays", "ulp_errors", "compiler_pass", "sequence", "traceback")
_MESSAGE_CHARS = 2000
#: Characters of a failure's traceback that report.json keeps: its tail, where pytest puts
#: the failing frame and the error (the terminal shows tracebacks only with -v; the whole
#: traceback stays in the bundle's results log, ``longrepr``). 3,000 keeps a CPU bundle
#: under the 2 MB budget of a committed one (tests/test_repo_size.py).
TRACEBACK_CHARS = 3000


@dataclasses.dataclass
class Result:
    """Outcome of one test id (``status``: one of :data:`STATUSES`)."""

    nodeid: str
    area: str
    status: str
    tier: str = "core"
    message: str = ""
    reproduction: str = ""
    command: str = ""
    duration_s: float = 0.0
    known_failure: str = ""
    processes: list[dict[str, Any]] | None = None
    capability: str | None = None
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: The matching known-failure entry (set by :meth:`Collector.match_known`).
    known_entry: known_failures.Entry | None = None
    #: Whose failure (``plugin``, ``framework``, ``suite``, ``unattributed``), the catalog's
    #: defect (``id``, ``upstream``, ``summary``) and the evidence: set for every result that
    #: is not a pass by :func:`conformance.certification.attribution.attribution_sources.attribute`.
    #: Each evidence item is data, ``{"source": ..., "answer": ..., facts...}``
    #: (``docs/report-schema.md``, "Evidence"); only the renderers put it in words.
    attribution: str | None = None
    defect: dict[str, str] | None = None
    evidence: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def test_id(self) -> str:
        return profile_id(self.nodeid)

    def record(self) -> dict[str, Any]:
        """The compact entry of ``report.json["results"]``."""
        record = {"nodeid": self.nodeid, "test_id": self.test_id, "area": self.area,
                  "tier": self.tier, "status": self.status, "duration_s": self.duration_s}
        if self.processes is not None:  # multi_process area: one entry per worker process
            record["processes"] = self.processes
        if self.attribution is not None:
            record["attribution"] = self.attribution
            record["evidence"] = list(self.evidence)
            if self.defect is not None:
                record["defect"] = dict(self.defect)
        return record

    def failure(self) -> dict[str, Any]:
        """The detailed entry of ``report.json["failures"]``: message (observed vs
        expected), the reproduction note, the drawn input, the Hypothesis blob, the
        program text and the command that reproduces it."""
        return {**self.record(), "message": self.message, "reproduction": self.reproduction,
                "command": self.command, "known_failure": self.known_failure,
                "capability": self.capability,
                **{k: self.facts.get(k) for k in FAILURE_FACTS}}


def area_of(nodeid: str) -> str:
    """'conformance/test_transfer.py::test_x[..]' -> 'transfer'."""
    m = re.search(r"test_([A-Za-z0-9_]+)\.py", nodeid.split("::")[0])
    return m.group(1) if m else "other"


def _message(report: Any) -> str:
    """The headline pytest shows for a report (display only, never classified)."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    return str(report.longrepr or "")[:_MESSAGE_CHARS]


def _fallback_status(report: Any) -> str:
    """Status of a report without an outcome record (made outside a test's phases)."""
    return {"passed": "pass", "skipped": "skipped"}.get(report.outcome, "fail_error")


class Collector:
    """Accumulates one :class:`Result` per test id from pytest phase reports."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}
        #: Test ids whose run ended (a teardown report, or a crash of the worker).
        self.finished: set[str] = set()
        #: Test id -> first failure's message, for tests that failed and were re-run
        #: (pytest-rerunfailures' ``rerun`` reports).
        self.rerun: dict[str, str] = {}
        #: Test id -> the outcome record of a failed run that broke a spec property
        #: (``spec_property``) and was re-run: its re-run's pass is no excuse.
        self.spec_failure: dict[str, dict[str, Any]] = {}
        #: Test id -> the outcome record of a run that timed out and was re-run (a
        #: timeout that pytest-rerunfailures did not recognize, as inside Hypothesis'
        #: FlakyFailure): a re-run that passes leaves it ``timeout``, never ``flaky``.
        self.timed_out: dict[str, dict[str, Any]] = {}
        #: Test id -> seconds of every phase report of it so far (setup, call, teardown,
        #: a failed run before its re-run): a result's ``duration_s`` is the time the
        #: test took, never that of its last phase (a timeout's teardown took 0.0003 s).
        self.seconds: dict[str, float] = {}

    def finished_results(self) -> list[Result]:
        """The results of tests that ran to their end (a run cut short leaves others)."""
        return [r for n, r in self.results.items() if n in self.finished]

    def add(self, report: Any, *, repro_command: str = "") -> None:
        """Merge one phase report: a later passing phase neither hides an earlier
        failure nor replaces the call's result."""
        props = dict(getattr(report, "user_properties", ()) or ())
        outcome = props.get(OUTCOME_PROPERTY) or {"status": _fallback_status(report)}
        status = outcome["status"]
        # The same id wherever the suite is installed and whatever pytest's rootdir.
        nodeid = package_nodeid(report.nodeid, report.location[0] if report.location else None)
        if report.when == "teardown" or status == "crash":
            self.finished.add(nodeid)
        self.seconds[nodeid] = self.seconds.get(nodeid, 0.0) + max(
            0.0, float(getattr(report, "duration", 0.0) or 0.0))
        prev_seen = self.results.get(nodeid)
        if prev_seen is not None:   # the time grows even when this phase changes nothing
            prev_seen.duration_s = round(self.seconds[nodeid], 4)
        if report.outcome == "rerun":  # failed; pytest-rerunfailures runs it again
            self.rerun.setdefault(nodeid, f"failed, then passed on its re-run: "
                                          f"{outcome.get('message') or _message(report)}")
            if outcome.get("spec_property") and nodeid not in self.spec_failure:
                self.spec_failure[nodeid] = {
                    **outcome, "message": "broke a spec property, then passed on its "
                    f"re-run (a wrong result all the same): "
                    f"{outcome.get('message') or _message(report)}",
                    "traceback": str(report.longrepr or "")[-TRACEBACK_CHARS:]}
            if status == "timeout" and nodeid not in self.timed_out:
                self.timed_out[nodeid] = {
                    **outcome, "message": f"{outcome.get('message') or _message(report)}"
                    "\nthen passed on its re-run (a timeout all the same: the test "
                    "exceeded the run's per-test limit once)",
                    "traceback": str(report.longrepr or "")[-TRACEBACK_CHARS:]}
            self.results.pop(nodeid, None)
            return
        prev = self.results.get(nodeid)
        if nodeid in self.rerun and status == "pass" and prev is None:
            if nodeid in self.spec_failure:  # a value the spec rules out is wrong, once
                outcome, status = self.spec_failure[nodeid], "fail_wrong_result"
            elif nodeid in self.timed_out:   # past the limit once is a timeout
                outcome, status = self.timed_out[nodeid], "timeout"
            else:
                status = "flaky"  # failed, then passed on the re-run: never a pass
        if prev is not None and status == "pass" and (prev.status != "pass"
                                                      or report.when == "teardown"):
            return
        result = Result(nodeid, area_of(nodeid), status,
                        tier=props.get(TIER_PROPERTY, prev.tier if prev else "core"),
                        capability=props.get(CAPABILITY_PROPERTY,
                                             prev.capability if prev else None),
                        duration_s=round(self.seconds[nodeid], 4),
                        processes=props.get(PROCESSES_PROPERTY,
                                            prev.processes if prev is not None else None))
        if status == "flaky":
            result.message = self.rerun[nodeid][:_MESSAGE_CHARS]
        elif status != "pass":
            result.message = outcome.get("message") or _message(report)
        if status in FATAL:
            result.reproduction = outcome.get("reproduction") or ""
            result.facts = {k: outcome.get(k) for k in FAILURE_FACTS}
            result.facts["traceback"] = outcome.get("traceback") or \
                str(report.longrepr or "")[-TRACEBACK_CHARS:]
            result.command = repro_command
        self.results[nodeid] = result

    def match_known(self, entries: list[known_failures.Entry], platform: str,
                    plugin_library: bool = False) -> None:
        """Match the known-failure entries against every result, once: sets each
        entry's ``matched`` and ``file_collected`` and each result's ``known_failure``
        and ``known_entry``."""
        nodeids = list(self.results)
        for nodeid, entry in known_failures.match(entries, nodeids, platform,
                                                  plugin_library).items():
            self.results[nodeid].known_failure = entry.label
            self.results[nodeid].known_entry = entry
