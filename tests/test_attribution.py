"""Attribution of non-pass results, the two-part verdict, and verify's checks of both."""

import datetime
import json

import pytest

from conformance.certification.attribution import attribution_sources
from conformance.certification.bundle import bundle_files
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.certification.verdict import report
from conformance.certification.verdict import plugin_verdict
from conformance.certification.catalog import waivers
from conformance.certification.rendering import failure_view
from conformance.processes import reference_differential
from tests.bundle_helpers import HEADER, crafted, rewrite
from tests.bundle_helpers import clean, flagged

IS_READY = "conformance/test_lifecycle.py::test_use_after_delete_raises[is_ready]"
CBRT = "conformance/test_kernels_elementwise.py::test_float_special_values[cbrt-float32]"


def _source(name, answer):
    return attribution_sources.Source(name, lambda record: answer)


def test_strongest_source_decides_and_every_answer_is_evidence():
    sources = [_source("catalog", {"answer": "framework", "defect": "d", "upstream": "u",
                                   "note": "listed"}),
               _source("reference", {"answer": "plugin", "status": "crash",
                                     "reference_status": "pass"}),
               _source("capi", None)]
    assert attribution_sources.decide({"nodeid": "x", "status": "crash"}, sources) == ("plugin", [
        {"source": "reference", "answer": "plugin", "status": "crash",
         "reference_status": "pass"},
        {"source": "catalog", "answer": "framework", "defect": "d", "upstream": "u",
         "note": "listed"}])
    only_evidence = [_source("reference", {"answer": "unattributed", "status": "crash",
                                           "reference_status": None, "not_rerun": "timed out"})]
    assert attribution_sources.decide({}, only_evidence) == ("unattributed", [
        {"source": "reference", "answer": "unattributed", "status": "crash",
         "not_rerun": "timed out"}])
    assert attribution_sources.decide({}, []) == ("unattributed", [])


def test_a_source_answering_nonsense_is_an_error():
    with pytest.raises(ValueError, match="evidence source 'capi' must answer one of"):
        attribution_sources.decide({}, [_source("capi", {"answer": "vendor"})])
    with pytest.raises(ValueError, match="must return None or a dict of facts"):
        attribution_sources.decide({}, [_source("capi", ("plugin", "prose"))])
    with pytest.raises(ValueError, match="has no fact text"):
        attribution_sources.decide({}, [_source("capi", {"answer": "plugin", "text": "prose"})])
    with pytest.raises(ValueError, match="unknown evidence source 'vendor'"):
        attribution_sources.Source("vendor", lambda record: None)


def _catalog_result(nodeid, status):
    entries = defect_catalog.entries(defect_catalog.load())
    r = report.Result(nodeid, report.area_of(nodeid), status, message="boom")
    r.known_entry = known_failures.match(entries, [nodeid], "cpu")[nodeid]
    attribution_sources.attribute(
        [r], [attribution_sources.catalog_source({nodeid: r.known_entry})])
    return r


def test_catalog_attributes_only_the_expected_status():
    r = _catalog_result(IS_READY, "crash")
    assert r.attribution == "framework" and r.defect["id"] == "jaxlib-is-ready-on-deleted-array"
    other = _catalog_result(IS_READY, "fail_wrong_result")
    assert other.attribution == "unattributed" and other.defect is None
    assert other.evidence == [{"source": "catalog", "answer": "unattributed",
                               "defect": "jaxlib-is-ready-on-deleted-array",
                               "expected": ["crash"]}]
    assert failure_view.evidence_text(other.evidence[0], other.status) == (
        "catalog: jaxlib-is-ready-on-deleted-array matches the test id but expects crash, "
        "got fail_wrong_result")


ARGMAX = "conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float32-argmax]"


def test_a_lowering_defect_outranks_a_re_run_of_the_same_program():
    """jax's argmax reducer is not commutative on NaN pairs: the C API re-run of that
    program is wrong too and the CPU reference passes, yet the defect is jax's."""
    entries = defect_catalog.entries(defect_catalog.load())
    entry = known_failures.match(entries, [ARGMAX], "cuda")[ARGMAX]
    assert entry.defect.layer == "lowering"
    record = {"nodeid": ARGMAX, "status": "fail_wrong_result"}
    capi_says = _source("capi", attribution_sources.capi_facts("execute", "wrong", "differs"))
    ref_says = _source("reference", reference_differential.answer(
        "fail_wrong_result", "pass", None, ""))
    lowering = attribution_sources.lowering_source({ARGMAX: entry})
    got, evidence = attribution_sources.decide(record, [capi_says, ref_says, lowering])
    assert got == "framework" and evidence[0] == {"source": "lowering", "answer": "framework",
                                                  "defect": "jax-argminmax-nan-ties"}
    # an ordinary catalog entry does not outrank the re-run (nor does a wrong status)
    cbrt = known_failures.match(entries, [CBRT], "cpu")[CBRT]
    assert attribution_sources.lowering_source({CBRT: cbrt}).fn(
        {"nodeid": CBRT, "status": "fail_wrong_result"}) is None
    assert attribution_sources.decide({"nodeid": ARGMAX, "status": "crash"},
                                      [capi_says, lowering])[0] == "plugin"


def _doc(*results):
    return report.build(list(results), collected=len(results), header=HEADER)


def test_framework_crash_does_not_fail_the_plugin_verdict():
    doc = _doc(_catalog_result(IS_READY, "crash"))
    assert clean(doc), doc["verdict_reasons"]
    f = doc["stack_findings"]
    assert (f["framework"], f["linked_upstream"]) == (1, 0)
    assert f["findings"][0]["tests"] == [IS_READY]
    assert plugin_verdict.headline(doc) == ("plugin: not a certification | stack findings: 1 "
                                     "framework defect (0 linked upstream)")   # no profile


@pytest.mark.parametrize("status", ["crash", "fail_wrong_result"])
def test_unattributed_or_plugin_failure_fails_the_plugin_verdict(status):
    plain = report.Result("conformance/test_x.py::t", "x", status, message="boom")
    attribution_sources.attribute([plain], [])
    assert plain.attribution == "unattributed"
    plugin = _catalog_result(CBRT, "fail_wrong_result")
    assert plugin.attribution == "plugin"
    for r in (plain, plugin):
        doc = _doc(r)
        assert flagged(doc)
        assert plugin_verdict.headline(doc).startswith("plugin: not certified | stack findings: none")


def test_a_wrong_result_is_never_waived():
    r = _catalog_result(CBRT, "fail_wrong_result")
    waiver = waivers.Waiver("conformance/test_kernels_elementwise.py::*", "https://x/1",
                            datetime.date(2999, 1, 1), "vendor says fine")
    doc = report.build([r], collected=1, header=HEADER, waivers=(waiver,))
    assert doc["results"][0]["status"] == "fail_wrong_result"
    assert flagged(doc) and doc["report_errors"]


def test_reference_differential_answers():
    assert reference_differential.reference_nodeid("conformance/test_x.py::t[cuda:3-int8]") == \
        "conformance/test_x.py::t[cpu:3-int8]"
    assert reference_differential.key(
        "../a/conformance/test_x.py::t[cuda:3-int8]") == "test_x.py::t[cpu:3-int8]"
    assert reference_differential.targets(["x/test_execute.py::test_elementwise[add-int32]",
                                           "test_lifecycle.py::t[tpu:2]"])[1:] == [
        "--pyargs", "conformance.test_execute::test_elementwise[add-int32]",
        "conformance.test_lifecycle::t[cpu:2]"]
    assert reference_differential.targets(["test_mine.py::t[tpu:0]"]) == ["test_mine.py::t[cpu:0]"]
    assert reference_differential.is_reference("cpu", False)
    assert not reference_differential.is_reference("cpu", True)
    assert reference_differential.answer("crash", "pass", None, "") == {
        "answer": "plugin", "status": "crash", "reference_status": "pass",
        "reference_defect": None, "not_rerun": None}
    # failing the same on the reference CPU client (itself XLA) is no evidence for the
    # framework: without a cataloged defect it stays unattributed
    same = reference_differential.answer("crash", "crash", None, "")
    assert same["answer"] == "unattributed" and same["reference_defect"] is None
    assert "PJRT C API re-run" in failure_view.evidence_text({"source": "reference", **same})
    assert reference_differential.answer("crash", "fail_error", None, "")["answer"] \
        == "unattributed"
    untried = reference_differential.answer("crash", None, None, "timed out")
    assert untried["not_rerun"] == "timed out" and untried["reference_status"] is None
    assert failure_view.evidence_text({"source": "reference", **untried}).endswith("timed out")
    (own,) = [e for e in defect_catalog.entries(defect_catalog.load()) if e.matches(CBRT)]
    shared = reference_differential.answer("fail_wrong_result", "fail_wrong_result", own, "")
    assert shared["answer"] == "plugin"
    assert shared["reference_defect"]["id"] == "xla-cpu-cbrt-subnormal"
    assert attribution_sources.shared(attribution_sources.item("reference", **shared))
    assert failure_view.evidence_text({"source": "reference", **shared}).startswith(
        f"reference: {attribution_sources.SHARED_WITH_XLA}: fails the same")
    # a reference failure of another status names no defect of the reference client
    assert reference_differential.answer("fail_wrong_result", "crash", own,
                                         "")["reference_defect"] is None


def test_reference_source_reruns_only_failures(monkeypatch, tmp_path):
    seen = {}

    def fake_rerun(nodeids, **kwargs):
        seen["ids"] = nodeids
        return {"test_x.py::a[cpu:1]": "pass", "test_x.py::b": "crash"}
    monkeypatch.setattr(reference_differential, "rerun", fake_rerun)
    results = [report.Result("conformance/test_x.py::a[tpu:1]", "x", "fail_wrong_result"),
               report.Result("conformance/test_x.py::b", "x", "crash"),
               report.Result("conformance/test_x.py::c", "x", "pass")]
    source = reference_differential.source(results, catalog=[], rootdir=tmp_path, cpu_devices=2,
                                           num_processes=1, timeout_s=5)
    attribution_sources.attribute(results, [source])
    assert seen["ids"] == ["conformance/test_x.py::a[tpu:1]", "conformance/test_x.py::b"]
    assert [r.attribution for r in results] == ["plugin", "unattributed", None]


def test_verify_recomputes_the_two_part_verdict_and_catches_forged_attributions(tmp_path):
    path = crafted(tmp_path, **{"test_lifecycle.py::test_use_after_delete_raises[is_ready]":
                                "crash"})
    assert bundle_files.verify(path).verdict == plugin_verdict.NOT_CERTIFIED  # crash, unattributed

    def forge(doc):  # claim the crash is the framework's, with no evidence
        for r in doc["results"] + doc["failures"]:
            if r["status"] == "crash":
                r["attribution"], r["evidence"] = "framework", []
        doc["verdict"], doc["verdict_reasons"] = plugin_verdict.CERTIFIED, []
        doc["stack_findings"] = attribution_sources.stack_findings(doc["results"])
    rewrite(path, forge)
    result = bundle_files.verify(path)
    assert not result.valid
    assert any("attribution framework of conformance/test_lifecycle.py::"
               "test_use_after_delete_raises[is_ready] is not backed" in p
               for p in result.problems), result.problems


def test_verify_accepts_a_catalog_backed_attribution_and_rejects_a_changed_one(tmp_path):
    r = _catalog_result(IS_READY, "crash")
    path = bundle_files.write(_doc(r), tmp_path / "b").parent
    assert bundle_files.verify(path).problems == []

    def retarget(doc):
        doc["results"][0]["defect"]["id"] = "jaxlib-clone-of-deleted-array"
    rewrite(path, retarget)
    problems = bundle_files.verify(path).problems
    assert any("states defect 'jaxlib-clone-of-deleted-array' differently" in p
               for p in problems), problems


def test_reference_differential_attributes_a_broken_backend_to_the_plugin(run_suite):
    """End to end: a mutant backend's wrong results pass on the reference (jaxlib's
    built-in CPU client), so they are the plugin's; the status is unchanged."""
    result, doc = run_suite("broken-execute", "-k", "test_elementwise and add-int32",
                            "--reference-differential=auto")
    assert doc["failures"], result.stdout.str()[-3000:]
    for f in doc["failures"]:
        assert f["status"] == "fail_wrong_result"
        assert f["attribution"] == "plugin", f["evidence"]
        assert f["evidence"][0] == {"source": "reference", "answer": "plugin",
                                    "status": "fail_wrong_result", "reference_status": "pass"}
        assert failure_view.evidence_lines(f)[0] == f"reference: passes on {reference_differential.REFERENCE_NAME}"
    assert flagged(doc)


LU = "test_kernels_linalg.py::test_lu_with_partial_pivoting[float32]"


def test_a_target_the_framework_could_not_register_is_the_framework_s():
    from runtime.plugin_support import FRAMEWORK_MARKER

    source = attribution_sources.registration_source(FRAMEWORK_MARKER)
    gap = f"FrameworkGap: {FRAMEWORK_MARKER}: lapack_sgetrf_ffi was not found [NOT_FOUND]"
    assert source.fn({"message": gap}) == {
        "answer": "framework",
        "quote": f"{FRAMEWORK_MARKER}: lapack_sgetrf_ffi was not found [NOT_FOUND]"}
    assert source.fn({"message": "AssertionError: out differs from expected"}) is None
    assert source.fn({}) is None
    # it outranks the reference differential, which passes on jaxlib's own client
    ref_says = _source("reference", reference_differential.answer("fail_error", "pass", None, ""))
    assert attribution_sources.decide({"message": gap}, [ref_says, source])[0] == "framework"


def test_verify_accepts_registration_evidence_only_when_the_failure_says_so(tmp_path):
    from runtime.plugin_support import FRAMEWORK_MARKER

    path = crafted(tmp_path, **{LU: "fail_error"})
    line = f"{FRAMEWORK_MARKER}: lapack_sgetrf_ffi was not found"

    def attribute(message):
        def fn(doc):
            for r in doc["results"] + doc["failures"]:
                if r["status"] == "fail_error":
                    r["attribution"], r["evidence"] = "framework", [
                        {"source": "registration", "answer": "framework", "quote": line}]
                    if "message" in r:
                        r["message"] = message
            doc["verdict"], doc["verdict_reasons"] = plugin_verdict.CERTIFIED, []
            doc["stack_findings"] = attribution_sources.stack_findings(doc["results"])
        return fn
    rewrite(path, attribute(f"FrameworkGap: {line} [NOT_FOUND]"), render=True)
    assert bundle_files.verify(path).problems == []
    rewrite(path, attribute("AssertionError: wrong LU factors"),  # forged: no such account
            render=True)
    problems = bundle_files.verify(path).problems
    assert any("is not backed" in p for p in problems), problems


def test_an_oracle_disagreement_is_the_suite_s_and_a_wrong_device_is_not():
    """The two oracles disagree and every device matches one: ``fail_error`` with the
    suite's marker, attributed ``suite``. A device matching neither is a wrong result
    whose message also reports the disagreement: not the suite's."""
    from conformance.programs import interpreter

    source = attribution_sources.oracle_source(interpreter.SUITE_MARKER)
    err = interpreter.OracleDisagreement("add(float32[3]): the interpreter says 1.0")
    assert str(err).startswith(interpreter.SUITE_MARKER) and err.detail.startswith("add(")
    message = f"conformance.programs.interpreter.OracleDisagreement: {err}"
    assert source.fn({"status": "fail_error", "message": message}) == {"answer": "suite",
                                                                       "quote": str(err)}
    wrong = f"AssertionError: result 0 on cpu:1 matches neither oracle\n(and {err})"
    assert source.fn({"status": "fail_wrong_result", "message": wrong}) is None
    assert source.fn({"status": "fail_error", "message": "ValueError: bad"}) is None
    ref_says = _source("reference", reference_differential.answer("fail_error", "pass", None, ""))
    assert attribution_sources.decide({"status": "fail_error", "message": message},
                                      [ref_says, source])[0] == "suite"


def test_verify_accepts_a_suite_attribution_only_when_the_failure_says_so(tmp_path):
    from conformance.programs import interpreter

    path = crafted(tmp_path, **{LU: "fail_error"})
    line = f"{interpreter.SUITE_MARKER} add(float32[3]): the oracles disagree"

    def attribute(message):
        def fn(doc):
            for r in doc["results"] + doc["failures"]:
                if r["status"] == "fail_error":
                    r["attribution"], r["evidence"] = "suite", [
                        {"source": "oracle", "answer": "suite", "quote": line}]
                    if "message" in r:
                        r["message"] = message
            doc["verdict"], doc["verdict_reasons"] = plugin_verdict.CERTIFIED, []
            doc["stack_findings"] = attribution_sources.stack_findings(doc["results"])
        return fn
    rewrite(path, attribute(f"OracleDisagreement: {line}"), render=True)
    doc = json.loads((path / "report.json").read_text())
    assert [r["attribution"] for r in doc["results"] if r["status"] == "fail_error"] == ["suite"]
    assert bundle_files.verify(path).problems == []
    rewrite(path, attribute("AssertionError: wrong sum"), render=True)  # forged
    problems = bundle_files.verify(path).problems
    assert any("attribution suite" in p and "is not backed" in p for p in problems), problems


#: One item of each evidence source, with the result it belongs to and its failure
#: message: every kind of attribution.KINDS must have one (a new kind fails here until
#: it is rendered and re-checked).
_GAP = "FrameworkGap: registration failed: lapack_sgetrf_ffi"
SAMPLES = {
    "lowering": ({"source": "lowering", "answer": "framework", "defect": "jax-argminmax-nan-ties"},
                 {"status": "fail_wrong_result", "attribution": "framework",
                  "defect": {"id": "jax-argminmax-nan-ties"}}, ""),
    "registration": ({"source": "registration", "answer": "framework",
                      "quote": "registration failed: lapack_sgetrf_ffi"},
                     {"status": "fail_error", "attribution": "framework"}, _GAP),
    "oracle": ({"source": "oracle", "answer": "suite", "quote": "the oracles disagree"},
               {"status": "fail_error", "attribution": "suite"}, "x: the oracles disagree"),
    "capi": ({"source": "capi", "answer": "plugin", "check": "execute", "outcome": "wrong",
              "detail": "element 3 differs"}, {"status": "crash", "attribution": "plugin"}, ""),
    "reference": ({"source": "reference", "answer": "plugin", "status": "fail_wrong_result",
                   "reference_status": "fail_wrong_result",
                   "reference_defect": {"id": "xla-cpu-cbrt-subnormal", "upstream": "u"}},
                  {"status": "fail_wrong_result", "attribution": "plugin"}, ""),
    "catalog": ({"source": "catalog", "answer": "plugin", "defect": "xla-cpu-cbrt-subnormal",
                 "upstream": "u", "note": "subnormal inputs"},
                {"status": "fail_wrong_result", "attribution": "plugin",
                 "defect": {"id": "xla-cpu-cbrt-subnormal"}}, ""),
}


def test_every_evidence_source_is_rendered_re_checked_and_in_the_schema():
    """The one list of sources (attribution.KINDS) is what the renderers, verify's
    re-check, rerender and the report schema know: no more, no less."""
    from conformance.certification.attribution import attribution_check
    from conformance.certification.bundle import reportfile

    assert set(SAMPLES) == set(attribution_sources.NAMES)
    assert set(failure_view.EVIDENCE_TEXT) == set(attribution_sources.NAMES)
    assert set(attribution_check.RECHECK) == set(attribution_sources.NAMES)
    evidence = reportfile.schema()["$defs"]["evidence"]
    assert evidence["properties"]["source"]["enum"] == list(attribution_sources.NAMES)
    forms = evidence["oneOf"]
    for kind in attribution_sources.KINDS:
        (form,) = [f for f in forms if "legacy" not in f["properties"]
                   and kind.name in (f["properties"]["source"].get("enum")
                                     or [f["properties"]["source"].get("const")])]
        assert set(form["properties"]) == {"source", "answer", *kind.facts}, kind.name
        e, result, message = SAMPLES[kind.name]
        assert attribution_sources.item(
            kind.name, **{k: v for k, v in e.items() if k != "source"}) == e
        result = {"nodeid": f"conformance/test_x.py::{kind.name}", **result, "evidence": [e]}
        line = failure_view.evidence_text(e, result["status"])
        assert line.startswith(f"{kind.name}: ") and "=" not in line, line   # not the fallback
        assert attribution_check.evidence_problems(result, message) == [], kind.name
        flipped = {**e, "answer": "suite" if e["answer"] != "suite" else "plugin"}
        assert attribution_check.evidence_problems(
            {**result, "evidence": [flipped]}, message), kind.name
    # rerender replays exactly the recorded kinds; the others are recomputed offline
    assert {s.name for s in attribution_sources.offline_sources({})} == {
        k.name for k in attribution_sources.KINDS if not k.recorded}


def test_schema_2_strings_are_legacy_items_whose_text_is_not_read():
    r = {"attribution": "framework", "evidence": [
        "capi: wrong through the PJRT C API too: anything",
        f"reference: {attribution_sources.SHARED_WITH_XLA}: fails the same"]}
    assert attribution_sources.items(r) == [
        {"source": "capi", "answer": "framework",
         "legacy": "wrong through the PJRT C API too: anything"},
        {"source": "reference", "answer": "framework", "shared_with_xla": True,
         "legacy": f"{attribution_sources.SHARED_WITH_XLA}: fails the same"}]
    assert failure_view.evidence_lines(r) == r["evidence"]
    assert attribution_sources.decided(attribution_sources.items(r)) == "framework"


def test_the_capi_source_records_the_re_run_as_data(monkeypatch):
    """conformance.session.evidence.capi_source: the C API re-run's check, outcome and
    detail as the ``capi`` item; an undecided re-run, or none to run, is no item."""
    from conformance import capi
    from conformance.session import evidence

    monkeypatch.setattr(capi, "plan", lambda record, header: {"check": "execute"}
                        if record["status"] == "fail_wrong_result" else None)
    outcomes = iter([("correct", "right on its own"), ("undecided", "ran past 120 s")])
    monkeypatch.setattr(capi, "run", lambda check, timeout: next(outcomes))
    source = evidence.capi_source({"platform": {"loaded": {}}})
    record = {"nodeid": "x", "status": "fail_wrong_result"}
    assert attribution_sources.decide(record, [source]) == ("framework", [
        {"source": "capi", "answer": "framework", "check": "execute", "outcome": "correct",
         "detail": "right on its own"}])
    assert attribution_sources.decide(record, [source]) == ("unattributed", [])
    assert source.fn({"nodeid": "y", "status": "crash"}) is None
    with pytest.raises(TypeError):
        evidence.capi_source("report.json")
