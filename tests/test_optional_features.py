"""Optional PJRT features are capabilities, and framework gaps are the framework's.

- ``capabilities.optional_feature``: UNIMPLEMENTED -> ``not_supported`` naming the
  feature; another error or a wrong answer stays a failure (unit and through the suite
  on backends whose ``cost_analysis`` is unimplemented, errors or lies);
- ``runtime._plugin_ffi``: a plugin that cannot take the framework's FFI targets gives
  failures marked ``FRAMEWORK_MARKER`` (a fake ``PJRT_Api`` with no FFI extension), and
  a real CPU plugin takes them all.
"""

import ctypes
import importlib.util

import pytest

from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from runtime import _plugin_ffi
from runtime.xla_client import XlaRuntimeError
from tests.bundle_helpers import clean, flagged

UNIMPLEMENTED = XlaRuntimeError("UNIMPLEMENTED: GetCostAnalysis is not implemented.")
MISSING = "NOT_FOUND: No FFI handler registered for lapack_dgetrf_ffi on a platform Host"
COST = ("-k", "test_cost_analysis")


@pytest.mark.parametrize("err", [UNIMPLEMENTED, NotImplementedError("no"),
                                 XlaRuntimeError("INTERNAL: GetFoo is not implemented yet")])
def test_unimplemented_is_not_supported_naming_the_feature(err):
    with pytest.raises(capabilities.NotSupported,
                       match="not_supported: optional feature cost_analysis"):
        with capabilities.optional_feature("cost_analysis", "cost_analysis()"):
            raise err


@pytest.mark.parametrize("err", [XlaRuntimeError("INTERNAL: boom"), TypeError("UNIMPLEMENTED"),
                                 ValueError("bad"), AssertionError("wrong")])
def test_other_errors_stay_failures(err):
    with pytest.raises(type(err)):
        with capabilities.optional_feature("cost_analysis", "cost_analysis()"):
            raise err


def test_unknown_feature_is_a_value_error():
    with pytest.raises(ValueError, match="argument 'feature'"):
        with capabilities.optional_feature("teleport", "x"):
            pass


def _fake_api_capsule():
    """A PJRT_Api capsule of a plugin with no extensions (enough for the FFI lookup)."""
    api = _plugin_ffi._Api()
    api.struct_size = ctypes.sizeof(api)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_void_p]
    return api, new(ctypes.addressof(api), b"pjrt_c_api", None)


@pytest.fixture
def plugin_without_ffi():
    name = "fake-no-ffi-extension"
    api, capsule = _fake_api_capsule()
    try:
        yield _plugin_ffi.register_framework_targets(name, capsule)
    finally:
        _plugin_ffi._done.pop(name, None)  # private: the registry has no public reset


def test_plugin_without_ffi_extension_gives_framework_failures(plugin_without_ffi):
    reg = plugin_without_ffi
    assert not reg.registered and "lapack_dgetrf_ffi" in reg.failed
    assert "no PJRT FFI extension" in reg.failed["lapack_dgetrf_ffi"]
    reason = _plugin_ffi.missing_target_reason(MISSING)
    assert reason.startswith(_plugin_ffi.FRAMEWORK_MARKER) and "lapack_dgetrf_ffi" in reason
    # a capability dtype's gate does not hide it as not_supported; a core one fails too
    for dt in (dtype_helpers.BY_NAME["float64"], dtype_helpers.BY_NAME["float32"]):
        with pytest.raises(capabilities.FrameworkGap, match=_plugin_ffi.FRAMEWORK_MARKER):
            with capabilities.gated(dt, "execute(lu)"):
                raise XlaRuntimeError(MISSING)


def test_unrelated_missing_handler_is_not_the_framework(plugin_without_ffi):
    assert _plugin_ffi.missing_target_reason(
        "NOT_FOUND: No FFI handler registered for vendor_kernel on a platform Host") is None
    assert _plugin_ffi.missing_target_reason("INTERNAL: boom") is None
    with pytest.raises(TypeError, match="'error_text'"):
        _plugin_ffi.missing_target_reason(None)
    with pytest.raises(capabilities.NotSupported):  # an f64 gap of the backend stays not_supported
        with capabilities.gated(dtype_helpers.BY_NAME["float64"], "execute"):
            raise XlaRuntimeError("UNIMPLEMENTED: f64 dot")


@pytest.mark.skipif(importlib.util.find_spec("fastatomstruct_xla_cpu") is None,
                    reason="the test extra's real CPU plugin is not installed")
def test_real_cpu_plugin_takes_every_framework_target():
    import fastatomstruct_xla_cpu

    from runtime import xla_client

    name = "real-ffi-targets"
    xla_client.load_pjrt_plugin_dynamically(name, fastatomstruct_xla_cpu.library_path())
    xla_client.make_c_api_client(name, {"cpu_device_count": 1})
    reg = _plugin_ffi.registrations()[name]
    assert not reg.failed, reg.failed
    assert {"lapack_sgetrf_ffi", "cpu_csr_sparse_dense_ffi"} <= set(reg.registered)
    assert len(reg.registered) == len(_plugin_ffi.framework_targets())


def _with_unimplemented_platform(pytester):
    from tests.mutants.optional_features import CostAnalysisUnimplemented
    from tests.mutants.runner import CONFTEST

    pytester.makeconftest(CONFTEST + (
        "from runtime import xla_bridge\nfrom runtime._compat import native\n"
        "from tests.mutants.optional_features import CostAnalysisUnimplemented\n"
        "xla_bridge.register_backend_factory('opt-unimplemented', lambda: "
        "CostAnalysisUnimplemented(native.make_cpu_client(num_devices=2)), priority=-1)\n"))
    assert CostAnalysisUnimplemented.__doc__


def test_suite_gives_not_supported_for_unimplemented_cost_analysis(run_suite, pytester):
    _with_unimplemented_platform(pytester)
    result, doc = run_suite("opt-unimplemented", *COST)
    statuses = {r["nodeid"]: r["status"] for r in doc["results"]}
    assert statuses and set(statuses.values()) == {"not_supported"}, statuses
    assert all("optional feature cost_analysis" in n["message"] for n in doc["not_supported"])
    assert clean(doc), doc["verdict_reasons"]


@pytest.mark.parametrize("platform, status", [
    ("opt-cost-analysis-internal-error", "fail_error"),
    ("opt-cost-analysis-garbage", "fail_wrong_result"),
])  # opt-cost-analysis-wrong-flops runs with the catalog (python -m tests.mutants)
def test_suite_fails_on_broken_cost_analysis(run_suite, platform, status):
    result, doc = run_suite(platform, *COST)
    assert flagged(doc), result.stdout.str()[-2000:]
    assert {f["status"] for f in doc["failures"]} == {status}, doc["failures"]


def test_registered_target_the_plugin_does_not_find_is_the_framework():
    name = "fake-drops-registrations"
    saved = dict(_plugin_ffi._done)  # private: only this fake plugin, as if registered
    _plugin_ffi._done.clear()
    _plugin_ffi._done[name] = _plugin_ffi.TargetRegistration(
        name, "Host", ("lapack_dgetrf_ffi",), {}, (0, 81))
    try:
        reason = _plugin_ffi.missing_target_reason(MISSING)
    finally:
        _plugin_ffi._done.clear()
        _plugin_ffi._done.update(saved)
    assert reason.startswith(_plugin_ffi.FRAMEWORK_MARKER), reason
    assert "without error" in reason and "0.81" in reason


def test_a_features_own_answer_counts_only_for_that_feature():
    err = XlaRuntimeError("NOT_FOUND: No compiler registered for platform cpu")
    with pytest.raises(capabilities.NotSupported, match="optional feature compile_only"):
        with capabilities.optional_feature("compile_only", "compile(fma)"):
            raise err
    with pytest.raises(XlaRuntimeError):
        with capabilities.optional_feature("cost_analysis", "cost_analysis()"):
            raise err
