"""Hardened ``verify`` and ``diff`` (issue 19 part 3): malformed report.json of any type is
exit 3 with a one-line reason, never a traceback and never "intact"; ``diff``'s exit codes
and status transitions."""

import datetime
import json
import shutil

import hypothesis
import pytest
from hypothesis import strategies as st

from conformance.certification.bundle import bundle_files
from conformance.certification.compare import diff
from conformance.certification.verdict import report
from conformance.certification.bundle import reportfile
from tests.bundle_helpers import HEADER, cli, crafted, main, rewrite


def _small_doc(**statuses):
    """A report of three tests without a profile (fast to check); ``u`` is informational,
    so that its skips leave the verdict alone."""
    ids = ["conformance/test_a.py::t[1]", "conformance/test_a.py::t[2]",
           "conformance/test_b.py::u"]
    results = [report.Result(n, report.area_of(n), statuses.get(n, "pass"), message="m",
                             tier="informational" if n.endswith("::u") else "core")
               for n in ids if statuses.get(n) != "absent"]
    doc = report.build(results, collected=len(results), header=HEADER,
                       today=datetime.date(2026, 11, 22))
    return json.loads(json.dumps(doc))     # a copy: the tests change it


def _del(path):
    def fn(d):
        *parents, last = path
        for p in parents:
            d = d[p]
        del d[last]
    return fn


def _set(path, value):
    def fn(d):
        *parents, last = path
        for p in parents:
            d = d[p]
        d[last] = value
    return fn


MALFORMED = {   # name -> (report.json text or a change of a valid report, reason fragment)
    "list": ("[]", "is a list, not a JSON object"),
    "null": ("null", "is null, not a JSON object"),
    "empty object": ("{}", "has schema_version None"),
    "string": ('"report"', "is a string, not a JSON object"),
    "number": ("42", "is a number, not a JSON object"),
    "truncated": (None, "is not valid JSON (truncated?)"),
    "not utf-8": (b"\xff\xfe{", "is unreadable"),
    "other schema version": (_set(["schema_version"], 4), "has schema_version 4"),
    "missing results": (_del(["results"]), "'results' is a required property"),
    "results not a list": (_set(["results"], {}), "at results: {} is not of type 'array'"),
    "result not an object": (_set(["results", 0], "pass"), "at results/0"),
    "count of wrong type": (_set(["summary", "by_status", "pass"], "1"),
                            "at summary/by_status/pass"),
    "device count a string": (_set(["platform", "local_device_count"], "8"),
                              "at platform/local_device_count"),
    "unknown status": (_set(["results", 0, "status"], "passed-ish"), "at results/0/status"),
    "verdict wrong type": (_set(["verdict"], None), "at verdict"),
    "suite missing": (_del(["suite"]), "'suite' is a required property"),
    "duplicate ids": (lambda d: d["results"].append(dict(d["results"][0])),
                      "lists conformance/test_a.py::t[1] more than once"),
    # issue 27: any depth is exit 3 with one line (json.loads raised RecursionError)
    "nested arrays 100000 deep": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "nested objects 100000 deep": ('{"a":' * 100_000 + "1" + "}" * 100_000,
                                   "nested too deeply"),
}


def _write_malformed(path, case):
    content, _ = MALFORMED[case]
    target = path / "report.json"
    if content is None:
        target.write_text(target.read_text()[:-200])
    elif isinstance(content, bytes):
        target.write_bytes(content)
    elif isinstance(content, str):
        target.write_text(content)
    else:
        doc = json.loads(target.read_text())
        content(doc)
        target.write_text(json.dumps(doc))
    _rehash(path)


def _rehash(path):
    """Re-hash the manifest over the files as they are (a consistent, malformed bundle)."""
    lines = [f"{bundle_files.sha256_file(path / n)}  {n}" for n in bundle_files.FILES]
    (path / bundle_files.MANIFEST).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    return bundle_files.write(_small_doc(), tmp_path_factory.mktemp("small") / "b").parent


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_report_is_exit_3_with_a_reason(case, small_bundle, tmp_path, capsys):
    path = shutil.copytree(small_bundle, tmp_path / "b")
    _write_malformed(path, case)
    fragment = MALFORMED[case][1]
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3, proc.stdout
    assert any(fragment in line for line in proc.stdout.splitlines()), proc.stdout
    for args in (("diff", path, small_bundle), ("diff", small_bundle, path)):
        proc = main(capsys, *args)
        assert proc.returncode == 3 and fragment in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and not proc.stdout


def test_malformed_report_gives_no_traceback_in_a_fresh_process(small_bundle, tmp_path):
    (tmp_path / "report.json").write_text("[]")
    proc = cli("diff", str(tmp_path / "report.json"), str(small_bundle))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    proc = cli("verify", str(tmp_path))
    assert proc.returncode == 3 and "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["../../etc/passwd.json", "v4.json", "/dev/zero"])
def test_profile_name_is_never_read_as_a_path(name, tmp_path, capsys, monkeypatch):
    path = crafted(tmp_path)
    (tmp_path / "v4.json").write_text("{}")     # a file the bundle could point at
    monkeypatch.chdir(tmp_path)
    rewrite(path, lambda d: d["profile"].update(name=name))
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3 and "is not the name of a shipped profile" in proc.stdout


def test_missing_path_is_a_usage_error_for_diff_and_invalid_for_verify(small_bundle,
                                                                       tmp_path, capsys):
    proc = main(capsys, "diff", tmp_path / "nowhere", small_bundle)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = main(capsys, "diff", tmp_path, small_bundle)          # a directory, no report
    assert proc.returncode == 3 and "has no report.json: not a report bundle" in proc.stderr
    assert main(capsys, "verify", tmp_path / "nowhere").returncode == 3
    assert main(capsys, "diff", small_bundle).returncode == 2      # argparse: NEW missing


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            yield from _paths(v, prefix + (i,))


@hypothesis.settings(max_examples=60, deadline=None, derandomize=True, database=None)
@hypothesis.given(data=st.data())
def test_any_value_anywhere_never_escapes_as_an_exception(data, tmp_path_factory):
    """Replace any part of a valid report with any JSON value: ``verify`` returns a
    Verification (never raises), ``diff.load`` returns a report or raises MalformedReport,
    and ``compare`` of anything it loaded works."""
    doc = _small_doc(**{"conformance/test_b.py::u": "crash"})
    paths = list(_paths(doc))
    where = data.draw(st.sampled_from(paths[1:]), label="path")
    _set(list(where), data.draw(JSON, label="value"))(doc)
    path = bundle_files.write(_small_doc(), tmp_path_factory.mktemp("h") / "b").parent
    (path / "report.json").write_text(json.dumps(doc))
    _rehash(path)
    result = bundle_files.verify(path)
    assert isinstance(result, bundle_files.Verification)
    try:
        loaded = diff.load(path)
    except reportfile.MalformedReport as err:
        assert "\n" not in str(err) and not result.valid
        return
    diff.render(diff.compare(loaded, _small_doc()))


def _bundle(tmp_path, name, doc):
    return bundle_files.write(doc, tmp_path / name).parent


A, B, C = ("conformance/test_a.py::t[1]", "conformance/test_a.py::t[2]",
           "conformance/test_b.py::u")


@pytest.mark.parametrize("old, new, rc, section", [
    ({}, {}, 0, None),                                                   # nothing changed
    ({C: "absent"}, {C: "skipped"}, 0, "added"),                         # absent -> skipped
    ({C: "absent"}, {C: "not_supported"}, 0, "added"),
    ({}, {C: "skipped"}, 0, "changed"),                                  # a skip: no failure
    ({}, {C: "flaky"}, 1, "new_failures"),                               # pass -> flaky
    ({}, {C: "crash"}, 1, "new_failures"),
    ({C: "skipped"}, {C: "fail_error"}, 1, "new_failures"),
    ({C: "absent"}, {C: "crash"}, 1, "new_failures added"),              # a new test failing
    ({C: "crash"}, {}, 0, "fixes"),
    ({C: "flaky"}, {}, 0, "fixes"),
    ({C: "crash"}, {C: "timeout"}, 0, "changed"),
    ({}, {C: "absent"}, 0, "removed"),
])
def test_diff_status_transitions_and_exit_codes(old, new, rc, section, tmp_path, capsys):
    a, b = _bundle(tmp_path, "old", _small_doc(**old)), _bundle(tmp_path, "new",
                                                                 _small_doc(**new))
    changes = diff.compare(diff.load(a), diff.load(b))
    moved = {k for k in ("new_failures", "fixes", "changed", "added", "removed") if changes[k]}
    assert moved == set(section.split() if section else ()), changes
    proc = main(capsys, "diff", a, b)
    assert proc.returncode == rc, proc.stdout


def test_diff_losing_the_certified_verdict_is_a_regression(tmp_path, capsys):
    old = crafted(tmp_path, "old")
    new = crafted(tmp_path, "new", **{"test_lifecycle.py::test_use_after_delete_raises[asarray]":
                                      "skipped"})   # a skipped core test: not certified
    proc = main(capsys, "diff", old, new)
    assert proc.returncode == 1 and "the certified verdict was lost" in proc.stdout
    assert main(capsys, "diff", new, old).returncode == 0


def test_diff_matches_ids_across_install_locations(tmp_path, capsys):
    """Bundles written before ids were package-relative compare with current ones."""
    old = _small_doc()
    for r in old["results"]:
        r["nodeid"] = "../venv/lib/python3.11/site-packages/" + r["nodeid"]
    changes = diff.compare(old, _small_doc(**{C: "crash"}))
    assert not changes["added"] and not changes["removed"]
    assert changes["new_failures"] == [(C, "pass", "crash")]


def test_manifest_covers_subdirectories_and_stays_inside_the_bundle(tmp_path, capsys):
    path = crafted(tmp_path)
    (path / "repro").mkdir()
    (path / "repro" / "t.py").write_text("print(1)\n")
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3 and "repro/t.py is not listed in MANIFEST.sha256" in proc.stdout
    manifest = path / bundle_files.MANIFEST
    manifest.write_text(manifest.read_text()
                        + f"{bundle_files.sha256_file(path / 'repro' / 't.py')}  repro/t.py\n")
    assert main(capsys, "verify", path).returncode == 0      # a listed file in a subdirectory
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    manifest.write_text(manifest.read_text()
                        + f"{bundle_files.sha256_file(outside)}  ../outside.txt\n")
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3 and "names a file outside the bundle: '../outside.txt'" in \
        proc.stdout
    manifest.write_bytes(b"\xff\xfe")
    proc = main(capsys, "verify", path)
    assert proc.returncode == 3 and "MANIFEST.sha256 is unreadable" in proc.stdout
