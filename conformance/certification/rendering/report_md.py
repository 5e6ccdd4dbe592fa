"""``report.md``: the report document for humans and pull requests (render only)."""

from __future__ import annotations

import json
from typing import Any

from conformance.certification import provenance
from conformance.certification.rendering import failure_view
from conformance.certification.rendering import coverage_md
from conformance.certification.rendering import root_causes
from conformance.certification.verdict import pass_rate
from conformance.certification.attribution.attribution_sources import stack_findings
from conformance.certification.results.records import STATUSES
from conformance.certification.verdict import plugin_verdict
from conformance.certification.verdict.plugin_verdict import headline


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
        lines.append(
            f"- Plugin library: `{failure_view.strip_local_paths(loaded['library_path'])}` sha256 "
            f"`{loaded.get('library_sha256')}`, options "
            f"`{json.dumps(loaded.get('options') or {}, sort_keys=True)}`")
    if p.get("using_pjrt_c_api"):
        lines.append(f"- PJRT C API: plugin {_version(p.get('pjrt_c_api_version'))}, framework "
                     f"(jaxlib) {_version(p.get('framework_pjrt_c_api_version'))}")
    lines += [f"- Version check: {f}" for f in p.get("version_findings") or []]
    if p.get("plugin_package"):
        pkg = p["plugin_package"]
        rule = ("no jaxlib version rule for it" if pkg.get("compatible") is None else
                "compatible with jaxlib" if pkg["compatible"] else "INCOMPATIBLE with jaxlib")
        lines.append(f"- Plugin package: {pkg['distribution']} {pkg['version']} ({rule})")
    lines += [f"- Plugin error: {name}: {err}"
              for name, err in (p.get("plugin_errors") or {}).items()]
    return lines


def _status_table(title: str, key: str, rows: dict[str, dict[str, int]]) -> list[str]:
    """A Markdown section with one row of status counts per area or tier, and its pass
    rate (:func:`conformance.certification.verdict.pass_rate.text`)."""
    return ["", f"## {title}", "", f"| {key} | pass rate | " + " | ".join(STATUSES) + " |",
            "|---|---|" + "---|" * len(STATUSES)] + [
        f"| {name} | {pass_rate.text(c)} | " + " | ".join(str(c.get(k, 0)) for k in STATUSES)
        + " |" for name, c in rows.items()]


def _failure_lines(failures: list[dict[str, Any]]) -> list[str]:
    """The failures grouped by area and likely root cause
    (:func:`conformance.certification.rendering.failure_view.group`), each with its input once,
    observed vs expected and the command that reproduces it."""
    lines = [f"- [{g.area}](#{g.anchor}) ({g.count}): " + "; ".join(
        f"{c.title} ({len(c.failures)})" for c in g.causes) for g in failure_view.group(failures)]
    for g in failure_view.group(failures):
        lines += ["", f"### {g.area} ({g.count}) <a id=\"{g.anchor}\"></a>"]
        for c in g.causes:
            lines += ["", f"#### {c.title} ({len(c.failures)})"]
            for f in c.failures:
                lines += ["", f"- **{f['status']}** `{f['nodeid']}`: {failure_view.headline(f)}"]
                if f.get("attribution") or f.get("defect"):
                    d = f.get("defect") or {}
                    lines.append(f"  - attribution: {f.get('attribution') or 'unattributed'}"
                                 + (f", defect {_link(d)}" if d else ""))
                    lines += [f"  - evidence: {e}" for e in failure_view.evidence_lines(f)]
                if f["known_failure"]:
                    lines.append(f"  - {f['known_failure']}")
                if failure_view.compiler_pass_line(f):
                    lines.append(f"  - {failure_view.compiler_pass_line(f)}")
                    if (f.get("compiler_pass") or {}).get("module_before"):
                        lines += ["  <details><summary>HLO module before that pass</summary>",
                                  "", "    ```"] + [
                            "    " + ln for ln in
                            f["compiler_pass"]["module_before"].splitlines()] + [
                            "    ```", "", "  </details>", ""]
                for title, text in (("observed vs expected" if f["status"] == "fail_wrong_result"
                                     else "details", failure_view.shown_details(f)),
                                    ("input", failure_view.drawn_input(f))):
                    if text:
                        lines += [f"  - {title}:", "", "    ```"] + [
                            "    " + ln for ln in text.splitlines()] + ["    ```", ""]
                if f.get("program_text"):
                    lines += ["  <details><summary>program (StableHLO)</summary>", "",
                              "    ```"] + ["    " + ln for ln in
                                            f["program_text"].splitlines()] + [
                        "    ```", "", "  </details>", ""]
                script = failure_view.repro_file(f)
                if script:
                    lines.append(f"  - standalone reproduction: [`{script}`]({script})")
                if f.get("command"):
                    lines.append(f"  - reproduce: `{failure_view.strip_local_paths(f['command'])}`")
    return lines


def _link(defect: dict[str, str] | None) -> str:
    if not defect:
        return "no catalog defect"
    up = defect["upstream"]
    return f"`{defect['id']}` " + (f"[{up.rsplit('/', 3)[-3]}#{up.rsplit('/', 1)[-1]}]({up})"
                                   if up.startswith("http") else f"({up})")


def _stack_section(doc: dict[str, Any]) -> list[str]:
    """Stack findings (framework and suite defects) and the attribution counts."""
    f = doc.get("stack_findings") or stack_findings(doc["results"])
    lines = ["", "## Stack findings (framework and suite defects; not the plugin's)", ""]
    counts = ", ".join(f"{n} {a}" for a, n in f["results_by_attribution"].items())
    lines.append(f"Results that are not a pass, by attribution: {counts or 'none'}.")
    shared = doc.get("shared_with_xla")
    if shared is not None:
        lines.append(f"Plugin failures shared with XLA (XLA code the plugin ships; they count "
                     f"in the plugin verdict): {plugin_verdict.shared_line(doc)}.")
    lines.append("")
    for item in f["findings"]:
        statuses = ", ".join(f"{n} {s}" for s, n in item["statuses"].items())
        summary = item["defect"]["summary"] if item["defect"] else item["tests"][0]
        lines.append(f"- **{item['attribution']}** {_link(item['defect'])}: {summary} "
                     f"({len(item['tests'])} test(s): {statuses})")
    if not f["findings"]:
        lines.append("None.")
    return lines


def verdict_line(doc: dict[str, Any]) -> str:
    """The page's verdict line: ``**Verdict: V** (reason; reason)``."""
    reasons = doc["verdict_reasons"]
    return f"**Verdict: {doc['verdict']}**" + (" (" + "; ".join(reasons) + ")" if reasons else "")


def started_line(doc: dict[str, Any]) -> str:
    """The page's start-time line: ``- Started (UTC): T, duration D s`` (0.1 s)."""
    return f"- Started (UTC): {doc['started_utc']}, duration {float(doc['duration_s']):.1f} s"


def _float_controls_lines(doc: dict[str, Any]) -> list[str]:
    """The declared denormal handling (bundles written before it was recorded: none)."""
    fc = doc.get("float_controls")
    if not fc:
        return []
    modes = ", ".join(f"{k} {v}" for k, v in fc["modes"].items())
    return [f"- Float controls (declared denormal handling): {modes} ({fc['source']})"]


def _next_steps_lines(doc: dict[str, Any]) -> list[str]:
    """The "Next steps" table: one row per root cause (report.json ``next_steps``)."""
    steps = doc.get("next_steps") or []
    if not steps:
        return []
    lines = ["", "## Next steps", "",
             f"{len(steps)} root cause(s): a defect-catalog entry, or an uncataloged failing "
             "test to triage. Wrong results, crashes and timeouts cannot be waived.", "",
             "| root cause | whose | tests | reproduction | upstream | waivable | what to do |",
             "|---|---|---:|---|---|---|---|"]
    for s in steps:
        upstream = s["upstream"] or "uncataloged"
        if s.get("report"):
            upstream += f"; ready-to-file report `{s['report']}` (pjrt-conformance repository)"
        lines.append("| " + " | ".join(
            cell.replace("|", "\\|") for cell in
            (f"`{s['cause']}`", s["attribution"], str(len(s["tests"])),
             f"`{failure_view.strip_local_paths(s['reproduction'])}`" if s["reproduction"] else "-",
             upstream, "yes" if s["waivable"] else "no", s["action"])) + " |")
    return lines


def _since_previous_lines(doc: dict[str, Any]) -> list[str]:
    """The "Changes since the previous bundle" section (report.json ``since_previous``)."""
    prev = doc.get("since_previous")
    if not prev:
        return []
    lines = ["", "## Changes since the previous bundle of this backend", "",
             f"Against `{prev['bundle']}` (started {prev['started_utc']}, verdict "
             f"{prev['verdict']}): {prev['new_failure_count']} new failure(s), "
             f"{prev['fix_count']} fix(es), {prev['changed']} other status change(s), "
             f"{prev['added']} test(s) added"
             + (f" ({prev['added_failing']} of them failing)" if prev.get("added_failing")
                else "") + f", {prev['removed']} removed. New failures and fixes count only "
             "the tests of both runs."]
    if prev.get("unlike"):
        lines += ["", "**The runs differ in kind:**", ""] + [f"- {u}" for u in prev["unlike"]]
    for title, key in (("New failures", "new_failures"), ("Fixes", "fixes")):
        if prev[key]:
            lines += ["", f"{title}:", ""] + [f"- `{n}`: {o or 'absent'} -> {s}"
                                              for n, o, s in prev[key]]
    if prev["environment"]:
        lines += ["", "Changed:", ""] + [f"- {k}: {o} -> {n}" for k, o, n in prev["environment"]]
    return lines


def render(doc: dict[str, Any]) -> str:
    """The Markdown page of a report.json document."""
    p, env, s = doc["platform"], doc["environment"], doc["summary"]
    lines = [
        f"# PJRT conformance report: {failure_view.display_platform(doc)}",
        "",
        verdict_line(doc),
        "",
        f"**{headline(doc)}**",
    ] + root_causes.markdown(doc) + [
        "",
        f"- Suite: {provenance.describe(doc['suite'])}",
        f"- Platform: {p.get('name')} `{' / '.join(str(p.get('platform_version')).splitlines())}`"
        f", {p.get('device_count')} device(s): {', '.join(p.get('device_kinds', []))}",
    ] + _backend_lines(p) + [
        f"- Environment: python {env['python']}, jax {env['jax']}, jaxlib {env['jaxlib']}, "
        f"numpy {env['numpy']}",
        f"- Hypothesis profile: {doc['hypothesis']['profile']} "
        f"(max_examples={doc['hypothesis']['max_examples']}, "
        f"derandomize={doc['hypothesis']['derandomize']})",
        f"- Profile: " + (f"{doc['profile']['name']} (sha256 {doc['profile']['sha256'][:12]}, "
                          f"{doc['profile']['tests']} test ids)" if doc.get("profile") else
                          "none (completeness not checked; not a certification)"),
        f"- Declared capabilities: {', '.join(doc.get('declared_capabilities') or []) or 'none'}",
    ] + _float_controls_lines(doc) + [
        f"- Command: `{failure_view.display_command(doc)}`",
        f"- Processes of the multi_process area: {doc.get('num_processes', 1)}",
        started_line(doc),
    ] + _next_steps_lines(doc) + _since_previous_lines(doc) + [
        "",
        "## Summary",
        "",
        f"Collected {s['collected']}, reported {s['reported']}" +
        (f", expected by the profile {s['expected']}." if s.get("expected") is not None else "."),
        "",
        f"Pass rate: {pass_rate.text(s['by_status']) or 'n/a (no results)'}; "
        f"{pass_rate.DEFINITION}",
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
    lines += coverage_md.markdown(doc)
    lines += _stack_section(doc)
    if doc.get("report_errors"):
        lines += ["", "## Report errors", ""] + [f"- {e}" for e in doc["report_errors"]]
    if doc.get("waivers"):
        lines += ["", "## Waivers", ""] + [f"- `{w['test']}` until {w['expires']}: "
                                           f"{w['reason']} ({w['issue']})"
                                           for w in doc["waivers"]]
    if doc["failures"]:
        by = failure_view.by_attribution(doc["failures"])
        lines += ["", "## Failures", "", "By attribution (plugin first): " + ", ".join(
            f"{g.attribution} {g.count}" for g in by) + ".", ""] + _failure_lines(doc["failures"])
    return "\n".join(lines) + "\n"
