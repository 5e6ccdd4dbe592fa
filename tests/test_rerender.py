"""``pjrt-conformance rerender``: a bundle rebuilt from its own records, attribution decided
again under the PJRT C API boundary rule (conformance.certification.bundle.rerender)."""

import json
import shutil
import subprocess

import pytest

from conformance.certification.bundle import bundle_files
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import profiles
from conformance.certification.verdict import report
from conformance.certification.results import runlog
from conformance.certification.bundle import signing
from conformance.processes import reference_differential
from tests.bundle_helpers import crafted, main, rewrite

REF = reference_differential.REFERENCE_NAME


def _pids(n):
    """``n`` profile test ids that no catalog defect names (their attribution comes from
    the recorded evidence alone)."""
    entries = defect_catalog.entries(defect_catalog.load())
    free = [p for p in sorted(profiles.load(profiles.DEFAULT_PROFILE).tests)
            if "test_types.py::" in p
            and not any(e.matches("conformance/" + p.replace("{device}", "cpu:0"))
                        for e in entries)]
    assert len(free) >= n
    return free[:n]


def _recompute(doc):
    from conformance.certification.attribution import attribution_sources
    from conformance.certification.verdict import plugin_verdict
    doc["stack_findings"] = attribution_sources.stack_findings(doc["results"])
    doc["verdict"], doc["verdict_reasons"] = plugin_verdict.decide(
        doc["results"], collected=doc["summary"]["collected"],
        profile=profiles.load(profiles.DEFAULT_PROFILE), declared=[], device_count=1,
        errors=[], interrupted=None)


def _attributed(path, evidence, *, schema_version=None):
    """Give the results of ``evidence`` (profile id -> (attribution, evidence)) those,
    with the document's derived fields recomputed and its files rendered again."""
    def old(doc):
        for entry in doc["results"] + doc["failures"]:
            pid = entry["test_id"]
            if pid in evidence:
                entry["attribution"], entry["evidence"] = evidence[pid][0], evidence[pid][1]
        if schema_version is not None:
            doc["schema_version"] = schema_version
        _recompute(doc)

    def older_columns(doc):  # after rendering: today's renderers need these columns
        for table in [doc["summary"]["by_status"], *doc["areas"].values(),
                      *doc["tiers"].values(), *doc["kernel_families"].values()]:
            table.pop("flaky", None)
        doc.pop("shared_with_xla", None)
    rewrite(path, old, render=True)
    rewrite(path, older_columns)


def _old_bundle(tmp_path):
    """A schema-2 bundle (evidence as prose) as an older suite wrote it: three wrong
    results whose evidence is the run's re-runs, no ``flaky`` column, no XLA-shared
    count."""
    a, b, c = _pids(3)
    path = crafted(tmp_path, "old", **{a: "fail_wrong_result", b: "fail_wrong_result",
                                       c: "fail_wrong_result"})
    _attributed(path, {
        a: ("plugin", [f"reference: passes on {REF}"]),
        b: ("framework", ["capi: correct through the PJRT C API: the plugin's own result "
                          "is right"]),
        c: ("unattributed", [f"reference: fails the same on {REF} (fail_wrong_result)"])},
        schema_version=2)
    assert bundle_files.verify(path).problems == []
    return path, (a, b, c)


def _ref(status, ref_status, answer):
    return {"source": "reference", "answer": answer, "status": status,
            "reference_status": ref_status}


def _rule_changed_bundle(tmp_path):
    """A schema-3 bundle attributed under an older rule: failing the same on the
    reference CPU client was the framework's."""
    a, b, c = _pids(3)
    wrong = "fail_wrong_result"
    path = crafted(tmp_path, "rule", **{a: wrong, b: wrong, c: wrong})
    _attributed(path, {
        a: ("plugin", [_ref(wrong, "pass", "plugin")]),
        b: ("framework", [{"source": "capi", "answer": "framework", "check": "execute",
                           "outcome": "correct", "detail": "the plugin's own result is right"}]),
        c: ("framework", [_ref(wrong, wrong, "framework")])})
    return path, (a, b, c)


def test_a_schema_2_bundle_keeps_its_re_runs_as_recorded(tmp_path, capsys):
    """Evidence strings are legacy items: not read back, they keep the attribution the
    bundle recorded; the bundle is written in the current schema and says the same."""
    path, (a, b, c) = _old_bundle(tmp_path)
    before = {ln for ln in (path / "report.md").read_text().splitlines() if "evidence:" in ln}
    assert main(capsys, "rerender", path).returncode == 0
    doc = json.loads((path / "report.json").read_text())
    assert doc["schema_version"] == report.SCHEMA_VERSION
    got = {r["test_id"]: (r["attribution"], r["evidence"]) for r in doc["results"]
           if "attribution" in r}
    assert got[a] == ("plugin", [{"source": "reference", "answer": "plugin",
                                  "legacy": f"passes on {REF}"}])
    assert got[b][0] == "framework" and got[b][1][0]["source"] == "capi"
    assert got[c][0] == "unattributed"
    after = {ln for ln in (path / "report.md").read_text().splitlines() if "evidence:" in ln}
    assert after == before and len(after) == 3
    assert bundle_files.verify(path).problems == []


def _keypair(tmp_path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "k",
                    "-f", str(tmp_path / "k")], check=True, timeout=60)
    return tmp_path / "k", tmp_path / "k.pub"


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_an_old_bundle_is_reattributed_rerendered_and_signed(tmp_path, capsys):
    path, (a, b, c) = _rule_changed_bundle(tmp_path)
    problems = bundle_files.verify(path).problems   # the rule changed: verify says so
    assert any("evidence 0 (reference)" in p and "answers 'framework'" in p
               for p in problems), problems
    key, pub = _keypair(tmp_path)
    out = main(capsys, "rerender", path, "--key", key)
    assert out.returncode == 0, out.stderr
    assert "plugin 1, framework 1, suite 0, unattributed 1" in out.stdout
    doc = json.loads((path / "report.json").read_text())
    got = {r["test_id"]: (r["attribution"], r["evidence"]) for r in doc["results"]
           if "attribution" in r}
    assert got[a] == ("plugin", [_ref("fail_wrong_result", "pass", "plugin")])
    assert got[b][0] == "framework" and got[b][1][0]["outcome"] == "correct"
    assert got[c] == ("unattributed", [_ref("fail_wrong_result", "fail_wrong_result",
                                            "unattributed")])
    md = (path / "report.md").read_text()
    assert f"evidence: reference: passes on {REF}" in md
    assert "evidence: capi: correct through the PJRT C API: the plugin's own result" in md
    assert "only a pass of the PJRT C API re-run" in md
    assert {f["test_id"]: f["attribution"] for f in doc["failures"]} == \
        {k: v[0] for k, v in got.items()}
    assert doc["summary"]["by_status"]["flaky"] == 0 and "shared_with_xla" in doc
    assert "Why not certified" in (path / "report.html").read_text()
    # junit.xml is stored as its exact bytes in junit.xml.xz; the manifest lists junit.xml
    assert not (path / "junit.xml").exists() and (path / "junit.xml.xz").is_file()
    assert "  junit.xml\n" in (path / bundle_files.MANIFEST).read_text()
    assert main(capsys, "verify", path, "--key", pub).returncode == 1   # intact, not certified
    assert bundle_files.verify(path, key=pub).problems == []


def test_rerender_reads_data_not_prose(tmp_path, monkeypatch):
    """Evidence prose changed arbitrarily (every renderer, and a schema-2 bundle's
    strings) changes report.md and report.html, never what rerender decides."""
    from conformance.certification.attribution import attribution_sources
    from conformance.certification.bundle import rerender
    from conformance.certification.rendering import failure_view

    plain, _ = _rule_changed_bundle(tmp_path / "plain")
    odd, _ = _rule_changed_bundle(tmp_path / "odd")
    rerender.rerender(plain)
    monkeypatch.setattr(failure_view, "EVIDENCE_TEXT",
                        {k: (lambda e, status: "passes on ~ fails the same (crash) ~ correct")
                         for k in attribution_sources.NAMES})
    rerender.rerender(odd)
    assert (odd / "report.json").read_bytes() == (plain / "report.json").read_bytes()
    assert "passes on ~ fails the same" in (odd / "report.md").read_text()
    assert "passes on ~ fails the same" not in (plain / "report.md").read_text()
    # a schema-2 bundle whose strings say anything at all: the same attributions
    old, (a, b, c) = _old_bundle(tmp_path / "old")
    garbled, _ = _old_bundle(tmp_path / "garbled")

    def garble(doc):
        for entry in doc["results"] + doc["failures"]:
            entry["evidence"] = [e.split(": ", 1)[0] + ": wrong through the PJRT C API too"
                                 for e in entry.get("evidence", [])]
    rewrite(garbled, garble)
    docs = [rerender.rerender(p) for p in (old, garbled)]
    assert [[(r["nodeid"], r.get("attribution")) for r in d["results"]] for d in docs][0] == \
        [[(r["nodeid"], r.get("attribution")) for r in d["results"]] for d in docs][1]


@pytest.mark.parametrize("make", [_old_bundle, _rule_changed_bundle], ids=["schema2", "schema3"])
def test_rerender_is_stable_and_a_tampered_bundle_is_refused_untouched(tmp_path, capsys, make):
    path, _ = make(tmp_path)
    assert main(capsys, "rerender", path).returncode == 0
    first = {p.name: p.read_bytes() for p in path.rglob("*") if p.is_file()}
    assert main(capsys, "rerender", path).returncode == 0   # the same records, the same bundle
    assert {p.name: p.read_bytes() for p in path.rglob("*") if p.is_file()} == first
    assert not (path / signing.SIGNATURE).exists()   # no key: unsigned
    with open(path / "report.md", "a") as f:
        f.write("forged\n")
    before = {p.name: p.read_bytes() for p in path.rglob("*") if p.is_file()}
    out = main(capsys, "rerender", path)
    assert out.returncode == 3 and "not intact, refusing" in out.stderr
    assert {p.name: p.read_bytes() for p in path.rglob("*") if p.is_file()} == before


def test_a_changed_junit_xz_breaks_the_bundle(tmp_path, capsys):
    path, _ = _old_bundle(tmp_path)
    assert main(capsys, "rerender", path).returncode == 0
    text = runlog.read_stored(path, "junit.xml")
    (path / "junit.xml.xz").unlink()
    (path / "junit.xml").write_bytes(text.replace(b"<testcase ", b"<testcase x=\"1\" ", 1))
    assert "junit.xml was modified: its sha256 differs from MANIFEST.sha256" in \
        bundle_files.verify(path).problems


def test_an_old_byte_for_byte_log_is_packed(tmp_path, capsys):
    path, _ = _old_bundle(tmp_path)
    record = {"$report_type": "TestReport", "nodeid": "conformance/test_x.py::t",
              "location": ["conformance/test_x.py", 1, "t"], "when": "call",
              "outcome": "passed", "longrepr": None, "duration": 0.5, "keywords": {"t": 1},
              "user_properties": [], "sections": [["Captured stdout", "x" * 1000]]}
    others = [{**record, "nodeid": r["nodeid"], "sections": [],
               "location": [r["nodeid"].split("::")[0], 1, "t"]}
              for r in json.loads((path / "report.json").read_text())["results"]]
    (path / runlog.LOG).write_text("".join(json.dumps(r) + "\n" for r in [record, *others]))
    names = sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                   if p.is_file() and p.name != bundle_files.MANIFEST)
    (path / bundle_files.MANIFEST).write_text(
        "".join(f"{bundle_files.sha256_file(path / n)}  {n}\n" for n in names))
    runlog.compress(path)   # as older bundles were stored: results.jsonl listed, .xz present
    assert bundle_files.verify(path).problems == []
    assert main(capsys, "rerender", path).returncode == 0
    assert f"  {runlog.PACKED}\n" in (path / bundle_files.MANIFEST).read_text()
    back = runlog.records(path / runlog.PACKED)[0]
    assert back["duration"] == 0.5 and back["keywords"] == {} and "sections" not in back
    assert bundle_files.verify(path).problems == []


def test_store_xz_names_and_bad_input(tmp_path):
    (tmp_path / "junit.xml").write_bytes(b"<x/>")
    assert runlog.store_xz(tmp_path, "junit.xml") == tmp_path / "junit.xml.xz"
    assert runlog.read_stored(tmp_path, "junit.xml") == b"<x/>"
    assert runlog.stands_for(tmp_path, "junit.xml.xz") == "junit.xml"
    assert runlog.store_xz(tmp_path, "junit.xml") is None   # nothing plain left
    with pytest.raises(ValueError, match="argument 'name'"):
        runlog.store_xz(tmp_path, "report.json")
    (tmp_path / "junit.xml.xz").write_bytes(b"not xz")
    with pytest.raises(ValueError, match="junit.xml.xz is not a valid xz file"):
        runlog.read_stored(tmp_path, "junit.xml")
    with pytest.raises(FileNotFoundError):
        runlog.read_stored(tmp_path / "missing", "junit.xml")
