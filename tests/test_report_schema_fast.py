"""The fast schema check of report.json is never laxer than jsonschema.

``reportfile.validate`` asks fastjsonschema first (compiled once per process, about 10x
faster on a full report) and ``jsonschema`` only where the fast check does not accept
the document. That is sound only if every document the fast check accepts is one that
``jsonschema`` (the schema's own draft, 2020-12) accepts too. These tests damage a real
report at a drawn place in drawn ways and check that implication, and show that the
schema rewrite the fast check needs (``reportfile._fast_form``) is what keeps it.
"""

import copy
import json
from pathlib import Path

import fastjsonschema
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.certification.bundle import reportfile

ROOT = Path(__file__).resolve().parents[1]


def _report() -> dict:
    """A committed CPU report cut to its first 10 results, 10 failed ones and 3 failures
    (the schema check does not count them; a small document keeps each example fast)."""
    path = sorted((ROOT / "reports" / "cpu").glob("*/report.json"))[-1]
    doc = json.loads(path.read_text())
    doc["results"] = doc["results"][:10] + [
        r for r in doc["results"][10:] if r["status"] != "pass"][:10]
    doc["failures"] = doc["failures"][:3]
    return doc


REPORT = _report()
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                         st.floats(allow_nan=False, allow_infinity=False, width=32),
                         st.sampled_from(["", "x", "pass", "framework", "2026-01-01", "lowering"]))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["source", "answer", "legacy", "status", "nodeid", "x"]), inner, max_size=3)),
    max_leaves=6)


def _jsonschema_errors(doc) -> list:
    return list(jsonschema.Draft202012Validator(reportfile.schema(doc["schema_version"]))
                .iter_errors(doc))


def _containers(node, path=()):
    yield path, node
    children = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        if isinstance(child, (dict, list)):
            yield from _containers(child, (*path, key))


CONTAINERS = [p for p, _ in _containers(REPORT)]


def _at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def damaged(draw):
    """The report with one drawn change in one drawn container: a value replaced by a
    drawn JSON value, a key or item removed, or an unknown key added."""
    doc = copy.deepcopy(REPORT)
    node = _at(doc, draw(st.sampled_from(CONTAINERS), label="container"))
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    action = draw(st.sampled_from(["replace", "remove", "add"]), label="action")
    if action == "add" or not keys:
        if isinstance(node, dict):
            node[draw(st.sampled_from(["extra", "legacy", "shared_with_xla", "x"]))] = \
                draw(JSON_VALUES)
        else:
            node.append(draw(JSON_VALUES))
        return doc
    key = draw(st.sampled_from(keys), label="key")
    if action == "remove":
        del node[key]
    else:
        node[key] = draw(JSON_VALUES, label="value")
    return doc


VERSION = REPORT["schema_version"]


def _never_laxer(doc, fast=reportfile.fast_valid) -> None:
    """Fails when ``fast`` accepts ``doc`` and jsonschema does not."""
    if fast(doc, VERSION):
        errors = _jsonschema_errors(doc)
        assert not errors, f"the fast check accepted what jsonschema rejects: {errors[0]}"


def test_the_committed_report_takes_the_fast_path():
    assert reportfile.fast_valid(REPORT, VERSION)
    assert not _jsonschema_errors(REPORT)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_what_the_fast_check_accepts_jsonschema_accepts(doc):
    _never_laxer(doc)


def _with_shared_with_xla(value) -> dict:
    doc = copy.deepcopy(REPORT)
    doc["results"][0]["evidence"] = [{"source": "catalog", "answer": "framework",
                                      "legacy": "x", "shared_with_xla": value}]
    return doc


@pytest.mark.parametrize("value", [1, 1.0, False, "true"])
def test_a_value_where_the_schema_says_const_true_is_rejected(value):
    """Python's ``1 == True`` does not leak through the fast check, and validate names
    the place with jsonschema's message."""
    doc = _with_shared_with_xla(value)
    assert _jsonschema_errors(doc)
    assert not reportfile.fast_valid(doc, VERSION)
    with pytest.raises(reportfile.MalformedReport, match="results/0/evidence/0"):
        reportfile.validate(doc)
    assert reportfile.fast_valid(_with_shared_with_xla(True), VERSION)


def test_the_check_fails_on_a_laxer_fast_validator():
    """A fast validator compiled from a schema that lost one constraint (here the
    ``const`` of ``shared_with_xla``) is caught by the same check."""
    lax_schema = json.loads(json.dumps(reportfile._fast_form(reportfile.schema(VERSION))))
    del lax_schema["$defs"]["evidence"]["oneOf"][0]["properties"]["shared_with_xla"]["const"]
    lax = fastjsonschema.compile(lax_schema)

    def lax_valid(doc, version):
        try:
            lax(doc)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    with pytest.raises(AssertionError, match="accepted what jsonschema rejects"):
        _never_laxer(_with_shared_with_xla(1), fast=lax_valid)


def _refs_with_siblings(node, path=""):
    if isinstance(node, dict):
        if "$ref" in node and set(node) - {"$ref", "description"}:
            yield path
        for key, child in node.items():
            yield from _refs_with_siblings(child, f"{path}/{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _refs_with_siblings(child, f"{path}/{i}")


@pytest.mark.parametrize("version", reportfile.READS)
def test_no_ref_has_a_sibling_keyword(version):
    """Draft-07 (what the fast check reads) ignores the keywords beside a ``$ref``;
    2020-12 applies them. The schemas must not have any, or the fast check is laxer."""
    assert not list(_refs_with_siblings(reportfile.schema(version)))
    assert list(_refs_with_siblings({"a": {"$ref": "#/x", "minimum": 0}})) == ["/a"]


def test_a_bool_schema_version_is_refused_before_any_schema():
    with pytest.raises(reportfile.MalformedReport, match="schema_version True"):
        reportfile.validate({**REPORT, "schema_version": True})


@pytest.mark.parametrize("version", [None, 1, True, "3", 3.0])
def test_a_schema_version_this_suite_does_not_read_is_a_clear_error(version):
    with pytest.raises(ValueError, match="argument 'version': expected one of 2, 3"):
        reportfile.fast_valid(REPORT, version)
    with pytest.raises(ValueError, match="argument 'version'"):
        reportfile.schema(version)


def test_a_float_schema_version_is_a_malformed_report():
    """``3.0`` equals 3 in JSON but names no schema file: one line, not a traceback."""
    with pytest.raises(reportfile.MalformedReport, match="schema_version 3.0"):
        reportfile.validate({**REPORT, "schema_version": 3.0})
