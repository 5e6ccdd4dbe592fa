"""report.html / report.md readable at a glance: grouping, paths, platform, reasons,
SVG bars and ULP histograms (synthetic documents; the screenshot test is separate)."""

import re

import numpy as np
import pytest

from conformance.certification.rendering import failure_view
from conformance.certification.rendering import report_html
from conformance.certification.rendering import report_md
from conformance.certification.rendering import svg
from conformance.helpers import assertions
from conformance.helpers import ulp_stats
from conformance.session import outcomes
from tests import report_docs


def test_local_paths_are_stripped():
    text = (f"'{report_docs.SITE}/jax/_src/api.py' '/work/wt/x/conformance/test_a.py' "
            "'/home/bob/notes.txt' /usr/lib/libfoo.so")
    got = failure_view.strip_local_paths(text)
    assert got == "'jax/_src/api.py' 'conformance/test_a.py' '~/notes.txt' /usr/lib/libfoo.so"


def test_platform_as_asked_and_no_internal_command():
    d = report_docs.doc()
    assert failure_view.display_platform(d) == "cuda (client reports gpu)"
    assert failure_view.display_command(d) == "pjrt-conformance run --platform cuda -n 6"
    same = dict(d, requested_platform="gpu")
    assert failure_view.display_platform(same) == "gpu"


def test_hypothesis_group_is_headed_by_its_first_failure():
    d = report_docs.doc()
    group = next(f for f in d["failures"] if f["status"] == "fail_error")
    assert failure_view.headline(group).startswith("AssertionError: out.shape=(8, 0)")
    assert "Hypothesis found 2 distinct failures" in failure_view.headline(group)
    err = ExceptionGroup("Hypothesis found 2 distinct failures.",
                         [AssertionError("first real one"), ValueError("second")])
    assert outcomes.group_message(err).splitlines()[1] == "first: AssertionError: first real one"
    assert outcomes.group_message(ValueError("x")) is None


def test_failures_group_by_area_and_root_cause():
    d = report_docs.doc()
    groups = {g.area: g for g in failure_view.group(d["failures"])}
    assert [len(c.failures) for c in groups["copy_semantics"].causes] == [3, 2]  # SEGV, ABRT
    assert [len(c.failures) for c in groups["kernels_elementwise"].causes] == [3]
    assert groups["copy_semantics"].causes[0].title.startswith("BackendCrash: process killed")
    attributed = {g.area: g
                  for g in failure_view.group(report_docs.doc(attributed=True)["failures"])}
    assert [c.title.split(":")[0] for c in attributed["copy_semantics"].causes] == [
        "JAXLIB-0", "JAXLIB-1"]  # the defect id wins over the message


def test_verdict_reasons_are_given_in_full():
    d = report_docs.doc()
    assert "(+2)" in d["verdict_reasons"][0]  # the stored reason names 3 of 5
    summary, tests = failure_view.full_reasons(d)[0]
    assert summary == "5 test(s) with status crash" and len(tests) == 5
    d["verdict_reasons"][0] = "something else: a::b"  # disagrees: the stored reasons stay
    assert failure_view.full_reasons(d)[0] == ("something else", ["a::b"])


def test_bar_widths_follow_the_counts():
    bar = svg.pass_rate_bar({"pass": 3, "crash": 1, "skipped": 0}, failure_view.FAILING, width=200)
    widths = {c: float(w) for w, c in re.findall(r'width="([\d.]+)" height="14" fill="(#\w+)"',
                                                 bar)}
    assert widths == {svg.PASS_COLOUR: 150.0, svg.FAIL_COLOUR: 50.0}
    with pytest.raises(ValueError, match="counts"):
        svg.pass_rate_bar({"pass": -1}, failure_view.FAILING)
    with pytest.raises(ValueError, match="same non-zero length"):
        svg.histogram(["0"], [1, 2])


def test_ulp_close_failure_records_the_error_distribution():
    want = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    got = want.copy()
    got[3] = np.nextafter(np.nextafter(want[3], np.inf), np.inf)  # 2 ULP off
    got[2] = np.float32(3.5)  # far off
    assertions.assert_ulp_close(want.copy(), want, max_ulp=0, call="ok")  # healthy: no error
    with pytest.raises(AssertionError) as info:
        assertions.assert_ulp_close(got, want, max_ulp=1, call="broken")
    hist = ulp_stats.of(info.value)
    assert hist["counts"][:3] == [2, 0, 1] and sum(hist["counts"]) == 4
    assert hist["limit_index"] == 2 and hist["max_ulp"] == 1
    facts = outcomes.failure_facts(info.value)
    assert facts["ulp_errors"] == hist
    with pytest.raises(ValueError, match="max_ulp"):
        ulp_stats.ulp_histogram(np.array([1]), -1)


@pytest.mark.parametrize("attributed", [False, True])
def test_html_shows_each_failure_once_without_local_paths(attributed):
    d = report_docs.doc(attributed=attributed)
    html = report_html.render(d)
    assert "/home/alice" not in html and "/work/wt/someone" not in html
    assert "site-packages" not in html
    assert "PJRT conformance report: cuda" in html and "-p x.plugin" not in html
    # each input once: the arrays of the 3 wrong results (not their drawn example too),
    # the drawn example of the Hypothesis group
    assert html.count("1.17e-38") == 3 and html.count("dt=&#39;float32&#39;") == 1
    assert len(re.findall(r'<td class="fail">', html)) >= 4  # areas and tiers with failures
    first = failure_view.by_attribution(d["failures"])[0].areas[0].causes[0].failures[0]
    # the 3 wrong results, and the first failure's card on the first screen
    assert html.count('<svg class="hist"') == 3 + bool(first.get("ulp_errors"))
    for f in d["failures"]:
        assert f'id="f-{failure_view.anchor(f["nodeid"])}"' in html
    assert ("Attribution: <b>framework</b>" in html) is attributed
    assert "plugin: NOT CERTIFIED | stack findings: " in html  # the two-part headline
    assert ("stack findings: 2 framework defects" in html) is attributed


def test_failures_are_ordered_plugin_first_each_group_with_its_count():
    d = report_docs.doc(attributed=True)
    attrs = [f.get("attribution") or "unattributed" for f in d["failures"]]
    assert "plugin" in attrs and "framework" in attrs   # the fixture mixes them
    groups = failure_view.by_attribution(d["failures"])
    order = [g.attribution for g in groups]
    assert order == [a for a in failure_view.ATTRIBUTION_ORDER if a in attrs]
    assert [g.count for g in groups] == [attrs.count(a) for a in order]
    html = report_html.render(d)
    heads = [html.index(f'id="{g.anchor}">{g.attribution.capitalize()} failures ({g.count})')
             for g in groups]
    assert heads == sorted(heads)
    first_card = html[html.index("First failure"):html.index('<nav id="toc">')]
    assert "Attribution: <b>plugin</b>" in first_card
    # a report whose failures carry no attribution: one "unattributed" group
    bare = [{k: v for k, v in f.items() if k != "attribution"} for f in d["failures"]]
    assert [g.attribution for g in failure_view.by_attribution(bare)] == ["unattributed"]


def test_identity_title_and_c_api_skew_on_top():
    d = report_docs.doc(attributed=True)
    d["platform"] = {**d["platform"], "pjrt_c_api_version": [0, 115],
                     "framework_pjrt_c_api_version": [0, 112],
                     "version_findings": ["warning: plugin PJRT C API 0.115 is newer than "
                                          "the framework's 0.112"],
                     "loaded": {"how": "PJRT C API plugin", "source": "--plugin-library",
                                "library_path": "/v/lib/python3.11/site-packages/acme_pjrt/x.so",
                                "library_sha256": "ad1309ac822b" + "0" * 52}}
    html = report_html.render(d)
    head = html[:html.index('<h2 id="why">')]
    assert "acme_pjrt" in head[:head.index("</title>")]
    for text in ("library sha256 <code>ad1309ac822b</code>", "PJRT C API 0.115",
                 "framework's: 0.112", "jax 0.11.2", 'class="skew"'):
        assert text in head, text
    # reasons never clipped: a height limit only on a box that scrolls (the root-cause
    # list of a long report scrolls inside its box; every row is there)
    style = html[:html.index("</style>")]
    for rule in re.findall(r"[^{}]*\{[^}]*max-height[^}]*\}", style):
        assert "overflow-y: auto" in rule and "#root-causes-box" in rule, rule
    # filters by status and attribution: CSS radio buttons, no script, nothing fetched
    assert 'id="fa-plugin"' in html and 'id="fs-crash"' in html and "<script" not in html
    assert not re.search(r'\b(?:src|href)="(?!#|https?://|repro/)', html)


def test_bitwise_mismatch_lines_get_their_hex_bits_and_scalars_print_as_values():
    from conformance.helpers import reproduction
    out = np.array([np.nan, 1.0], dtype=np.float32)
    want = out.copy()
    want.view(np.uint32)[0] = 0x7fc00001
    f = {"message": "AssertionError: out differs (bitwise)\n  at (0,): out=nan, expected=nan"
                    "\n  scale np.float32(2.5)",
         "arrays": {"observed": reproduction.encode_array(out),
                    "expected": reproduction.encode_array(want)}}
    shown = failure_view.shown_details(f)
    assert "at (0,): out=nan, expected=nan (bits 0x7fc00000 vs 0x7fc00001)" in shown
    assert "np.float32" not in shown and "scale 2.5" in shown
    assert failure_view.shown_details({**f, "arrays": {}}).count("bits") == 0   # nothing recorded


def test_markdown_groups_failures():
    text = report_md.render(report_docs.doc(attributed=True))
    section = text[text.index("## Failures"):]
    assert section.count("### copy_semantics (5)") == 1
    assert "#### JAXLIB-0: donated buffer use segfaults (3)" in section
    assert "attribution: framework" in section and "/home/alice" not in text
    assert text.startswith("# PJRT conformance report: cuda (client reports gpu)")


def test_html_and_markdown_show_the_op_coverage_matrix_and_its_gaps():
    from conformance.certification.rendering import coverage_md
    from conformance.programs import coverage

    d = report_docs.doc()
    assert "Op coverage" not in report_html.render(d)  # no coverage keys: no section
    matrix: dict = {}
    coverage.add(matrix, {"reverse": {"int8": [1, 1, 1], "float32": [1, 1, 0]}})
    d.update(coverage.section(matrix))
    page = report_html.render(d)
    assert "Op coverage" in page and "<code>reverse</code>" in page
    summary = d["coverage_summary"]
    assert f"<b>{summary['spec_ops_compared']}/{summary['spec_ops']}</b>" in page
    gaps = [g["op"] for g in d["coverage_gaps"]]
    assert gaps and f"<code>{gaps[0]}</code>" in page
    assert "| reverse | int8 | float32 |" in "\n".join(coverage_md.markdown(d))


def test_report_md_publishes_no_local_library_path():
    from conformance.certification.rendering import report_md
    d = report_docs.doc(attributed=True)
    d["platform"] = {**d["platform"], "loaded": {
        "how": "PJRT C API plugin", "source": "--plugin-library",
        "library_path": "/home/alice/venv/lib/python3.11/site-packages/acme_pjrt/x.so",
        "library_sha256": "ad1309ac822b" + "0" * 52}}
    md = report_md.render(d)
    assert "acme_pjrt/x.so" in md and "/home/alice" not in md and "site-packages" not in md
