"""The report bundle of a run, and its verification.

A bundle directory holds ``report.json`` (schema 3; ``verify`` reads 2 too), ``report.md``,
``report.html`` (self-contained), ``junit.xml``, the standalone reproductions
``repro/<test>.py`` and ``repro/README.md`` of the failures
(:mod:`conformance.certification.rendering.repro`) and ``MANIFEST.sha256``
(``sha256sum`` format over every other file), and when signed
``MANIFEST.sha256.sig`` (:mod:`conformance.certification.bundle.signing`). :func:`verify`
checks all of it and recomputes the verdict; ``pjrt-conformance verify DIR``
prints the result.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.certification.attribution import attribution_check
from conformance.certification.verdict import plugin_verdict
from conformance.certification.bundle import entries
from conformance.certification import local_paths
from conformance.certification.bundle import merge_check
from conformance.certification.catalog import profiles
from conformance.certification import provenance
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog
from conformance.certification.bundle import log_check
from conformance.certification.bundle import signing
from conformance.certification.rendering import report_html
from conformance.certification.rendering import report_md
from conformance.certification.rendering import rendering_check
from conformance.certification.rendering import repro
from conformance.certification.catalog.waivers import WAIVABLE

MANIFEST = signing.MANIFEST
FILES = ("report.json", "report.md", "report.html", "junit.xml")
_JUNIT_KIND = {"fail_wrong_result": "failure", "fail_error": "error", "crash": "error",
               "timeout": "error", "not_supported": "skipped", "skipped": "skipped",
               "waived": "skipped", "flaky": "failure"}


schema = reportfile.schema
#: How far a bundle's recorded end (``started_utc`` + ``duration_s``) may lie after the
#: clock of the machine that verifies it (clocks of two machines disagree a little); a
#: bundle dated later is not intact (it would pass for the newest of its backend).
CLOCK_SKEW = datetime.timedelta(hours=1)


def render_junit(doc: dict[str, Any]) -> str:
    """JUnit XML: one testcase per result; wrong results and flaky tests are failures, errors,
    crashes and timeouts are errors, not_supported/skipped/waived are skipped."""
    failures = {f["nodeid"]: f for f in doc["failures"]}
    counts = {k: sum(1 for r in doc["results"] if _JUNIT_KIND.get(r["status"]) == k)
              for k in ("failure", "error", "skipped")}
    suite = ET.Element("testsuite", name="pjrt-conformance", tests=str(len(doc["results"])),
                       failures=str(counts["failure"]), errors=str(counts["error"]),
                       skipped=str(counts["skipped"]), time=str(doc.get("duration_s", 0)))
    for r in doc["results"]:
        file, _, name = r["nodeid"].partition("::")
        case = ET.SubElement(suite, "testcase", classname=file, name=name or file,
                             time=str(r["duration_s"]))
        kind = _JUNIT_KIND.get(r["status"])
        if kind:
            detail = failures.get(r["nodeid"], {})
            elem = ET.SubElement(case, kind, type=r["status"],
                                 message=(detail.get("message") or r["status"])[:500])
            elem.text = "\n".join(x for x in (detail.get("message"), detail.get("reproduction"),
                                              detail.get("command")) if x)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def json_text(doc: dict[str, Any]) -> str:
    """report.json's text: compact JSON, one top-level key per line and one item per line
    of each list (``results``, ``failures``, ...), so a bundle stays small (no indentation:
    report.json of a CPU run is 0.7 MB instead of 1.2 MB) and a diff of two reports still
    shows one changed result per line."""
    compact = dict(separators=(",", ":"), ensure_ascii=False)
    lines = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            items = ",\n ".join(json.dumps(x, **compact) for x in value)
            lines.append(f"{json.dumps(key)}:[\n {items}]")
        else:
            lines.append(f"{json.dumps(key)}:{json.dumps(value, **compact)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write(doc: dict[str, Any], out_dir: Path, extra: tuple[str, ...] = ()) -> Path:
    """Write every bundle file and the manifest into ``out_dir``; return report.json's path.
    ``extra``: names of files already in ``out_dir`` that the manifest lists too (the
    results log of a run, packed or not (:mod:`conformance.certification.results.runlog`), and
    its ``run.json``). Every file is written from
    :func:`~conformance.certification.local_paths.for_bundle` of ``doc``: no
    absolute path of this machine."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = local_paths.for_bundle(doc)  # no absolute path of this machine in any file
    texts = {"report.json": json_text(doc),
             "report.md": report_md.render(doc),
             "report.html": report_html.render(doc),
             "junit.xml": render_junit(doc)}
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
    names = FILES + tuple(n for n in extra if (out / n).is_file())
    names += tuple(repro.write(doc, out))  # repro/<test>.py, repro/README.md
    (out / MANIFEST).write_text("".join(f"{sha256_file(out / n)}  {n}\n" for n in names))
    return out / "report.json"


@dataclasses.dataclass
class Verification:
    """Outcome of :func:`verify`: ``problems`` (empty: the bundle is intact and
    consistent), the ``verdict`` it states, whether it has a ``profile``,
    ``notes`` (facts that do not break the bundle, e.g. another suite version)
    and the state of its ``signature``."""

    problems: list[str]
    verdict: str | None
    profile: str | None
    notes: list[str] = dataclasses.field(default_factory=list)
    signature: signing.SignatureCheck | None = None

    @property
    def valid(self) -> bool:
        return not self.problems


def _manifest_name(name: str) -> bool:
    """A manifest entry names a file inside the bundle (relative, POSIX, no '..')."""
    rel = PurePosixPath(name)
    return bool(name) and not rel.is_absolute() and ".." not in rel.parts \
        and rel.as_posix() == name and "\\" not in name


def _check_manifest(path: Path) -> list[str]:
    """Every file of the bundle (subdirectories included) is listed with its sha256,
    every listed file exists with that sha256, and the four report files are listed."""
    manifest = path / MANIFEST
    if not manifest.is_file():
        return [f"{MANIFEST} is missing"]
    try:
        text = manifest.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return [f"{MANIFEST} is unreadable: {err}"]
    problems, listed = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or not re.fullmatch(r"[0-9a-f]{64}", digest):
            problems.append(f"{MANIFEST} line {n} is malformed: {line[:200]!r}")
            continue
        if not _manifest_name(name):
            problems.append(f"{MANIFEST} line {n} names a file outside the bundle: {name!r}")
            continue
        listed.add(name)
        try:   # a listed results.jsonl may be stored as results.jsonl.xz (runlog.compress)
            found = runlog.listed_sha256(path, name)
        except ValueError as err:
            problems.append(f"{name} was modified: {err}")
            continue
        if found is None:
            problems.append(f"{name} is listed in {MANIFEST} but missing")
        elif found != digest:
            problems.append(f"{name} was modified: its sha256 differs from {MANIFEST}")
    problems += [f"{n} is required but not listed in {MANIFEST}" for n in FILES
                 if n not in listed]
    present = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    problems += [f"{rel} is not listed in {MANIFEST}" for rel in present
                 if rel not in (MANIFEST, signing.SIGNATURE) and rel not in listed
                 and runlog.stands_for(path, rel) not in listed]
    return problems


def _odd_entries(path: Path) -> list[str]:
    """One problem per entry of the bundle that is not a regular file or a directory
    (:func:`entries.odd_entries`: a symbolic link, FIFO, socket or device node; never
    opened) and, for each the manifest does not list, that it is not listed."""
    odd = entries.odd_entries(path)
    if not odd:
        return []
    try:
        listed = {line.partition("  ")[2]
                  for line in entries.read_text(path / MANIFEST).splitlines()}
    except (OSError, ValueError):
        listed = set()
    found, _ = entries.walk(path)
    return odd + [f"{rel} is not listed in {MANIFEST}" for rel, what in found
                  if what not in ("regular file", "directory") and rel not in listed]


def _check_dates(doc: dict[str, Any], now: datetime.datetime | None = None) -> list[str]:
    """A problem when the run's recorded start, or its end (start + ``duration_s``), lies
    more than :data:`CLOCK_SKEW` after ``now`` (default: this machine's clock), or when
    ``started_utc`` is not an ISO 8601 time."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    try:
        started = datetime.datetime.fromisoformat(str(doc["started_utc"]))
        if started.tzinfo is None:
            started = started.replace(tzinfo=datetime.timezone.utc)
        ended = started + datetime.timedelta(seconds=float(doc["duration_s"]))
    except (ValueError, TypeError, OverflowError) as err:
        return [f"started_utc {str(doc.get('started_utc'))[:40]!r} with duration_s "
                f"{str(doc.get('duration_s'))[:20]} is not a time ({err})"]
    if ended > now + CLOCK_SKEW:
        return [f"the run is dated in the future: started_utc {doc['started_utc']} (ending "
                f"{ended.astimezone(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC) is after "
                f"this machine's clock ({now:%Y-%m-%d %H:%M} UTC) by more than "
                f"{CLOCK_SKEW.total_seconds() / 3600:g} h"]
    return []


def _check_counts(doc: dict[str, Any], prof: profiles.Profile | None) -> list[str]:
    s, results = doc["summary"], doc["results"]
    problems = []
    if sum(s["by_status"].values()) != s["reported"] or s["reported"] != len(results):
        problems.append(f"counts disagree: by_status sums to {sum(s['by_status'].values())}, "
                        f"reported {s['reported']}, {len(results)} results")
    for status, n in s["by_status"].items():
        if n != sum(1 for r in results if r["status"] == status):
            problems.append(f"by_status[{status!r}]={n} disagrees with the results")
    if s["reported"] > s["collected"]:
        problems.append(f"reported {s['reported']} > collected {s['collected']}")
    for r in results:
        if r["status"] == "waived" and (r.get("waived_from") not in WAIVABLE
                                        or not r.get("waiver")):
            problems.append(f"{r['nodeid']} is waived without a valid waiver")
    if prof is not None:
        expected = sum(prof.expected_counts(doc["platform"].get("local_device_count", 1))
                       .values())
        if s.get("expected") != expected:
            problems.append(f"expected count {s.get('expected')} disagrees with profile "
                            f"{prof.name} ({expected})")
    return problems


def _check_profile(doc: dict[str, Any]) -> tuple[profiles.Profile | None, list[str]]:
    """The shipped profile the bundle names, and a problem if its sha256 differs."""
    if doc["profile"] is None:
        return None, []
    name = doc["profile"]["name"]
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):   # a name, never a path to read
        return None, [f"profile {name!r} is not the name of a shipped profile"]
    try:
        prof = profiles.load(name)
    except ValueError as err:
        return None, [str(err)]
    if prof.sha256 != doc["profile"]["sha256"]:
        return prof, [f"profile {prof.name} of the bundle (sha256 "
                      f"{doc['profile']['sha256'][:12]}) differs from the shipped one "
                      f"({prof.sha256[:12]})"]
    return prof, []


def _check_signature(path: Path, key: Path | None, allowed_signers: Path | None,
                     identity: str | None) -> signing.SignatureCheck:
    if key is not None or allowed_signers is not None:
        return signing.check(path, key=key, allowed_signers=allowed_signers, identity=identity)
    try:
        return signing.status(path)
    except signing.SigningError as err:
        return signing.SignatureCheck("signed (not checked)", str(err))


def verify(path: Path, *, key: Path | None = None, allowed_signers: Path | None = None,
           identity: str | None = None, strict: bool = False) -> Verification:
    """Check a bundle: manifest hashes, the manifest's signature, the schema, the
    suite's identity, the profile, the counts and the verdict recomputed from the
    results.

    ``key`` (OpenSSH public key) or ``allowed_signers`` (+ ``identity``): the
    signature must verify with it. ``strict``: a different suite version, commit
    or wheel, or a modified suite, is a problem rather than a note. Raises
    signing.SigningError when a key is given and ssh-keygen is missing,
    FileNotFoundError / ValueError for a missing or malformed key argument.
    """
    path = Path(path)
    if not path.is_dir():
        return Verification([f"{path} is not a bundle directory"], None, None)
    odd = _odd_entries(path)   # a FIFO or a device is never opened, nor a link's target
    if odd:                    # (it may be one): nothing more is read
        return Verification(odd, None, None)
    problems = _check_manifest(path)
    sig = _check_signature(path, key, allowed_signers, identity)
    problems += [] if sig.ok else [sig.detail]
    try:
        doc = reportfile.load(path)
    except reportfile.MalformedReport as err:
        return Verification(problems + [str(err)], None, None, signature=sig)
    notes = provenance.compare_identity(doc["suite"], provenance.suite_identity())
    if strict:
        problems, notes = problems + [f"--strict: {n}" for n in notes], []
    prof, profile_problems = _check_profile(doc)
    problems += profile_problems + _check_dates(doc) + _check_counts(doc, prof)
    problems += attribution_check.problems(doc)
    problems += log_check.problems(path, doc)   # the log holds every result
    problems += rendering_check.problems(path, doc)
    if doc.get("merge"):     # a merged bundle: its parts, re-checked (merge_check)
        problems += merge_check.verify_embedded(path, doc)
    verdict, reasons = plugin_verdict.decide(
        doc["results"], collected=doc["summary"]["collected"], profile=prof,
        declared=doc["declared_capabilities"],
        device_count=doc["platform"].get("local_device_count", 1), errors=doc["report_errors"],
        interrupted=doc.get("interrupted"))
    if (verdict, reasons) != (doc["verdict"], doc["verdict_reasons"]):
        problems.append(f"stated verdict {doc['verdict']!r} differs from the verdict "
                        f"recomputed from the results: {verdict!r} ({'; '.join(reasons)})")
    try:
        junit = ET.fromstring(runlog.read_stored(path, "junit.xml")).find("testsuite")
        if junit is None or int(junit.get("tests", -1)) != len(doc["results"]):
            problems.append("junit.xml does not hold one testcase per result")
    except (OSError, ValueError, ET.ParseError) as err:
        problems.append(f"junit.xml is unreadable: {err}")
    return Verification(problems, doc["verdict"], doc["profile"]["name"] if prof else None,
                        notes=notes, signature=sig)
