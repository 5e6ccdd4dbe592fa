"""One pipeline finishes a run (issue 40, item 2).

``conformance.certification.finish.pipeline`` takes the merged records and the facts of
the run and does attribution, the report, its sections and the bundle. Its three
callers (the session's recording, ``finalize``, process 0 of a multi-host run) hand it
records and a header and edit nothing afterwards:

- statically: none of them builds, attributes, renders or writes a report itself, and
  none writes into what the pipeline returned (an item assignment, a mutating method);
- by behaviour: what ``finalize`` returns is what its report.json holds, byte for
  byte, and the pipeline refuses a section that would replace a built one.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import conformance
from conformance.certification import local_paths
from conformance.certification.bundle import bundle_files
from conformance.certification.finish import pipeline
from conformance.certification.results.records import Result
from conformance.certification.verdict import report
from conformance.session import results_log
from conformance.session import run_options
from tests.bundle_helpers import HEADER

PACKAGE = Path(conformance.__file__).resolve().parent
CALLERS = ("session/recording.py", "session/results_log.py", "cli_multihost.py")
#: The steps that belong to the pipeline alone: (module name, function name).
PIPELINE_STEPS = {("report", "build"), ("bundle_files", "write"),
                  ("attribution_sources", "attribute"), ("since_previous", "summary"),
                  ("plugin_verdict", "decide"), ("report_md", "render"),
                  ("report_html", "render")}
#: Methods that change a dict or a list in place.
MUTATING = {"update", "append", "extend", "insert", "setdefault", "pop", "popitem",
            "clear", "remove", "sort", "reverse", "__setitem__"}


def _calls_finish(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "finish" and isinstance(n.func.value, ast.Name)
               and n.func.value.id == "pipeline" for n in ast.walk(node))


def _names(target: ast.AST) -> set[str]:
    """The names (``x``, ``state.written``) an assignment target binds."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_names(t) for t in target.elts))
    return {ast.unparse(target)} if isinstance(target, (ast.Name, ast.Attribute)) else set()


def _root(node: ast.AST) -> str:
    """``doc`` of ``doc["a"]["b"]`` or ``doc["a"].x`` (the object written into)."""
    while isinstance(node, (ast.Subscript, ast.Attribute)) and not (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        node = node.value
    return ast.unparse(node)


def violations(source: str, where: str) -> list[str]:
    """What a caller of the pipeline does that only the pipeline may: a call of one of
    its steps (:data:`PIPELINE_STEPS`), or, in a function that calls
    ``pipeline.finish``, a write into a name bound from its result."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) \
                and (node.func.value.id, node.func.attr) in PIPELINE_STEPS:
            found.append(f"{where}:{node.lineno}: calls {ast.unparse(node.func)}")
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                or not _calls_finish(func):
            continue
        bound: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                    and _calls_finish(node.value):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    bound |= _names(target)
        for node in ast.walk(func):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else \
                node.targets if isinstance(node, ast.Delete) else []
            for target in targets:
                if isinstance(target, ast.Subscript) and _root(target) in bound:
                    found.append(f"{where}:{node.lineno}: writes into "
                                 f"{ast.unparse(target)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in MUTATING \
                    and _root(node.func.value) in bound:
                found.append(f"{where}:{node.lineno}: changes {ast.unparse(node.func)}")
    return found


@pytest.mark.parametrize("caller", CALLERS)
def test_callers_hand_records_to_the_pipeline_and_edit_nothing(caller):
    source = (PACKAGE / caller).read_text()
    assert _calls_finish(ast.parse(source)), f"{caller} does not call pipeline.finish"
    assert violations(source, caller) == []


@pytest.mark.parametrize("planted", [
    'doc["since_previous"] = None',
    'doc["results"][0]["scope"] = "global"',
    'doc.update({"shard": 1})',
    'doc["report_errors"].append("x")',
    'state.written[0]["verdict"] = "certified"',
    'doc = report.build([], collected=0, header={})',
])
def test_the_check_catches_an_edit_after_the_pipeline(planted):
    """The static check above, tried on each kind of edit it forbids."""
    source = ("def f(state, out):\n"
              "    doc, path = pipeline.finish(records, run, out)\n"
              "    state.written = pipeline.finish(records, run, out)\n"
              f"    {planted}\n")
    assert violations(source, "planted") != []


def _run_dir(out: Path) -> None:
    """A killed run's directory: ``run.json`` and a results log of three tests, one
    failed, with a corrupt line in the middle."""
    out.mkdir(parents=True)
    options = {k: None for k in run_options.SAVED}
    options.update(platform="cpu", cpu_devices=1, num_processes=1, profile="none",
                   declare=[], known_failures=[])
    (out / results_log.RUN_FILE).write_text(json.dumps({
        "argv": ["pjrt-conformance", "run"], "collected": 3, "hypothesis": None,
        "started_utc": "2026-11-22T00:00:00+00:00", "options": options}))
    lines = []
    for name, outcome in (("a", "passed"), ("b", "failed"), ("c", "passed")):
        for when in ("setup", "call", "teardown"):
            lines.append(json.dumps({
                "$report_type": "TestReport",
                "nodeid": f"conformance/test_registry.py::test_{name}",
                "location": ["conformance/test_registry.py", 1, name], "keywords": {},
                "outcome": outcome if when == "call" else "passed",
                "longrepr": "boom" if when == "call" and outcome == "failed" else None,
                "when": when, "user_properties": [], "sections": [], "duration": 0.5,
                "start": 1.0, "stop": 1.5}))
    lines.insert(4, "{cut off")
    (out / results_log.LOG_FILE).write_text("\n".join(lines) + "\n")


def test_finalize_returns_the_report_it_wrote(tmp_path):
    """The document ``finalize`` returns is report.json's, byte for byte: its dropped
    lines are an input of the pipeline (a report error the verdict counts), never an
    edit afterwards."""
    out = tmp_path / "run"
    _run_dir(out)
    doc, path, dropped = results_log.finalize(out, why="killed")
    assert dropped == [5]
    assert path.read_text(encoding="utf-8") == \
        bundle_files.json_text(local_paths.for_bundle(doc))
    assert any("dropped 1 corrupt" in e for e in doc["report_errors"])
    assert any("dropped 1 corrupt" in r for r in doc["verdict_reasons"])
    check = bundle_files.verify(out)
    assert check.valid and check.verdict == "incomplete", check.problems


def test_the_pipeline_refuses_a_section_that_replaces_a_built_one():
    records = pipeline.Records(fresh=[Result("conformance/test_registry.py::test_a",
                                             "registry", "pass")], sources=[])
    with pytest.raises(ValueError, match="verdict"):
        pipeline.document(records, pipeline.RunHeader(header=dict(HEADER), collected=1,
                                                      sections={"verdict": "certified"}))


def test_record_facts_and_report_errors_are_inputs_of_the_one_build():
    """What the multi-host run adds to its records and what finalize adds to the report
    errors go in through ``report.build``, and the verdict counts the errors."""
    results = [Result("conformance/test_registry.py::test_a", "registry", "pass")]
    doc = report.build(results, collected=1, header=dict(HEADER),
                       report_errors=("a dropped line",),
                       record_facts={results[0].nodeid: {"scope": "per_process"}})
    assert doc["results"][0]["scope"] == "per_process"
    assert doc["report_errors"] == ["a dropped line"]
    assert "report error: a dropped line" in doc["verdict_reasons"]
