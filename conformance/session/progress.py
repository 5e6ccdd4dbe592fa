"""Live progress of a conformance run, as deqp-runner gives it (a pytest plugin object).

One line per area (test file): done/total, pass, fail, crash, skip counts, elapsed time
and ETA. On a TTY the table is redrawn in place with ``rich``; elsewhere (CI logs) plain
lines are printed every ``--progress-interval`` seconds for the areas that moved. At the
end: the final per-area lines and the failures grouped by area (and by ``attribution``
when the report carries it). Tracebacks are left to the bundle (``report.json``
failures: message, reproduction, command); ``-v`` shows them on the terminal as usual.

It runs where the results are merged: the pytest-xdist controller (from
``pytest_runtest_logreport``) or the only process of a ``-n 0`` run. ``--progress``:
``auto`` (default: on when ``--report-dir`` is given, rich on a TTY), ``rich``,
``plain`` or ``off``.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from typing import Any

import pytest

from conformance.certification.rendering import failure_view
from conformance.session.run_options import run_options

MODES = ("auto", "rich", "plain", "off")
#: Column -> the statuses it counts (``flaky``: engineer "robust"'s re-run status).
COLUMNS = {"pass": ("pass",), "fail": ("fail_wrong_result", "fail_error"),
           "crash": ("crash", "timeout"), "skip": ("skipped", "not_supported", "waived"),
           "flaky": ("flaky",)}
_FINAL_PHASES = ("teardown", "???")  # "???": pytest-xdist's report of a crashed worker


def add_options(group: Any) -> None:
    """Declare ``--progress`` and ``--progress-interval`` in a pytest option group."""
    group.addoption("--progress", default="auto", choices=MODES,
                    help="live per-area progress: auto (on with --report-dir; redrawn in "
                         "place on a TTY, plain periodic lines otherwise), rich, plain, off")
    group.addoption("--progress-interval", type=float, default=30.0,
                    help="seconds between plain progress lines (default: 30)")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclasses.dataclass
class Area:
    """Counts of one area; ``total``: collected tests, ``done``: finished ones."""

    name: str
    total: int = 0
    counts: dict[str, int] = dataclasses.field(
        default_factory=lambda: {c: 0 for c in COLUMNS})

    @property
    def done(self) -> int:
        return sum(self.counts.values())


class Tracker:
    """Per-area counts and timing (no output): fed phase reports, asked for lines."""

    def __init__(self, clock: Any = time.monotonic):
        self.clock, self.t0 = clock, clock()
        self.areas: dict[str, Area] = {}
        self.status: dict[str, str] = {}  # nodeid -> worst status so far
        self.finished: dict[str, str] = {}  # nodeid -> final status
        self.headlines: dict[str, str] = {}

    def collected(self, nodeids: list[str]) -> None:
        """Set the totals from the collected test ids (once; later calls are ignored)."""
        from conformance.certification.results import records
        if any(a.total for a in self.areas.values()):
            return
        for nodeid in nodeids:
            area = records.area_of(nodeid)
            self.areas.setdefault(area, Area(area)).total += 1

    def add(self, report: Any) -> bool:
        """Merge one phase report; True when it finished a test."""
        from conformance.certification.results import records
        props = dict(getattr(report, "user_properties", ()) or ())
        outcome = props.get(records.OUTCOME_PROPERTY) or {}
        status = outcome.get("status") or {"passed": "pass", "skipped": "skipped"}.get(
            report.outcome, "fail_error")
        nodeid = report.nodeid
        prev = self.status.get(nodeid)
        if prev is None or prev == "pass" or (prev == "skipped" and status != "pass"):
            self.status[nodeid] = status
        if status != "pass" and status != "skipped" and nodeid not in self.headlines:
            crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
            # the outcome's own message first: pytest's crash line of an exception that
            # Hypothesis wrapped (FlakyFailure) names only the wrapper
            text = outcome.get("message") or (crash.message if crash is not None
                                              else str(report.longrepr or status))
            self.headlines[nodeid] = failure_view.short_type(
                (text.strip().splitlines() or [status])[0])
        if report.when not in _FINAL_PHASES or nodeid in self.finished:
            return False
        final = self.status[nodeid]
        self.finished[nodeid] = final
        area = self.areas.setdefault(records.area_of(nodeid), Area(records.area_of(nodeid)))
        area.total = max(area.total, area.done + 1)
        column = next((c for c, ss in COLUMNS.items() if final in ss), "fail")
        area.counts[column] += 1
        return True

    def eta(self, remaining: int) -> float | None:
        """Seconds left for ``remaining`` tests at the run's rate so far (None: unknown)."""
        done = len(self.finished)
        if not done:
            return None
        return (self.clock() - self.t0) / done * remaining

    def rows(self) -> list[tuple[str, int, int, dict[str, int], str]]:
        """(area, done, total, counts, ETA text) per area, then ``total``."""
        out = [(a.name, a.done, a.total, a.counts, _duration(self.eta(a.total - a.done)))
               for a in sorted(self.areas.values(), key=lambda a: a.name)]
        done = sum(r[1] for r in out)
        total = sum(r[2] for r in out)
        counts = {c: sum(r[3][c] for r in out) for c in COLUMNS}
        return out + [("total", done, total, counts, _duration(self.eta(total - done)))]

    def line(self, row: tuple[str, int, int, dict[str, int], str]) -> str:
        """One plain progress line."""
        name, done, total, counts, eta = row
        parts = " ".join(f"{c} {n}" for c, n in counts.items() if n or c != "flaky")
        return (f"{name:<22} {done:>5}/{total:<5} {parts}  elapsed "
                f"{_duration(self.clock() - self.t0)}  ETA {eta}")


def _verbose(config: pytest.Config) -> bool:
    """``-v`` (or ``-vv``, ``--verbose``) among the arguments the user gave."""
    return any(a == "--verbose" or re.fullmatch(r"-v+", a)
               for a in config.invocation_params.args)


def mode_of(config: pytest.Config, *, isatty: bool) -> str:
    """The output mode ``rich``, ``plain`` or ``off`` for ``config``'s options."""
    opts = run_options(config)
    mode = opts.progress or "off"
    if mode == "auto":
        mode = ("rich" if isatty else "plain") if opts.report_dir is not None else "off"
    return mode


class Progress:
    """The pytest plugin object: feeds a :class:`Tracker` and draws it (``mode``
    ``rich`` or ``plain``). ``stream``: where rich draws (default ``sys.stdout``)."""

    def __init__(self, config: pytest.Config, mode: str, *, stream: Any = None):
        if mode not in ("rich", "plain"):
            raise ValueError(f"mode must be 'rich' or 'plain', got {mode!r}")
        self.config, self.mode, self.tracker = config, mode, Tracker()
        self.interval = run_options(config).progress_interval
        if self.interval is None or self.interval <= 0:
            raise pytest.UsageError(f"--progress-interval must be > 0, got {self.interval}")
        self.stream = stream or sys.stdout
        self.live: Any = None
        self.last_print, self.last_rows = time.monotonic(), {}
        self.quiet = not _verbose(config)
        if self.quiet:  # pytest's short summary: replaced by the summary by area
            config.option.reportchars = "N"
        if mode == "rich":
            config.option.console_output_style = "classic"

    # -- pytest hooks -------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:
            self.tracker.collected([i.nodeid for i in session.items])
            self._start()

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_setupnodes(self) -> None:
        """This table is the run's status: pytest-xdist's own status line ("bringing up
        nodes...", once per worker off a TTY) is left out when the output is quiet."""
        dist = self.config.pluginmanager.get_plugin("terminaldistreporter")
        if self.quiet and dist is not None and hasattr(dist, "ensure_show_status"):
            dist.ensure_show_status = lambda: None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.tracker.collected(list(ids))
        self._start()

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: Any, config: pytest.Config):
        """Keep pytest's category (for its counts) but print no per-test letter."""
        category, letter, word = yield
        return (category, "", "") if self.quiet else (category, letter, word)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.tracker.add(report):
            self._draw()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.quiet:
            # Tracebacks stay in the bundle (every report was made with the user's
            # --tb) and leave the terminal: -v prints them.
            self.config.option.tbstyle = "no"
        if self.live is not None:
            self.live.update(self._table(), refresh=True)
            self.live.stop()
            self.live = None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The final per-area lines and the failures by area (and attribution)."""
        tw = terminalreporter
        tw.write_sep("=", "pjrt-conformance: results by area")
        for row in self.tracker.rows():
            tw.write_line(self.tracker.line(row))
        failed = {n: s for n, s in self.tracker.finished.items()
                  if s not in ("pass", "skipped", "not_supported", "waived")}
        if failed:
            tw.write_sep("-", f"{len(failed)} failure(s) by area (details: report.json, "
                              "report.html; -v prints tracebacks)")
            for line in summary_lines(failed, self.tracker.headlines, self._attributions()):
                tw.write_line(line[:max(40, tw._tw.fullwidth)] if tw.isatty else line)

    # -- drawing ------------------------------------------------------------------
    def _attributions(self) -> dict[str, str]:
        from conformance.session import session_state

        state = self.config.stash.get(session_state.KEY, None)
        doc = state.written[0] if state is not None and state.written else {}
        by_test = {_test_key(f["nodeid"]): f["attribution"] for f in doc.get("failures", [])
                   if f.get("attribution")}
        # report.json holds package-relative ids; the tracker pytest's own (install-dependent)
        return {n: by_test[_test_key(n)] for n in self.tracker.finished
                if _test_key(n) in by_test}

    def _start(self) -> None:
        if self.mode == "rich" and self.live is None:
            from rich.console import Console
            from rich.live import Live

            self.live = Live(self._table(), console=Console(file=self.stream,
                                                            force_terminal=True),
                             auto_refresh=False, transient=False,
                             redirect_stdout=False, redirect_stderr=False)
            self.live.start()

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(title="pjrt-conformance progress", expand=False)
        for col in ["area", "done/total"] + list(COLUMNS) + ["elapsed", "ETA"]:
            table.add_column(col, justify="left" if col == "area" else "right")
        elapsed = _duration(self.tracker.clock() - self.tracker.t0)
        for name, done, total, counts, eta in self.tracker.rows():
            cells = [f"[red]{counts[c]}[/red]" if c in ("fail", "crash", "flaky") and counts[c]
                     else str(counts[c]) for c in COLUMNS]
            table.add_row(f"[bold]{name}[/bold]" if name == "total" else name,
                          f"{done}/{total}", *cells, elapsed, eta)
        return table

    def _draw(self) -> None:
        now = time.monotonic()
        if self.live is not None:
            if now - self.last_print >= 0.25:
                self.live.update(self._table(), refresh=True)
                self.last_print = now
            return
        if self.mode != "plain" or now - self.last_print < self.interval:
            return
        self.last_print = now
        rep = self.config.pluginmanager.get_plugin("terminalreporter")
        for row in self.tracker.rows():
            key = (row[1], tuple(row[3].values()))
            if self.last_rows.get(row[0]) != key:
                self.last_rows[row[0]] = key
                line = "progress: " + self.tracker.line(row)
                rep.write_line(line) if rep is not None else print(line, file=self.stream)


def _test_key(nodeid: str) -> str:
    """``test_x.py::test[param]`` of a node id, whatever directory prefix it has."""
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def summary_lines(failed: dict[str, str], headlines: dict[str, str],
                  attribution: dict[str, str]) -> list[str]:
    """Failures (nodeid -> status) grouped by area, then by attribution when any
    failure has one: one heading line per group and one line per failure."""
    from conformance.certification.results import records
    by_area: dict[str, dict[str, list[str]]] = {}
    for nodeid in failed:
        by_area.setdefault(records.area_of(nodeid), {}).setdefault(
            attribution.get(nodeid, ""), []).append(nodeid)
    lines = []
    for area in sorted(by_area):
        groups = by_area[area]
        lines.append(f"{area} ({sum(map(len, groups.values()))}):")
        for attr in sorted(groups, key=lambda a: (a == "", a)):  # unattributed last
            if attribution:
                lines.append(f"  attribution {attr or 'unattributed'}:")
            for nodeid in groups[attr]:
                lines.append(f"    {failed[nodeid]:<17} {nodeid.split('::', 1)[-1]}: "
                             f"{headlines.get(nodeid, '')}")
    return lines
