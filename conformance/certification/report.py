"""Result collection and the report document (report.json, report.md).

Schema ``schema_version`` 2: ``docs/report-schema.md`` and the JSON Schema
``conformance/schema/report-v2.schema.json``. The verdict comes from
:func:`conformance.certification.verdict.decide`; the other bundle files from
:mod:`conformance.certification.bundle`.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import re
import textwrap
from pathlib import Path
from typing import Any

from conformance.certification import verdict as certification
from conformance.certification import waivers as waiver_rules
from conformance.certification.profiles import Profile, profile_id
from conformance.certification.waivers import Waiver

SCHEMA_VERSION = 2
STATUSES = ("pass", "fail_wrong_result", "fail_error", "crash", "timeout", "not_supported",
            "skipped", "waived")
#: Statuses whose results carry a message and a reproduction in ``failures``.
FATAL = ("fail_wrong_result", "fail_error", "crash", "timeout")
#: user_properties key under which the plugin hands a test's tier to the controller.
TIER_PROPERTY = "pjrt_tier"


@dataclasses.dataclass
class Result:
    """Outcome of one test id."""

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

    @property
    def test_id(self) -> str:
        return profile_id(self.nodeid)

    def record(self) -> dict[str, Any]:
        """The compact entry of ``report.json["results"]``."""
        record = {"nodeid": self.nodeid, "test_id": self.test_id, "area": self.area,
                  "tier": self.tier, "status": self.status, "duration_s": self.duration_s}
        if self.processes is not None:  # multi_process area: one entry per worker process
            record["processes"] = self.processes
        return record

    def failure(self) -> dict[str, Any]:
        """The detailed entry of ``report.json["failures"]``: message (observed vs
        expected), the drawn input, the Hypothesis blob, the program text and the
        command that reproduces it."""
        return {**self.record(), "message": self.message, "reproduction": self.reproduction,
                "command": self.command, "known_failure": self.known_failure,
                **reproduction_parts(self.reproduction)}


def area_of(nodeid: str) -> str:
    """'conformance/test_transfer.py::test_x[..]' -> 'transfer'."""
    m = re.search(r"test_([A-Za-z0-9_]+)\.py", nodeid.split("::")[0])
    return m.group(1) if m else "other"


def _raised(name: str, text: str) -> bool:
    """True when ``text`` shows exception ``name`` being raised (``E   ...Name: msg``
    or a headline ``Name: msg``), not merely mentioned in a traceback's source."""
    return re.search(rf"(^|\n)(E\s+)?([\w.]*\.)?{name}\b", text) is not None


def _failure_status(text: str) -> str:
    if _raised("BackendCrash", text) or re.search(r"worker '.*' crashed", text):
        return "crash"
    if _raised("BackendHang", text) or ("Timeout" in text and "pytest-timeout" in text):
        return "timeout"
    # A failed check: AssertionError, or pytest's rewritten bare ``assert`` headline.
    if text.startswith(("AssertionError", "assert ")) or (
            "AssertionError" in text.split("\n", 1)[0]) or (
            "Falsifying example" in text and "AssertionError" in text):
        return "fail_wrong_result"
    return "fail_error"


def classify(report: Any) -> str:
    """Certification status of one pytest phase report."""
    longrepr = str(getattr(report, "longrepr", "") or "")
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    headline = f"{crash.message}" if crash is not None else longrepr
    if getattr(report, "wasxfail", None) is not None and report.skipped:
        return _failure_status(headline + "\n" + longrepr)
    if report.passed:
        return "pass"
    if report.skipped:
        reason = longrepr if isinstance(report.longrepr, str) else (
            report.longrepr[2] if isinstance(report.longrepr, tuple) else longrepr)
        return "not_supported" if "not_supported" in str(reason) else "skipped"
    if report.when != "call":
        return "crash" if "crashed" in longrepr else "fail_error"
    return _failure_status(headline + "\n" + longrepr)


def _message(report: Any) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    return str(report.longrepr or "")[:2000]


def reproduction_parts(text: str) -> dict[str, str | None]:
    """``falsifying_example``, ``hypothesis_blob`` and ``program_text`` found in a
    reproduction text (None where absent)."""
    example = re.search(r"(?:Falsifying example|Failing test case): (.*?)(?:\n\n|\nYou can"
                        r"|$)", text, re.S)
    blob = re.search(r"@reproduce_failure\([^)]*\)", text)
    return {"falsifying_example": example.group(1).strip() if example else None,
            "hypothesis_blob": blob.group(0) if blob else None,
            "program_text": _program(text)}


def _program(text: str) -> str | None:
    """The StableHLO module in ``text``: from ``module @`` to the ``}`` at its indent,
    with pytest's ``E`` column and the common indent removed."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        at = line.find("module @")
        if at < 0:
            continue
        prefix = line[:at]
        for j in range(i + 1, len(lines)):
            if lines[j].rstrip() == prefix + "}":
                return "\n".join(x[len(prefix):] for x in lines[i:j + 1])
        return None
    return None


def _reproduction(longrepr: str) -> str:
    """The reproduction note, Hypothesis' failing example and its blob from a pytest
    failure text, without pytest's ``E`` column, each block dedented."""
    lines = [(line[1:] if line.startswith("E ") or line == "E" else line).rstrip()
             for line in longrepr.splitlines()]
    keep: list[str] = []
    for marker in ("Reproduction:", "Falsifying example", "Failing test case",
                   "@reproduce_failure"):
        start = next((i for i, line in enumerate(lines) if marker in line), None)
        if start is None or any(marker in block for block in keep):
            continue
        block = []
        for line in lines[start:start + 200]:
            if not line and block:
                break
            block.append(line)
        keep.append(textwrap.dedent("\n".join(block)).strip())
    return "\n".join(keep)


#: user property under which a multi-process test records its workers' outcomes.
PROCESSES_PROPERTY = "pjrt_processes"


class Collector:
    """Accumulates one ``Result`` per test id from pytest phase reports."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}

    def add(self, report: Any, *, repro_command: str = "") -> None:
        status = classify(report)
        nodeid = report.nodeid
        prev = self.results.get(nodeid)
        if prev is not None and status == "pass" and (prev.status != "pass"
                                                      or report.when == "teardown"):
            return  # a passing later phase neither hides a failure nor replaces the call
        longrepr = str(report.longrepr or "")
        known = getattr(report, "wasxfail", "") or ""
        props = dict(getattr(report, "user_properties", ()) or ())
        tier = props.get(TIER_PROPERTY, "core")
        result = Result(nodeid, area_of(nodeid), status, tier=tier,
                        duration_s=round(report.duration, 4), known_failure=known,
                        processes=props.get(PROCESSES_PROPERTY,
                                            prev.processes if prev is not None else None))
        if status not in ("pass",):
            result.message = _message(report)
            if status in FATAL:
                result.reproduction = _reproduction(longrepr)
                result.command = repro_command
        self.results[nodeid] = result


def summarize(records: list[dict[str, Any]], collected: int) -> dict[str, Any]:
    """Status counts overall, per area and per tier."""
    def table(key: str) -> dict[str, dict[str, int]]:
        rows: dict[str, dict[str, int]] = collections.defaultdict(
            lambda: {s: 0 for s in STATUSES})
        for r in records:
            rows[r[key]][r["status"]] += 1
        return dict(sorted(rows.items()))

    by_status = {s: 0 for s in STATUSES}
    for r in records:
        by_status[r["status"]] += 1
    return {"collected": collected, "reported": len(records), "by_status": by_status,
            "areas": table("area"), "tiers": table("tier")}


KERNEL_AREA_PREFIX = "kernels_"


def kernel_families(areas: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Status counts of the kernel families (areas ``kernels_<family>``), by family."""
    return {a[len(KERNEL_AREA_PREFIX):]: counts for a, counts in areas.items()
            if a.startswith(KERNEL_AREA_PREFIX)}


def build(results: list[Result], *, collected: int, header: dict[str, Any],
          profile: Profile | None = None, declared: tuple[str, ...] = (),
          waivers: tuple[Waiver, ...] = (), device_count: int = 1,
          today: datetime.date | None = None) -> dict[str, Any]:
    """The report.json document (schema 2): results with waivers applied, the
    verdict and its reasons."""
    records = [r.record() for r in results]
    errors = waiver_rules.apply(list(waivers), records, today or datetime.date.today())
    by_id = {r["nodeid"]: r for r in records}
    summary = summarize(records, collected)
    decision, reasons = certification.decide(records, collected=collected, profile=profile,
                                             declared=list(declared),
                                             device_count=device_count, errors=errors)
    counts = profile.expected_counts(device_count) if profile else None
    return {
        "schema_version": SCHEMA_VERSION,
        **header,
        "profile": profile.header() if profile else None,
        "declared_capabilities": list(declared),
        "waivers": [w.as_dict() for w in waivers],
        "report_errors": errors,
        "summary": {"collected": collected, "reported": summary["reported"],
                    "expected": sum(counts.values()) if counts else None,
                    "by_status": summary["by_status"]},
        "areas": summary["areas"],
        "kernel_families": kernel_families(summary["areas"]),
        "tiers": summary["tiers"],
        "results": records,
        "failures": [{**r.failure(), "status": by_id[r.nodeid]["status"]} for r in results
                     if r.status in FATAL],
        "not_supported": [{"nodeid": r.nodeid, "message": r.message} for r in results
                          if r.status == "not_supported"],
        "verdict": decision,
        "verdict_reasons": reasons,
    }


def _version(v: list[int] | None) -> str:
    return "unknown" if not v else ".".join(map(str, v))


def _backend_lines(p: dict[str, Any]) -> list[str]:
    """How the backend was loaded: plugin library, options, PJRT C API versions."""
    loaded = p.get("loaded")
    if not loaded:
        return []
    lines = [f"- Loaded: {loaded['how']}" + (f" ({loaded['source']})" if loaded.get("source")
                                             else "")]
    if loaded.get("library_path"):
        lines.append(f"- Plugin library: `{loaded['library_path']}` sha256 "
                     f"`{loaded.get('library_sha256')}`, options "
                     f"`{json.dumps(loaded.get('options') or {}, sort_keys=True)}`")
    if p.get("using_pjrt_c_api"):
        lines.append(f"- PJRT C API: plugin {_version(p.get('pjrt_c_api_version'))}, framework "
                     f"(jaxlib) {_version(p.get('framework_pjrt_c_api_version'))}")
    lines += [f"- Version check: {f}" for f in p.get("version_findings") or []]
    if p.get("plugin_package"):
        pkg = p["plugin_package"]
        lines.append(f"- Plugin package: {pkg['distribution']} {pkg['version']} "
                     f"({'compatible' if pkg['compatible'] else 'INCOMPATIBLE'} with jaxlib)")
    lines += [f"- Plugin error: {name}: {err}"
              for name, err in (p.get("plugin_errors") or {}).items()]
    return lines


def _status_table(title: str, key: str, rows: dict[str, dict[str, int]]) -> list[str]:
    """A Markdown section with one row of status counts per area or tier."""
    return ["", f"## {title}", "", f"| {key} | " + " | ".join(STATUSES) + " |",
            "|---|" + "---|" * len(STATUSES)] + [
        f"| {name} | " + " | ".join(str(c[k]) for k in STATUSES) + " |"
        for name, c in rows.items()]


def render_markdown(doc: dict[str, Any]) -> str:
    p, env, s = doc["platform"], doc["environment"], doc["summary"]
    lines = [
        f"# PJRT conformance report: {p.get('name', '?')}",
        "",
        f"**Verdict: {doc['verdict']}**" + (
            "" if not doc["verdict_reasons"] else " (" + "; ".join(doc["verdict_reasons"]) + ")"),
        "",
        f"- Suite: {doc['suite']['version']} (git {doc['suite'].get('git_sha') or 'unknown'})",
        f"- Platform: {p.get('name')} `{' / '.join(str(p.get('platform_version')).splitlines())}`"
        f", {p.get('device_count')} device(s): {', '.join(p.get('device_kinds', []))}",
    ] + _backend_lines(p) + [
        f"- Environment: python {env['python']}, jax {env['jax']}, jaxlib {env['jaxlib']}, "
        f"numpy {env['numpy']}",
        f"- Hypothesis profile: {doc['hypothesis']['profile']} "
        f"(max_examples={doc['hypothesis']['max_examples']}, "
        f"derandomize={doc['hypothesis']['derandomize']})",
        f"- Profile: " + (f"{doc['profile']['name']} (sha256 {doc['profile']['sha256'][:12]}, "
                          f"{doc['profile']['tests']} test ids)" if doc.get("profile")
                          else "none (completeness not checked; not a certification)"),
        f"- Declared capabilities: {', '.join(doc.get('declared_capabilities') or []) or 'none'}",
        f"- Command: `{doc['command']}`",
        f"- Processes of the multi_process area: {doc.get('num_processes', 1)}",
        f"- Started (UTC): {doc['started_utc']}, duration {doc['duration_s']:.1f} s",
        "",
        "## Summary",
        "",
        f"Collected {s['collected']}, reported {s['reported']}"
        + (f", expected by the profile {s['expected']}." if s.get("expected") is not None
           else "."),
        "",
        "| status | count |",
        "|---|---|",
    ] + [f"| {k} | {v} |" for k, v in s["by_status"].items()]
    lines += _status_table("Areas", "area", doc["areas"])
    if doc.get("kernel_families"):
        lines += _status_table("Kernel families (results vs NumPy/SciPy)", "family",
                               doc["kernel_families"])
    if doc.get("programs"):
        p = doc["programs"]
        lines += ["", f"Programs compiled: {p['compiles']}, executables served from the cache: "
                      f"{p['cache_hits']}."]
    lines += _status_table("Tiers (core, capabilities, informational)", "tier", doc["tiers"])
    if doc.get("report_errors"):
        lines += ["", "## Report errors", ""] + [f"- {e}" for e in doc["report_errors"]]
    if doc.get("waivers"):
        lines += ["", "## Waivers", ""] + [f"- `{w['test']}` until {w['expires']}: "
                                           f"{w['reason']} ({w['issue']})"
                                           for w in doc["waivers"]]
    if doc["failures"]:
        lines += ["", "## Failures", ""]
        for f in doc["failures"]:
            lines += [f"### `{f['nodeid']}`", "", f"Status: **{f['status']}**"
                      + (f" (known: {f['known_failure']})" if f["known_failure"] else ""),
                      "", "```", f["message"].strip()[:2000], "```"]
            if f["reproduction"]:
                lines += ["", "Reproduction:", "", "```", f["reproduction"].strip(), "```"]
            if f.get("command"):
                lines += ["", f"Reproduce: `{f['command']}`"]
            lines.append("")
    return "\n".join(lines) + "\n"


def write(doc: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write report.json and report.md into ``out_dir`` (created); return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "report.json", out_dir / "report.md"
    json_path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    md_path.write_text(render_markdown(doc))
    return json_path, md_path
