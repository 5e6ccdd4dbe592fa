"""A test may require several capabilities (issue 34 item 6): ``capabilities.requires(
"bf16", "donation")`` (or ``capabilities.param(dt, "donation")``) marks it; its tier is
``capability:bf16+donation``, mandatory only once every one is declared; it is
``not_supported`` as soon as any is missing, before it runs where the session knows
(``multi_device`` on a one-device platform) or when the backend cleanly refuses a call
for any of its dtypes."""

from __future__ import annotations

import json
import types

import pytest

from conformance.certification.catalog import profiles
from conformance.certification.verdict import plugin_verdict
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from runtime.xla_client import XlaRuntimeError


class _Item:
    """What ``capabilities.required`` reads of a pytest item: its marks, closest first."""

    def __init__(self, *marks):
        self.marks = [m.mark if hasattr(m, "mark") else m for m in marks]

    def iter_markers(self, name=None):
        return (m for m in self.marks if name is None or m.name == name)


def test_requires_marks_every_capability():
    mark = capabilities.requires("bf16", "donation").mark
    assert (mark.name, mark.args) == ("capability", ("bf16", "donation"))
    with pytest.raises(TypeError, match="one or more capability names"):
        capabilities.requires()
    with pytest.raises(TypeError, match="one or more capability names"):
        capabilities.requires("bf16", 3)
    with pytest.raises(ValueError, match="named twice"):
        capabilities.requires("bf16", "bf16")


def test_param_carries_the_dtype_capability_and_more():
    (mark,) = capabilities.param(dtype_helpers.BY_NAME["bfloat16"], "multi_device").marks
    assert mark.args == ("bf16", "multi_device")
    (mark,) = capabilities.param(dtype_helpers.BY_NAME["float32"], "donation").marks  # core dtype
    assert mark.args == ("donation",)
    assert not capabilities.param(dtype_helpers.BY_NAME["float32"]).marks
    assert capabilities.param(dtype_helpers.BY_NAME["bfloat16"]).marks[0].args == ("bf16",)


def test_required_collects_every_mark_once():
    item = _Item(capabilities.requires("bf16", "multi_device"),
                 capabilities.requires("multi_device"), capabilities.requires("donation"))
    assert capabilities.required(item) == ("bf16", "multi_device", "donation")
    assert capabilities.required(_Item()) == ()


def test_tier_of_several_capabilities_is_one_joined_tier():
    one = [capabilities.requires("bf16").mark]
    assert profiles.tier_of(one) == "capability:bf16"          # unchanged for one
    both = [capabilities.requires("donation", "bf16").mark]
    assert profiles.tier_of(both) == "capability:bf16+donation"
    split = [capabilities.requires("bf16").mark, capabilities.requires("donation").mark]
    assert profiles.tier_of(split) == "capability:bf16+donation"
    assert profiles.tier_of(both + [pytest.mark.informational.mark]) == "informational"
    assert profiles.tier_of([]) == "core"
    assert profiles.tier_capabilities("capability:bf16+donation") == ("bf16", "donation")
    assert profiles.tier_capabilities("core") == ()


def test_several_capabilities_are_mandatory_only_when_all_are_declared():
    tier = "capability:bf16+donation"
    assert not plugin_verdict.mandatory(tier, [])
    assert not plugin_verdict.mandatory(tier, ["bf16"])
    assert not plugin_verdict.mandatory(tier, ["donation", "f64"])
    assert plugin_verdict.mandatory(tier, ["donation", "bf16"])
    assert plugin_verdict.mandatory("capability:bf16", ["bf16"])
    assert plugin_verdict.mandatory("core", [])


def test_a_profile_may_hold_a_joined_tier(tmp_path):
    good = tmp_path / "p.json"
    good.write_text(profiles.canonical_text("p", 1, {"test_x.py::t": "capability:bf16+donation"}))
    assert profiles.load(str(good)).tests == {"test_x.py::t": "capability:bf16+donation"}
    bad = tmp_path / "q.json"
    bad.write_text(profiles.canonical_text("q", 1, {"test_x.py::t": "capability:bf16+warp"}))
    with pytest.raises(ValueError, match="unknown tiers"):
        profiles.load(str(bad))


def test_not_supported_when_any_required_capability_is_missing():
    capabilities.check_required(("bf16", "multi_device"), {})          # nothing missing
    capabilities.check_required(("bf16",), {"multi_device": "1 device"})
    with pytest.raises(capabilities.NotSupported) as info:
        capabilities.check_required(("bf16", "multi_device"),
                                    {"multi_device": "cpu has 1 local device"})
    assert str(info.value) == ("not_supported: needs capabilities bf16, multi_device; "
                               "missing: multi_device (cpu has 1 local device)")


def test_gated_names_every_capability_of_a_call():
    bf16, f64, f32 = (dtype_helpers.BY_NAME[n] for n in ("bfloat16", "float64", "float32"))
    with pytest.raises(capabilities.NotSupported,
                       match=r"capability bf16\+f64 \(bfloat16, float64\): convert raised"):
        with capabilities.gated([bf16, f64], "convert"):
            raise XlaRuntimeError("UNIMPLEMENTED: no bf16")
    with pytest.raises(capabilities.NotSupported, match=r"capability f64 \(float32, float64\)"):
        with capabilities.gated([f32, f64], "convert"):
            raise XlaRuntimeError("UNIMPLEMENTED: no f64")
    with pytest.raises(XlaRuntimeError):   # all core: a failure
        with capabilities.gated([f32, dtype_helpers.BY_NAME["int32"]], "convert"):
            raise XlaRuntimeError("UNIMPLEMENTED: no f32")
    with pytest.raises(capabilities.NotSupported, match=r"capability bf16 \(bfloat16\)"):
        with capabilities.gated(bf16, "one dtype, as before"):
            raise XlaRuntimeError("INTERNAL")


def test_the_session_knows_a_one_device_platform_lacks_multi_device():
    from conformance.session import session_state
    from conformance.session.run_options import RunOptions

    def state_with(count):
        s = session_state.SessionState(RunOptions(),
                                       types.SimpleNamespace(platform="cpu", cpu_devices=count))
        s._client = types.SimpleNamespace(platform="cpu", local_device_count=lambda: count)
        return s
    assert state_with(2).missing_capabilities() == {}
    assert state_with(1).missing_capabilities() == {"multi_device": "cpu has 1 local device"}


def test_a_multi_device_test_on_one_device_is_not_supported(run_suite):
    """End to end: on a one-device CPU client a ``multi_device`` test is ``not_supported``
    before it runs (it was a plain skip from its fixture), naming what is missing."""
    result, doc = run_suite("cpu", "-k", "test_reorder_shards_rejects_a_destination",
                            devices=1)
    assert doc is not None, result.stdout.str()[-3000:]
    (res,) = doc["results"]
    assert res["status"] == "not_supported", res
    assert res["tier"] == "capability:multi_device", res
    assert "missing: multi_device (cpu has 1 local device)" in json.dumps(doc), res
