"""report.json ``next_steps`` (conformance/certification/verdict/next_steps.py): one step
per root cause, with its reproduction, the ready-to-file upstream text, the upstream
status and whether it can be waived (wrong results, crashes and timeouts never)."""

from conformance.certification.catalog import defect_catalog
from conformance.certification.verdict import next_steps


def _failure(nodeid, status, attribution="plugin", defect=None, message="boom"):
    return {"nodeid": nodeid, "status": status, "attribution": attribution,
            "defect": defect, "message": message, "command": f"pytest {nodeid}"}


def _entry(id_, repro):
    return defect_catalog.Defect(id=id_, tests=(), affects=(), attribution="plugin",
                                 upstream="not reported yet", summary="s", expected=(),
                                 repro=repro)


def test_one_step_per_cause_with_reproduction_report_and_waivability():
    defect = {"id": "xla-cpu-atan2-subnormal-pairs", "upstream": "not reported yet",
              "summary": "atan2 at subnormal pairs"}
    failures = [_failure("t::a[f32]", "fail_wrong_result", defect=defect),
                _failure("t::a[f64]", "fail_wrong_result", defect=defect),
                _failure("t::b", "fail_error"),
                _failure("t::c", "crash", attribution="framework")]
    catalog = [_entry("xla-cpu-atan2-subnormal-pairs", "docs/upstream/atan2_subnormal_pairs.py")]
    steps = {s["cause"]: s for s in next_steps.build(failures, catalog)}
    atan2 = steps["xla-cpu-atan2-subnormal-pairs"]
    assert atan2["tests"] == ["t::a[f32]", "t::a[f64]"] and atan2["cataloged"]
    assert atan2["reproduction"] == "docs/upstream/atan2_subnormal_pairs.py"
    assert atan2["report"] == "docs/upstream/atan2_subnormal_pairs.md"   # it exists
    assert atan2["waivable"] is False and "cannot be waived" in atan2["action"]
    error = steps["t::b"]
    assert not error["cataloged"] and error["reproduction"] == "pytest t::b"
    assert error["waivable"] is True and error["upstream"] is None
    framework = steps["t::c"]
    assert framework["waivable"] is False and "not the plugin's" in framework["action"]
    order = [s["cause"] for s in next_steps.build(failures, catalog)]
    assert order[0] == "xla-cpu-atan2-subnormal-pairs" and order[-1] == "t::c"


def test_a_cause_with_any_wrong_result_is_not_waivable():
    defect = {"id": "d", "upstream": "https://github.com/openxla/xla/issues/1"}
    steps = next_steps.build([_failure("t::x", "fail_error", defect=defect),
                              _failure("t::y", "timeout", defect=defect)], [])
    assert len(steps) == 1 and steps[0]["waivable"] is False
    assert steps[0]["report"] is None and steps[0]["upstream"].startswith("https://")


def test_report_md_and_html_show_the_next_steps():
    from conformance.certification.rendering import report_html, report_md
    import json
    from pathlib import Path
    # a committed CPU bundle whose failures include the atan2 defect (the bundles are
    # regenerated on each new profile; their stamps change)
    found = sorted((Path(__file__).resolve().parent.parent / "reports" / "cpu").glob(
        "*/report.json"))
    doc = json.loads(next(p for p in found if "xla-cpu-atan2-subnormal-pairs" in
                          p.read_text()).read_text())
    doc["next_steps"] = next_steps.build(doc["failures"], defect_catalog.load())
    md = report_md.render(doc)
    assert "## Next steps" in md and "`xla-cpu-atan2-subnormal-pairs`" in md
    assert "docs/upstream/atan2_subnormal_pairs.md" in md
    html = report_html.render(doc)
    assert 'id="next-steps"' in html and "xla-cpu-atan2-subnormal-pairs" in html
    assert md.index("## Next steps") < md.index("## Summary")
