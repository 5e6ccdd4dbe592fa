"""The shipped defect catalog: schema validation of bad files, matching conditions,
and that every entry names tests that exist."""

import subprocess
import sys
import textwrap

import pytest

from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.certification.catalog import profiles

GOOD = """
component = "test component"

[[defect]]
id = "good-one"
tests = ["conformance/test_lifecycle.py::test_use_after_delete_raises[is_ready]"]
affects = ["jaxlib>=0.10"]
platform = "cpu"
attribution = "framework"
layer = "framework"
upstream = "https://github.com/jax-ml/jax/issues/37761"
summary = "a correct one-line description"
expected = ["crash"]
evidence = "the PJRT C API re-run of the same calls passes"
repro = "docs/repro/deleted_array_method.py"
"""


def _write(tmp_path, text, name="cat.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_good_file_loads(tmp_path):
    (d,) = defect_catalog.load_file(_write(tmp_path, GOOD))
    assert (d.id, d.attribution, d.expected, d.platform) == ("good-one", "framework",
                                                              ("crash",), "cpu")
    assert d.requirement == "jaxlib>=0.10 and platform=cpu"
    assert d.as_dict() == {"id": "good-one", "summary": "a correct one-line description",
                           "upstream": "https://github.com/jax-ml/jax/issues/37761"}


@pytest.mark.parametrize("old, new, fragment", [
    ('expected = ["crash"]', 'expected = ["crash"]\nseverity = "high"',
     "entry 0 ('good-one'): unknown key(s) ['severity']"),
    ('component = "test component"', 'component = "x"\nowner = "me"',
     "file: unknown key(s) ['owner']"),
    ('affects = ["jaxlib>=0.10"]', 'affects = ["jaxlib>>0.10"]',
     "entry 0 ('good-one'): affects: bad requirement 'jaxlib>>0.10'"),
    ('attribution = "framework"', 'attribution = "vendor"',
     "entry 0 ('good-one'): attribution: 'vendor' is not one of"),
    ('upstream = "https://github.com/jax-ml/jax/issues/37761"', 'upstream = "jax#37761"',
     "entry 0 ('good-one'): upstream"),
    ('upstream = "https://github.com/jax-ml/jax/issues/37761"',
     'upstream = "https://example.com/jax-ml/jax/issues/1"', "entry 0 ('good-one'): upstream"),
    ('expected = ["crash"]', 'expected = ["pass"]', "entry 0 ('good-one'): expected/0"),
    ('id = "good-one"', 'id = "Good One"', "entry 0 ('Good One'): id"),
    ('tests = ["conformance', 'tests = ["tests', "entry 0 ('good-one'): tests/0"),
    # a framework attribution names the layer above the PJRT C API that backs it
    ('layer = "framework"\n', '', "entry 0 ('good-one'): (entry): 'layer' is a required property"),
    ('layer = "framework"', 'layer = "plugin"', "entry 0 ('good-one'): layer"),
])
def test_schema_rejects_bad_entries_naming_file_entry_and_key(tmp_path, old, new, fragment):
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ValueError) as err:
        defect_catalog.load_file(path)
    assert str(err.value).startswith(f"{path}: ") and fragment in str(err.value), err.value


def test_unreadable_toml_and_missing_keys(tmp_path):
    with pytest.raises(ValueError, match="cannot read the defect catalog"):
        defect_catalog.load_file(_write(tmp_path, "[[defect]\n"))
    with pytest.raises(ValueError, match="'summary' is a required property"):
        defect_catalog.load_file(_write(tmp_path, GOOD.replace(
            'summary = "a correct one-line description"\n', "")))


def test_duplicate_ids_and_bad_paths(tmp_path):
    _write(tmp_path, GOOD, "a.toml")
    _write(tmp_path, GOOD, "b.toml")
    with pytest.raises(ValueError, match="defect id 'good-one' is already listed in a.toml"):
        defect_catalog.load([str(tmp_path)])
    with pytest.raises(ValueError, match="--defects=nowhere: no such file"):
        defect_catalog.load(["nowhere"])
    with pytest.raises(ValueError, match="--defects none excludes other values"):
        defect_catalog.load(["none", "shipped"])
    assert defect_catalog.load(["none"]) == []


def test_conditions_platform_plugin_library_and_versions(tmp_path):
    text = GOOD.replace('platform = "cpu"', 'platform = "cpu"\nplugin_library = false')
    (entry,) = defect_catalog.entries(defect_catalog.load_file(_write(tmp_path, text)))
    assert entry.applies("cpu") and not entry.applies("cpu", plugin_library=True)
    assert not entry.applies("cuda")
    assert known_failures.match([entry], [entry.pattern], "cpu", plugin_library=True) == {}
    assert entry.matched == 0
    assert known_failures.match([entry], [entry.pattern], "cpu") == {entry.pattern: entry}
    assert entry.matched == 1
    absent = known_failures.Entry("x", "no-such-distribution-xyz>=0", "r", "s")
    assert not absent.applies("cpu")  # a requirement on a distribution not installed
    old = known_failures.Entry("x", "jaxlib<0.1", "r", "s")
    assert not old.applies("cpu")


def test_shipped_catalog_is_valid_and_names_existing_tests():
    defects = defect_catalog.load()
    assert {d.attribution for d in defects} <= {"plugin", "framework", "suite"}
    prof = profiles.load(profiles.DEFAULT_PROFILE)
    ids = ["conformance/" + t.replace("{device}", "cpu:0") for t in prof.tests]
    for entry in defect_catalog.entries(defects):
        assert any(entry.matches(n) for n in ids), f"{entry.source}: {entry.pattern} " \
                                                   "matches no test of the shipped profile"


def test_shipped_catalog_corrects_the_old_atan2_description():
    (atan2,) = [d for d in defect_catalog.load() if d.id == "xla-cpu-atan2-subnormal-pairs"]
    assert "subnormal" in atan2.summary and "correct at (+-inf, +-inf)" in atan2.summary


@pytest.mark.parametrize("option, message", [
    ("--defects={bad}", "{bad}: entry 0 ('good-one'): attribution"),
    ("--reference-timeout=0", "--reference-timeout must be > 0 seconds, got 0.0"),
])
def test_run_rejects_bad_catalogs_and_options_as_usage_errors(tmp_path, option, message):
    bad = _write(tmp_path, GOOD.replace('attribution = "framework"', 'attribution = "vendor"'))
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--profile", "none",
                           option.format(bad=bad), "--output", str(tmp_path / "out"), "--",
                           "-k", "nothing_matches_this"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert message.format(bad=bad) in proc.stdout + proc.stderr
