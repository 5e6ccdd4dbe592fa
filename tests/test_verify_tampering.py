"""Tampering that ``verify`` called intact (issue 27 item 8): a report.md of another run,
an attribution flipped only in ``failures[]``, a report.md that is a symbolic link; and
``diff``/``dashboard``, which showed tampered bundles as genuine and compared bundles of
different platforms without a word."""

import copy
import datetime
import json
import shutil

import pytest

from conformance.certification.bundle import bundle_files
from conformance.certification.verdict import report
from conformance.dashboard import bundle_history
from tests.bundle_helpers import HEADER, main, rewrite

FAILING = "conformance/test_a.py::t[2]"


def _doc(started="2026-11-22T00:00:00+00:00", platform="cpu", **statuses):
    ids = ["conformance/test_a.py::t[1]", FAILING, "conformance/test_b.py::u"]
    header = copy.deepcopy(HEADER)
    header["started_utc"] = started
    header["requested_platform"] = header["platform"]["name"] = platform
    results = [report.Result(n, report.area_of(n), statuses.get(n, "pass"), message="boom",
                             tier="informational" if n.endswith("::u") else "core")
               for n in ids]
    return report.build(results, collected=len(results), header=header,
                        today=datetime.date(2026, 11, 22))


def _bundle(tmp_path, name, **kw):
    return bundle_files.write(_doc(**kw), tmp_path / name).parent


def _rehash(path):
    rewrite(path, lambda doc: None)


def _not_intact(capsys, path, fragment):
    problems = bundle_files.verify(path).problems
    assert any(fragment in p for p in problems), problems
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3 and "NOT INTACT" in proc.stdout, proc.stdout


def test_an_untampered_bundle_is_intact(tmp_path, capsys):
    path = _bundle(tmp_path, "b", **{FAILING: "fail_wrong_result"})
    assert bundle_files.verify(path).problems == []
    assert main(capsys, "verify", path).returncode == 1      # intact, not certified


def test_report_md_of_another_run_is_detected(tmp_path, capsys):
    one = _bundle(tmp_path, "one", started="2026-11-22T00:00:00+00:00")
    other = _bundle(tmp_path, "other", started="2026-11-23T10:00:00+00:00")
    shutil.copy(other / "report.md", one / "report.md")
    _rehash(one)                                  # a consistent forgery of the manifest
    _not_intact(capsys, one, "report.md is not rendered from this report.json")


def test_report_html_of_another_run_is_detected(tmp_path, capsys):
    one = _bundle(tmp_path, "one", started="2026-11-22T00:00:00+00:00")
    other = _bundle(tmp_path, "other", started="2026-11-23T10:00:00+00:00")
    shutil.copy(other / "report.html", one / "report.html")
    _rehash(one)
    _not_intact(capsys, one, "report.html is not rendered from this report.json")


@pytest.mark.parametrize("field, value", [("attribution", "framework"), ("status", "pass"),
                                          ("tier", "informational")])
def test_a_field_flipped_only_in_failures_is_detected(tmp_path, capsys, field, value):
    path = _bundle(tmp_path, "b", **{FAILING: "fail_wrong_result"})

    def flip(doc):
        (entry,) = [f for f in doc["failures"] if f["nodeid"] == FAILING]
        assert entry.get(field) != value
        entry[field] = value
    rewrite(path, flip)
    _not_intact(capsys, path, f"failures[] entry of {FAILING} states {field}")


def test_a_failure_without_a_result_is_detected(tmp_path, capsys):
    path = _bundle(tmp_path, "b", **{FAILING: "fail_wrong_result"})
    rewrite(path, lambda doc: doc["failures"].append(
        dict(doc["failures"][0], nodeid="conformance/test_z.py::ghost")))
    _not_intact(capsys, path, "failures[] names 'conformance/test_z.py::ghost'")


def test_report_md_as_a_symlink_is_detected(tmp_path, capsys):
    path = _bundle(tmp_path, "b")
    outside = tmp_path / "elsewhere.md"
    shutil.copy(path / "report.md", outside)     # same bytes: the manifest's hash holds
    (path / "report.md").unlink()
    (path / "report.md").symlink_to(outside)
    _not_intact(capsys, path, "report.md is a symbolic link")


def test_diff_refuses_a_tampered_bundle(tmp_path, capsys):
    old, new = _bundle(tmp_path, "old"), _bundle(tmp_path, "new")
    assert main(capsys, "diff", old, new).returncode == 0
    rewrite(new, lambda doc: doc["results"][1].update(status="crash"))   # counts now lie
    for args in (("diff", old, new), ("diff", new, old), ("diff", old, new / "report.json")):
        proc = main(capsys, *args)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "not intact" in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert not proc.stdout
    lone = tmp_path / "lone.json"                # a report.json without its bundle: compared
    lone.write_text((old / "report.json").read_text())
    assert main(capsys, "diff", lone, old).returncode == 0


def test_diff_of_different_platforms_warns(tmp_path, capsys):
    cpu, other = _bundle(tmp_path, "cpu"), _bundle(tmp_path, "other", platform="cuda")
    proc = main(capsys, "diff", cpu, other)
    assert proc.returncode == 0, proc.stderr
    assert "warning: the bundles are of different platforms" in proc.stderr, proc.stderr
    assert "cuda" in proc.stderr
    proc = main(capsys, "diff", cpu, _bundle(tmp_path, "cpu2"))
    assert "warning" not in proc.stderr


def test_dashboard_marks_a_tampered_bundle_broken(tmp_path):
    reports = tmp_path / "reports"
    good = bundle_files.write(_doc(), reports / "cpu" / "20261122T000000Z").parent
    bad = bundle_files.write(_doc(started="2026-11-23T00:00:00+00:00"),
                             reports / "cpu" / "20261123T000000Z").parent
    doc = json.loads((bad / "report.json").read_text())
    doc["results"][1]["status"] = "crash"        # tampered, manifest not re-hashed
    (bad / "report.json").write_text(json.dumps(doc))
    by_backend, broken = bundle_history.collect(reports)
    assert [b.path for bs in by_backend.values() for b in bs] == [good]
    assert [b.path for b in broken] == [bad] and "not intact" in broken[0].reason


def _with_evidence(tmp_path):
    """A bundle whose failure carries a recorded C API re-run and reference re-run (the
    plugin's wrong result: wrong through the C API too, passes on the CPU client)."""
    from conformance.certification.attribution import attribution_sources
    from conformance.certification.verdict import plugin_verdict

    path = _bundle(tmp_path, "b", **{FAILING: "fail_wrong_result"})

    def attribute(doc):
        for entry in doc["results"] + doc["failures"]:
            if entry["nodeid"] == FAILING:
                entry["attribution"], entry["evidence"] = "plugin", [
                    attribution_sources.item("capi", **attribution_sources.capi_facts(
                        "execute", "wrong", "element 0 differs")),
                    attribution_sources.item("reference", "plugin", status="fail_wrong_result",
                                             reference_status="pass")]
        doc["stack_findings"] = attribution_sources.stack_findings(doc["results"])
        doc["verdict"], doc["verdict_reasons"] = plugin_verdict.decide(
            doc["results"], collected=doc["summary"]["collected"], profile=None,
            declared=[], device_count=1, errors=[], interrupted=None)
    rewrite(path, attribute, render=True)
    assert bundle_files.verify(path).problems == []
    return path


TAMPERED = {   # (what, the change to the failure's evidence items, what verify says)
    "capi outcome": (lambda ev: ev[0].update(outcome="correct"),
                     "evidence 0 (capi) of conformance/test_a.py::t[2] answers 'plugin'; its "
                     "facts give 'framework'"),
    "capi answer": (lambda ev: ev[0].update(answer="framework"),
                    "evidence 0 (capi) of conformance/test_a.py::t[2] answers 'framework'"),
    "reference status": (lambda ev: ev[1].update(reference_status="fail_wrong_result"),
                         "evidence 1 (reference) of conformance/test_a.py::t[2] answers "
                         "'plugin'; its facts give 'unattributed'"),
    "reference result status": (lambda ev: ev[1].update(status="crash"),
                                "states status 'crash'; the result's is 'fail_wrong_result'"),
    "order": (lambda ev: ev.reverse(), "evidence of conformance/test_a.py::t[2] is not "
                                       "strongest first"),
    "unknown source": (lambda ev: ev.append({"source": "vendor", "answer": "plugin",
                                             "legacy": "trust me"}),
                       None),   # the schema rejects it before the re-check
    "both flipped to framework": (
        lambda ev: ev[0].update(outcome="correct", answer="framework"),
        "attribution plugin of conformance/test_a.py::t[2] is not the one its evidence "
        "decides (framework)"),
}


@pytest.mark.parametrize("what", TAMPERED)
def test_a_tampered_evidence_item_is_detected(tmp_path, capsys, what):
    """A structured evidence item changed in report.json (results[] and failures[]
    alike, the manifest rewritten) is caught by its re-check against its own facts."""
    change, fragment = TAMPERED[what]
    path = _with_evidence(tmp_path)

    def tamper(doc):
        for entry in doc["results"] + doc["failures"]:
            if entry["nodeid"] == FAILING:
                change(entry["evidence"])
    rewrite(path, tamper)
    if fragment is None:
        proc = main(capsys, "verify", path)
        assert proc.returncode == 3 and "does not match schema" in proc.stdout + proc.stderr
        return
    _not_intact(capsys, path, fragment)
