"""report.json ``since_previous``: a run beside an earlier bundle of the same backend,
profile and test selection says what changed since it
(conformance/certification/compare/since_previous.py), and the report renders it; the
first run of a backend has none, a run of another profile or selection and a tampered
earlier bundle are never compared with, new failures count only the tests of both runs,
and a changed profile, jax release or test set is said."""

import json
import subprocess
import sys

from conformance.certification.compare import since_previous


def _run(out, *select):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
                           "-n", "0", "--cpu-devices", "2", "--profile", "none",
                           "--output", str(out), "--", "-k", " or ".join(select)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((out / "report.json").read_text())


def test_the_second_run_says_what_changed_since_the_first(tmp_path):
    reports = tmp_path / "reports" / "cpu"
    first = _run(reports / "20990101T000000Z", "test_device_ids_unique")
    assert first.get("since_previous") is None
    second = _run(reports / "20990102T000000Z", "test_device_ids_unique")
    prev = second["since_previous"]   # the same selection: a run of the same kind
    assert prev["bundle"] == "20990101T000000Z" and prev["verdict"] == first["verdict"]
    assert prev["added"] == prev["removed"] == prev["new_failure_count"] == 0
    assert prev["unlike"] == []
    md = (reports / "20990102T000000Z" / "report.md").read_text()
    assert "## Changes since the previous bundle of this backend" in md
    assert "Against `20990101T000000Z`" in md and str(tmp_path) not in md
    html = (reports / "20990102T000000Z" / "report.html").read_text()
    assert 'id="since-previous"' in html
    check = subprocess.run([sys.executable, "-m", "conformance.cli", "verify",
                            str(reports / "20990102T000000Z")], capture_output=True, text=True,
                           timeout=300)
    assert check.returncode in (0, 1), check.stdout + check.stderr
    # a tampered earlier bundle is not a previous bundle
    (reports / "20990101T000000Z" / "report.md").write_text("tampered\n")
    assert since_previous.previous(reports / "20990102T000000Z", second) is None


# -- the rules, on crafted bundles (fast) --------------------------------------------

import copy  # noqa: E402

import pytest  # noqa: E402

from tests.bundle_helpers import crafted, rewrite  # noqa: E402


def _older(path, **changes):
    """Make the bundle at ``path`` start a day earlier, with ``changes`` applied."""
    def fn(doc):
        doc["started_utc"] = "2026-11-21T00:00:00+00:00"
        for key, value in changes.items():
            doc[key] = value
    rewrite(path, fn, render=True)
    return path


def _new(tmp_path, **status):
    path = crafted(tmp_path / "cpu", "new", **status)
    return path, json.loads((path / "report.json").read_text())


def test_a_run_of_the_same_kind_is_the_previous_bundle(tmp_path):
    old = _older(crafted(tmp_path / "cpu", "old"))
    new, doc = _new(tmp_path)
    assert since_previous.previous(new, doc)[0] == old
    assert since_previous.summary(new, doc)["unlike"] == []


@pytest.mark.parametrize("change", [
    {"profile": {"name": "v8", "version": 8, "sha256": "0" * 64, "tests": 1, "tiers": {}}},
    {"command": "pjrt-conformance run --platform cpu -- -k test_device_ids_unique"},
    {"cpu_devices": 4},
], ids=["other profile", "other -k", "other --cpu-devices"])
def test_a_run_of_another_profile_or_selection_is_never_compared(tmp_path, change):
    _older(crafted(tmp_path / "cpu", "old"), **change)
    new, doc = _new(tmp_path)
    assert since_previous.previous(new, doc) is None
    assert since_previous.summary(new, doc) is None


def test_selection_reads_k_m_and_cpu_devices_from_the_command():
    doc = {"cpu_devices": 2, "command": "pjrt-conformance run -n 0 --output /x -- -k 'a or b' "
                                        "-m=slow"}
    assert since_previous.selection(doc) == (("--cpu-devices", "2"), ("-k", "a or b"),
                                             ("-m", "slow"))
    assert since_previous.selection({**doc, "command": "run -n 4 --output /y -- -k 'a or b' "
                                                       "-m slow"}) == \
        since_previous.selection(doc)   # the output folder and worker count select nothing


def _doc(results, jax="0.10.2", profile_version=11):
    return {"results": [{"nodeid": n, "status": s} for n, s in results],
            "environment": {"jax": jax, "jaxlib": jax}, "platform": {"name": "cpu"},
            "profile": {"name": "v11", "version": profile_version, "sha256": "a" * 64},
            "verdict": "not certified", "started_utc": "2026-11-22"}


def test_new_failures_count_only_tests_of_both_runs_and_the_changes_in_kind_are_said(
        tmp_path, monkeypatch):
    old = _doc([("conformance/t.py::a", "pass"), ("conformance/t.py::b", "pass"),
                ("conformance/t.py::gone", "pass")], jax="0.11.2", profile_version=10)
    new = _doc([("conformance/t.py::a", "crash"), ("conformance/t.py::b", "pass")]
               + [(f"conformance/t.py::n{i}", "fail_error") for i in range(50)])
    monkeypatch.setattr(since_previous, "previous", lambda out, doc: (tmp_path / "old", old))
    s = since_previous.summary(tmp_path / "new", new)
    assert s["new_failure_count"] == 1 and s["new_failures"] == [
        ["conformance/t.py::a", "pass", "crash"]]       # not 51: 50 tests are new
    assert s["added"] == 50 and s["added_failing"] == 50 and s["removed"] == 1
    said = " ".join(s["unlike"])
    assert "the jax release changed: 0.11.2 -> 0.10.2" in said
    assert "the profile changed" in said and "the test set changed" in said
    from conformance.certification.rendering import report_md
    lines = report_md._since_previous_lines({"since_previous": s})
    assert any("The runs differ in kind" in ln for ln in lines)
    assert any("1 new failure(s)" in ln and "50 of them failing" in ln for ln in lines)
    same = copy.deepcopy(old)
    assert since_previous.unlike(same, old, {"added": [], "removed": []}) == []


NESTED = "/v/lib/python3.11/site-packages/xla_plugins/xla_cpu_pjrt/libpjrt_c_api.so"


def test_a_report_in_memory_finds_the_bundle_of_its_nested_package_plugin(tmp_path):
    from conformance.certification import local_paths

    def plugin(doc):
        doc["platform"]["loaded"] = {"how": "PJRT C API plugin", "library_path": NESTED,
                                     "library_sha256": "0" * 64}
        doc["started_utc"] = "2026-11-21T00:00:00+00:00"
        doc["command"] = "cli.py run -- --deselect /work/x/conformance/t.py::a[/tmp]"
    old = crafted(tmp_path / "cpu", "old")
    rewrite(old, plugin, render=True)
    new = tmp_path / "cpu" / "new"
    doc = json.loads((crafted(tmp_path / "cpu", "new") / "report.json").read_text())
    plugin(doc)
    doc["started_utc"] = "2026-11-22T00:00:00+00:00"
    doc["platform"]["loaded"]["library_sha256"] = "1" * 64
    assert since_previous.kind(doc) == since_previous.kind(local_paths.for_bundle(doc))
    summary = since_previous.summary(new, local_paths.for_bundle(doc))
    assert summary["bundle"] == "old"
    assert any("the plugin library changed: sha256 000000000000 -> 111111111111" in s
               for s in summary["unlike"])
    assert since_previous.previous(new, doc)[0] == old   # in memory too


@pytest.mark.parametrize("extra", [
    "-kfoo", "-xk foo", "conformance/test_a.py", "conformance/test_a.py::t[1]", "--lf",
    "-x", "--exitfirst", "--maxfail=2", "--maxfail 2", "--ignore conformance/b",
    "--ignore=conformance/b", "--deselect=conformance/t.py::a", "--sw",
])
def test_each_selecting_argument_makes_another_selection(extra):
    base = {"cpu_devices": 2, "command": "cli.py run -n 0 --output /tmp/o --platform cpu --"}
    other = {**base, "command": f"{base['command']} {extra}"}
    assert since_previous.selection(other) != since_previous.selection(base), extra
    assert since_previous.selection(base) == (("--cpu-devices", "2"),)


def test_the_attached_and_separate_forms_select_alike():
    s = since_previous.selection
    assert s({"command": "run -- -kfoo"}) == s({"command": "run -- -k foo"}) == \
        s({"command": "run -- -k=foo"})
    assert s({"command": "run -- --deselect /work/wt/conformance/t.py::a[/tmp]"}) == \
        s({"command": "run -- --deselect <redacted>/t.py::a[/tmp]"})
