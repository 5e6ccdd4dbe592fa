"""How a report's failures are shown to people (shared by report.html, report.md and
the terminal summary): grouped by area and likely root cause, each input shown once,
local paths stripped, evidence items written as prose (:func:`evidence_lines`). Pure
functions of ``report.json`` entries; nothing here decides a status or a verdict.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import textwrap
from typing import Any

from conformance.certification.attribution.reference_rule import REFERENCE_NAME
from conformance.certification.attribution.attribution_sources import SHARED_WITH_XLA

#: Statuses counted as failures in tables and bars (``flaky`` when the run has it).
FAILING = ("fail_wrong_result", "fail_error", "crash", "timeout", "flaky")
_HYPOTHESIS_GROUP = re.compile(r"Hypothesis found \d+ distinct failures")
#: A local path prefix: ``.../site-packages/``, a home directory, or anything up to the
#: suite's own packages (a worktree or checkout).
_SITE = re.compile(r"(?:/[^\s'\"()<>:,=]+)*/(?:site|dist)-packages/")
_PACKAGE = re.compile(r"(?:/[^\s'\"()<>:,=]+)*?/(?=(?:conformance|runtime|tests|benchmarks)/)")
_HOME = re.compile(r"/(?:home/[^/\s'\"]+|root|Users/[^/\s'\"]+)(?=/)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_OUTPUT_OPTIONS = ("--output", "--report-dir")
#: Where the message's own text ends: the reproduction note and Hypothesis' notes
#: (shown separately, once).
_NOTE_STARTS = ("Reproduction:", "Failing test case:", "Falsifying example:",
                "Falsifying explicit example:", "You can reproduce this")


def strip_local_paths(text: str | None) -> str:
    """``text`` with local directory prefixes removed: ``/x/site-packages/jax/a.py`` ->
    ``jax/a.py``, ``/work/wt/a/conformance/b.py`` -> ``conformance/b.py``, a home
    directory -> ``~``. None gives ``""``."""
    if not text:
        return ""
    return _HOME.sub("~", _PACKAGE.sub("", _SITE.sub("", text)))


def display_platform(doc: dict[str, Any]) -> str:
    """The platform as the user asked for it (``requested_platform``: ``cuda``, not the
    client's ``gpu``); the client's name follows in parentheses when it differs."""
    asked = doc.get("requested_platform") or doc.get("platform", {}).get("name") or "?"
    client = doc.get("platform", {}).get("name")
    return asked if not client or client == asked else f"{asked} (client reports {client})"


def display_command(doc: dict[str, Any]) -> str:
    """The user's command line without local output paths and without the pytest
    arguments after ``--`` that the tool adds internally; ``cli.py``/``__main__.py``
    are shown as ``pjrt-conformance``."""
    try:
        words = shlex.split(doc.get("command") or "")
    except ValueError:
        return strip_local_paths(doc.get("command"))
    if not words:
        return ""
    if words[0] in ("cli.py", "__main__.py") or words[0].endswith("conformance.cli"):
        words[0] = "pjrt-conformance"
    if words[0] == "pjrt-conformance" and "--" in words:
        words = words[:words.index("--")]
    kept: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in _OUTPUT_OPTIONS:
            skip = True
            continue
        if not w.startswith(tuple(o + "=" for o in _OUTPUT_OPTIONS)):
            kept.append(strip_local_paths(w))
    return shlex.join(kept)


def headline(failure: dict[str, Any]) -> str:
    """The first line that says what went wrong. A Hypothesis group ("found N distinct
    failures") is headed by its first real sub-failure when the message carries it."""
    lines = [ln for ln in (failure.get("message") or "").splitlines() if ln.strip()]
    if not lines:
        return failure.get("status", "")
    if _HYPOTHESIS_GROUP.search(lines[0]):
        first = next((ln.strip() for ln in lines[1:] if ln.strip().startswith("first:")), None)
        if first:
            return f"{first.removeprefix('first:').strip()} ({_HYPOTHESIS_GROUP.search(lines[0]).group(0)})"
    return strip_local_paths(lines[0])


def details(failure: dict[str, Any]) -> str:
    """The message after its headline and before the reproduction and Hypothesis notes:
    observed vs expected values (``at (i,): out=..., expected=...``) and the like."""
    body = []
    for ln in (failure.get("message") or "").splitlines()[1:]:
        if ln.startswith(_NOTE_STARTS):
            break
        if not ln.strip().startswith("first:"):
            body.append(ln)
    return strip_local_paths(textwrap.dedent("\n".join(body)).strip("\n"))


def drawn_input(failure: dict[str, Any]) -> str:
    """The input of the failing call, once: the arrays it got, else Hypothesis' drawn
    example (local paths stripped)."""
    return strip_local_paths(failure.get("inputs") or failure.get("falsifying_example"))


def short_type(text: str) -> str:
    """``text`` with the module path of a leading exception type dropped:
    ``a.b.BackendCrash: x`` -> ``BackendCrash: x``."""
    return re.sub(r"^(?:\w+\.)+(?=\w+:)", "", text)


def root_cause(failure: dict[str, Any]) -> str:
    """The likely root cause a failure is grouped under: its defect id (engineer-set
    ``defect``), else its known-failure reason, else its exception type and message
    prefix with numbers and the bracketed call blanked."""
    defect = failure.get("defect")
    if isinstance(defect, dict) and defect.get("id"):
        return f"{defect['id']}: {defect.get('summary') or ''}".rstrip(": ")
    known = failure.get("known_failure") or ""
    if known:
        return re.sub(r"\s*\([^()]*:\d+\)$", "", known.removeprefix("known: "))
    text = short_type(re.sub(r"\[.*", "", headline(failure)))
    return _NUMBER.sub("N", text).strip()[:100] or failure.get("status", "")


def anchor(text: str) -> str:
    """An HTML id for ``text`` (letters, digits, ``-``)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


@dataclasses.dataclass
class Cause:
    """Failures of one area that share a root cause."""

    title: str
    anchor: str
    failures: list[dict[str, Any]]


@dataclasses.dataclass
class AreaGroup:
    """The failures of one area, by cause."""

    area: str
    anchor: str
    causes: list[Cause]

    @property
    def count(self) -> int:
        return sum(len(c.failures) for c in self.causes)


def group(failures: list[dict[str, Any]]) -> list[AreaGroup]:
    """Failures by area (in order of first appearance), then by :func:`root_cause`."""
    areas: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for f in failures:
        area = f.get("area") or "other"
        areas.setdefault(area, {}).setdefault(root_cause(f), []).append(f)
    return [AreaGroup(area, f"area-{anchor(area)}",
                      [Cause(title, f"cause-{anchor(area)}-{i}", items)
                       for i, (title, items) in enumerate(causes.items())])
            for area, causes in areas.items()]



def _summary(reason: str) -> str:
    return reason.split(": ", 1)[0]


def full_reasons(doc: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The verdict reasons with every test they name (the stored reasons name three and
    ``(+N)``): recomputed with :func:`conformance.certification.verdict.plugin_verdict` from the
    results, and kept only when they agree with the stored reasons (else the stored
    ones). Each is ``(summary, test ids)``; a reason naming no tests has ``[]``."""
    from conformance.certification.catalog import profiles
    from conformance.certification.verdict import plugin_verdict

    stated = list(doc.get("verdict_reasons") or [])
    recomputed = stated
    try:
        prof = None
        if doc.get("profile"):
            prof = profiles.load(doc["profile"]["name"])
            if prof.header().get("sha256") != doc["profile"].get("sha256"):
                raise ValueError("the shipped profile differs from the report's")
        _, full = plugin_verdict.decide(
            doc["results"], collected=doc["summary"]["collected"], profile=prof,
            declared=list(doc.get("declared_capabilities") or []),
            device_count=doc["platform"].get("local_device_count", 1),
            errors=list(doc.get("report_errors") or []), examples=None)
        if [_summary(r) for r in full] == [_summary(r) for r in stated]:
            recomputed = full
    except (KeyError, TypeError, ValueError, OSError):
        pass
    out = []
    for reason in recomputed:
        head, _, rest = reason.partition(": ")
        items = [t for t in rest.split(", ")] if rest and "::" in rest else []
        out.append((head if items else reason, items))
    return out


#: The order of the failure groups on the page: what the plugin vendor must fix first,
#: then what no evidence decides, then what is not the plugin's.
ATTRIBUTION_ORDER = ("plugin", "unattributed", "framework", "suite")
#: Characters of a traceback's tail shown on the page (report.json keeps more).
TRACEBACK_SHOWN = 1000
_NP_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|complex|bool_)\w*\((?P<v>[^()]*)\)")
_AT = re.compile(r"^(?P<pre>\s*at \((?P<idx>[\d, ]*)\): out=.*)$")
_SITE_PACKAGE = re.compile(r"/(?:site|dist)-packages/((?:jax_plugins/)?[A-Za-z0-9_.-]+)/")


@dataclasses.dataclass
class AttributionGroup:
    """The failures of one attribution (``plugin``, ``unattributed``, ``framework``,
    ``suite``), by area and cause."""

    attribution: str
    anchor: str
    areas: list[AreaGroup]

    @property
    def count(self) -> int:
        return sum(a.count for a in self.areas)


def by_attribution(failures: list[dict[str, Any]]) -> list[AttributionGroup]:
    """``failures`` grouped by attribution in :data:`ATTRIBUTION_ORDER` (a failure
    without one is ``unattributed``; empty groups left out), each by :func:`group`."""
    found: dict[str, list[dict[str, Any]]] = {}
    for f in failures:
        found.setdefault(f.get("attribution") or "unattributed", []).append(f)
    order = list(ATTRIBUTION_ORDER) + sorted(a for a in found if a not in ATTRIBUTION_ORDER)
    out = []
    for a in order:
        if a in found:
            areas = group(found[a])
            for g in areas:   # anchors unique across attributions
                g.anchor = f"{anchor(a)}-{g.anchor}"
                for c in g.causes:
                    c.anchor = f"{anchor(a)}-{c.anchor}"
            out.append(AttributionGroup(a, f"attr-{anchor(a)}", areas))
    return out


def _version(v: Any) -> str:
    return ".".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v or "")


def identity(doc: dict[str, Any]) -> dict[str, Any]:
    """Who was tested, for the page's title and first lines: ``plugin`` (distribution
    or package name, "" for jaxlib's built-in client), ``version`` ("" when not
    recorded), ``platform``, ``sha256`` (12 hex digits of the library, ""), ``capi`` and
    ``framework_capi`` (``"0.115"``, ""), ``jax``, ``jaxlib`` and ``warnings`` (the
    version findings, a C API skew among them)."""
    p = doc.get("platform") or {}
    loaded = p.get("loaded") or {}
    pkg = p.get("plugin_package") or {}
    name, version = pkg.get("distribution") or "", pkg.get("version") or ""
    path = loaded.get("library_path") or ""
    if not name and path:
        m = _SITE_PACKAGE.search(path)
        name = m.group(1) if m else path.rsplit("/", 1)[-1]
    env = doc.get("environment") or {}
    return {"plugin": name, "version": version, "platform": display_platform(doc),
            "how": loaded.get("how") or "", "sha256": (loaded.get("library_sha256") or "")[:12],
            "capi": _version(p.get("pjrt_c_api_version")),
            "framework_capi": _version(p.get("framework_pjrt_c_api_version")),
            "jax": env.get("jax") or "?", "jaxlib": env.get("jaxlib") or "?",
            "warnings": [str(w) for w in p.get("version_findings") or []]}


def title(doc: dict[str, Any]) -> str:
    """``cpu · lammps_jax_pjrt_cpu (version not recorded) · jax 0.10.2/jaxlib 0.10.2``;
    for jaxlib's built-in client ``cpu · jaxlib's built-in client · jax .../jaxlib ...``."""
    ident = identity(doc)
    who = (f"{ident['plugin']} {ident['version'] or '(version not recorded)'}"
           if ident["plugin"] else "jaxlib's built-in client")
    return f"{ident['platform']} \u00b7 {who} \u00b7 jax {ident['jax']}/jaxlib {ident['jaxlib']}"


def clean_reprs(text: str) -> str:
    """``np.float32(1.5)`` -> ``1.5`` (NumPy 2's scalar reprs, as values)."""
    return _NP_SCALAR.sub(lambda m: m.group("v"), text)


def _bits(a: Any, idx: tuple[int, ...]) -> str:
    width = a.dtype.itemsize
    return f"0x{int(a.view(f'u{width}')[idx]):0{2 * width}x}"


def with_bits(failure: dict[str, Any], text: str) -> str:
    """``text`` (from :func:`details`) with the hex bits of observed and expected added to
    each ``at (i, j): out=..., expected=...`` line that lacks them, when the failure
    recorded both arrays (a bitwise mismatch of two NaNs then shows which bits differ)."""
    arrays = failure.get("arrays") or {}
    if "(bits" in text or not arrays.get("observed") or not arrays.get("expected"):
        return text
    from conformance.helpers import reproduction

    try:
        out = reproduction.decode_array(arrays["observed"])
        want = reproduction.decode_array(arrays["expected"])
    except ValueError:
        return text
    lines = []
    for ln in text.splitlines():
        m = _AT.match(ln)
        if m and out.shape == want.shape and out.dtype.kind in "fc" and out.dtype.itemsize \
                in (1, 2, 4, 8):
            try:
                idx = tuple(int(i) for i in m.group("idx").replace(" ", "").split(",") if i)
                ln = f"{ln} (bits {_bits(out, idx)} vs {_bits(want, idx)})"
            except (ValueError, IndexError, TypeError):
                pass
        lines.append(ln)
    return "\n".join(lines)


def shown_details(failure: dict[str, Any]) -> str:
    """:func:`details` as a page shows it: hex bits added, NumPy scalar reprs as values."""
    return clean_reprs(with_bits(failure, details(failure)))


def traceback_tail(text: str | None) -> str:
    """The last :data:`TRACEBACK_SHOWN` characters of a traceback (local paths stripped),
    from a line start, with a note when it was cut."""
    text = strip_local_paths(text)
    if len(text) <= TRACEBACK_SHOWN:
        return text
    tail = text[-TRACEBACK_SHOWN:]
    tail = tail[tail.find("\n") + 1:] if "\n" in tail else tail
    return f"[{len(text) - len(tail)} characters before this are in report.json]\n{tail}"


def compiler_pass_line(failure: dict[str, Any]) -> str:
    """"compiler pass: <pass> (<how decided>)" or "compiler pass: undecided (<why>)" for
    a failure with a ``compiler_pass`` finding (:mod:`conformance.programs.compiler_pass`),
    else ""."""
    found = failure.get("compiler_pass")
    if not isinstance(found, dict):
        return ""
    return f"compiler pass: {found.get('pass') or 'undecided'} ({found.get('reason', '')})"


def repro_file(failure: dict[str, Any]) -> str | None:
    """The bundle's standalone reproduction of ``failure`` (``repro/<file>.py``), None
    when the run recorded nothing a script can re-run."""
    from conformance.certification.rendering import repro

    return f"{repro.DIR}/{repro.file_name(failure['nodeid'])}" if repro.kind(failure) else None


def _catalog_text(e: dict[str, Any], status: str) -> str:
    if "known_failure" in e:
        return f"old-format known failure without attribution: {e['known_failure']}"
    if "expected" in e:
        return (f"{e['defect']} matches the test id but expects {'/'.join(e['expected'])}, "
                f"got {status}")
    return f"{e['defect']} ({e.get('upstream', '')}): {e.get('note', '')}"


def _reference_text(e: dict[str, Any], status: str) -> str:
    ref, here = e.get("reference_status"), e.get("status", status)
    if ref is None:
        return f"not re-run on {REFERENCE_NAME}: {e.get('not_rerun', '')}"
    if ref == "pass":
        return f"passes on {REFERENCE_NAME}"
    if ref != here:
        return f"{ref} on {REFERENCE_NAME} (here {here})"
    d = e.get("reference_defect")
    if d:
        return (f"{SHARED_WITH_XLA}: fails the same on {REFERENCE_NAME}, where it is the XLA "
                f"defect {d['id']} ({d['upstream']}); a plugin that ships XLA's compiler and "
                f"kernels ships this defect")
    return (f"fails the same on {REFERENCE_NAME} ({ref}): in code both share (XLA or "
            f"jaxlib); only a pass of the PJRT C API re-run puts it above the C API")


def _capi_text(e: dict[str, Any], status: str) -> str:
    said = {"correct": "correct through the PJRT C API",
            "wrong": "wrong through the PJRT C API too"}.get(e["outcome"], e["outcome"])
    return f"{said}: {e.get('detail', '')}"


#: The prose of each evidence source's item (``e``: the item, ``status``: its result's
#: status): the only place evidence becomes text. One per kind of
#: :data:`conformance.certification.attribution.attribution_sources.KINDS`
#: (tests/test_attribution.py).
EVIDENCE_TEXT = {
    "lowering": lambda e, status: (f"{e['defect']}: the defect is in the program jax "
                                   f"lowered; a re-run of the same program below the "
                                   f"framework reproduces it"),
    "registration": lambda e, status: e["quote"],
    "oracle": lambda e, status: e["quote"],
    "capi": _capi_text,
    "reference": _reference_text,
    "catalog": _catalog_text,
}


def evidence_text(e: Any, status: str = "") -> str:
    """One evidence item as a line ``<source>: <text>`` (``status``: its result's). A
    schema-2 string is shown as it is, a legacy item as its recorded text, an item of a
    source this suite does not know as its facts."""
    if isinstance(e, str):
        return e
    source = str(e.get("source"))
    if "legacy" in e:
        return f"{source}: {e['legacy']}"
    render = EVIDENCE_TEXT.get(source)
    try:
        text = render(e, status) if render else None
    except (KeyError, TypeError):
        text = None
    if text is None:
        text = ", ".join(f"{k}={v}" for k, v in e.items() if k != "source")
    return f"{source}: {text}"


def evidence_lines(failure: dict[str, Any]) -> list[str]:
    """The evidence of ``failure`` (a ``failures[]`` entry), one line per item,
    strongest first."""
    status = failure.get("waived_from") or failure.get("status") or ""
    return [evidence_text(e, status) for e in failure.get("evidence") or []]
