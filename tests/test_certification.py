"""Verdict rules (one test per rule), waivers, profiles and declared capabilities."""

import datetime
import json
import subprocess
import sys

import pytest

from conformance.certification.verdict import plugin_verdict
from conformance.certification.catalog import profiles
from conformance.certification.catalog import waivers
from conformance.certification.verdict.plugin_verdict import CERTIFIED, NOT_CERTIFIED
from tests.bundle_helpers import flagged
from tests.mutants.runner import pytester_run

PROFILE = profiles.Profile("t", 1, {"test_a.py::t_core[{device}]": "core",
                                    "test_a.py::t_bf16": "capability:bf16",
                                    "test_a.py::t_info": "informational"}, "0" * 64)


def _results(**status):
    """Results of a complete run of PROFILE on 2 devices, with some statuses overridden."""
    base = {"a/test_a.py::t_core[cpu:0]": ("core", "pass"),
            "a/test_a.py::t_core[cpu:1]": ("core", "pass"),
            "a/test_a.py::t_bf16": ("capability:bf16", "pass"),
            "a/test_a.py::t_info": ("informational", "pass")}
    names = {"core0": "a/test_a.py::t_core[cpu:0]", "bf16": "a/test_a.py::t_bf16",
             "info": "a/test_a.py::t_info"}
    for key, value in status.items():
        tier, _ = base[names[key]]
        base[names[key]] = (tier, value)
    return [{"nodeid": n, "tier": t, "status": s} for n, (t, s) in base.items()]


def _decide(results, *, declared=(), collected=None, profile=PROFILE, errors=()):
    return plugin_verdict.decide(results, collected=len(results) if collected is None
                                 else collected, profile=profile, declared=list(declared),
                                 device_count=2, errors=list(errors))


def test_complete_passing_run_is_certified():
    assert _decide(_results()) == (CERTIFIED, [])


def test_rule_nothing_collected():
    verdict, reasons = _decide([], profile=None)
    assert verdict == NOT_CERTIFIED and reasons == ["no test was collected"]


def test_rule_every_collected_test_has_a_result():
    verdict, reasons = _decide(_results(), collected=5)
    assert verdict == NOT_CERTIFIED and reasons == ["1 collected tests have no result"]


@pytest.mark.parametrize("status", ["crash", "timeout", "fail_wrong_result"])
@pytest.mark.parametrize("where", ["core0", "bf16", "info"])
def test_rule_never_allowed_statuses_in_any_tier(status, where):
    verdict, reasons = _decide(_results(**{where: status}))
    assert verdict == NOT_CERTIFIED and reasons[0].startswith(f"1 test(s) with status {status}")


@pytest.mark.parametrize("status", ["fail_error", "not_supported", "skipped"])
def test_rule_core_must_pass_or_be_waived(status):
    verdict, reasons = _decide(_results(core0=status))
    assert verdict == NOT_CERTIFIED and "neither pass nor waived" in reasons[0]
    assert _decide(_results(core0="waived"))[0] == CERTIFIED


def test_rule_declared_capability_is_mandatory():
    assert _decide(_results(bf16="not_supported"))[0] == CERTIFIED            # not declared
    verdict, reasons = _decide(_results(bf16="not_supported"), declared=["bf16"])
    assert verdict == NOT_CERTIFIED and "1 core or declared-capability" in reasons[0]


def test_rule_undeclared_capability_must_fail_gracefully():
    verdict, reasons = _decide(_results(bf16="fail_error"))
    assert verdict == NOT_CERTIFIED and "instead of failing gracefully" in reasons[0]


def test_informational_errors_do_not_block():
    assert _decide(_results(info="fail_error"))[0] == CERTIFIED


def test_rule_missing_and_unexpected_tests():
    results = _results()[1:]                                   # one device's core test missing
    verdict, reasons = _decide(results)
    assert verdict == NOT_CERTIFIED
    assert reasons == ["1 test(s) of profile t missing: test_a.py::t_core[{device}] (1 of 2)"]
    extra = _results() + [{"nodeid": "a/test_a.py::t_new", "tier": "core", "status": "pass"}]
    assert "1 test(s) not in profile t: test_a.py::t_new" in _decide(extra)[1]


def test_rule_report_errors_deny():
    verdict, reasons = _decide(_results(), errors=["waiver 'x' expired on 2020-01-01"])
    assert verdict == NOT_CERTIFIED and reasons == ["report error: waiver 'x' expired on "
                                                    "2020-01-01"]


def test_profile_ids_normalize_paths_and_devices():
    assert profiles.profile_id("../site-packages/conformance/test_x.py::t[cuda:3-int8]") == \
        "test_x.py::t[{device}-int8]"
    assert profiles.profile_id("test_x.py::t[add-float32]") == "test_x.py::t[add-float32]"


def test_declared_capabilities_are_validated(tmp_path):
    assert profiles.parse_declared(["bf16,f64", "bf16"]) == ["bf16", "f64"]
    with pytest.raises(ValueError, match="unknown capability 'bf17'; known: bf16"):
        profiles.parse_declared(["bf17"])
    f = tmp_path / "caps.txt"
    f.write_text("# vendor X\nfp8\ncomplex  # since 2.0\n")
    assert profiles.read_declare_file(f) == ["fp8", "complex"]


def test_unknown_profile_is_an_error():
    with pytest.raises(ValueError, match="unknown profile 'v99'; shipped: .*'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9'"):
        profiles.load("v99")


_WAIVER = """
[[waiver]]
test = "{test}"
issue = "https://example.org/issues/7"
expires = {expires}
reason = "tracked"
"""


def _waive(tmp_path, test, expires="2099-01-01"):
    f = tmp_path / "w.toml"
    f.write_text(_WAIVER.format(test=test, expires=expires))
    return waivers.parse(f)


def test_waiver_turns_an_error_into_waived(tmp_path):
    recs = [{"nodeid": "a/test_a.py::t_core[cpu:0]", "test_id": "test_a.py::t_core[{device}]",
             "status": "fail_error"}]
    errors = waivers.apply(_waive(tmp_path, "test_a.py::t_core*"), recs, datetime.date.today())
    assert errors == [] and recs[0]["status"] == "waived"
    assert recs[0]["waived_from"] == "fail_error" and recs[0]["waiver"]["issue"].endswith("/7")


@pytest.mark.parametrize("status", ["fail_wrong_result", "crash", "timeout"])
def test_wrong_results_are_never_waivable(tmp_path, status):
    recs = [{"nodeid": "n", "test_id": "test_a.py::t", "status": status}]
    errors = waivers.apply(_waive(tmp_path, "test_a.py::t"), recs, datetime.date.today())
    assert recs[0]["status"] == status and "never waivable" in errors[0]


def test_unknown_and_expired_waivers_are_errors(tmp_path):
    recs = [{"nodeid": "n", "test_id": "test_a.py::t", "status": "fail_error"}]
    assert "matches no test" in waivers.apply(_waive(tmp_path, "test_b.py::*"), recs,
                                              datetime.date.today())[0]
    errors = waivers.apply(_waive(tmp_path, "test_a.py::t", "2020-01-01"), recs,
                           datetime.date.today())
    assert "expired on 2020-01-01" in errors[0] and recs[0]["status"] == "fail_error"


@pytest.mark.parametrize("body,fragment", [
    ('[[waiver]]\ntest = "t"\nissue = "no-url"\nexpires = 2030-01-01\n', "http(s) URL"),
    ('[[waiver]]\ntest = "t"\nissue = "https://x/1"\nexpires = "soon"\n', "TOML date"),
    ('[[waiver]]\nissue = "https://x/1"\nexpires = 2030-01-01\n', "'test' must be"),
    ('[[waiver]\n', "--waivers"),
])
def test_malformed_waiver_files(tmp_path, body, fragment):
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(ValueError) as info:
        waivers.parse(f)
    assert fragment in str(info.value)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_shipped_profile_matches_the_suite():
    proc = _cli("profile", "--check", profiles.DEFAULT_PROFILE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"{len(profiles.load(profiles.DEFAULT_PROFILE).tests)} test ids match" in proc.stdout


def test_stale_profile_is_detected(tmp_path):
    prof = profiles.load(profiles.DEFAULT_PROFILE)
    tests = dict(prof.tests)
    dropped = sorted(tests)[0]
    del tests[dropped]
    tests["test_gone.py::test_removed"] = "core"
    stale = tmp_path / f"{prof.name}.json"
    stale.write_text(profiles.canonical_text(prof.name, prof.version, tests))
    proc = _cli("profile", "--check", str(stale))
    assert proc.returncode == 1
    assert f"not in the profile: {dropped}" in proc.stdout
    assert "in the profile, not collected: test_gone.py::test_removed" in proc.stdout


def test_cli_rejects_unknown_capability(tmp_path):
    proc = _cli("run", "--declare", "bf16,warp-drive", "--output", str(tmp_path / "o"))
    assert proc.returncode == 2 and "unknown capability 'warp-drive'" in proc.stderr + proc.stdout


def test_waiver_in_a_real_run(pytester):
    pytester.makepyfile(test_w="def test_flaky_api():\n    raise RuntimeError('not yet')\n\n"
                               "def test_wrong():\n    assert 1 == 2, 'out differs'\n")
    waiver_file = pytester.path / "w.toml"
    waiver_file.write_text(_WAIVER.format(test="test_w.py::test_*", expires="2099-12-31"))
    out = pytester.path / "rep"
    pytester_run(pytester, f"--report-dir={out}", "--profile=none",
                 f"--waivers={waiver_file}", "-p", "no:cacheprovider")
    doc = json.loads((out / "report.json").read_text())
    status = {r["nodeid"].split("::")[1]: r for r in doc["results"]}
    assert status["test_flaky_api"]["status"] == "waived"
    assert status["test_flaky_api"]["waived_from"] == "fail_error"
    assert status["test_wrong"]["status"] == "fail_wrong_result"      # never waivable
    assert any("never waivable" in e for e in doc["report_errors"])
    assert flagged(doc)
