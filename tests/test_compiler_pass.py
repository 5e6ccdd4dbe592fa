"""Naming the compiler pass (conformance/programs/compiler_pass.py): the pass whose
disabling makes a wrong program pass, on a backend that writes XLA's HLO pass dumps
(faked: which passes the "compiler" runs, and which one breaks the program), and
"undecided" whenever that cannot be decided; the real defect on the releases where the
catalog measured it; the line in report.md, report.html and the reproduction."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.certification.catalog import defect_catalog
from conformance.certification.rendering import failure_view, repro, report_html, report_md
from conformance.helpers.assertions import BackendCrash
from conformance.programs import compiled_programs, compiler_pass
from conformance.session import outcomes
from runtime import xla_bridge
from tests import report_docs

#: (pipeline, pass) steps the fake compiler "runs" and dumps, in order.
STEPS = [("simplification", "algsimp"), ("simplification", "dce"),
         ("simplification", "simplification"), ("fusion-pipeline", "fusion")]
RIGHT, WRONG = np.array([8.0, 16.0], np.float32), np.array([16.0, 24.0], np.float32)


class _Abort(BaseException):
    """XLA's CHECK failure: the process dies (not an Exception the child catches)."""


def _fake_compiler(monkeypatch, broken_by: set[str] | None, dumps: bool = True,
                   aborts: frozenset[str] = frozenset()):
    """``compiler_pass._compile_run`` replaced: wrong outputs unless a pass of
    ``broken_by`` is disabled (None: the program is always right); with ``dumps`` it
    writes the dump files XLA names after each changing pass; disabling a pass of
    ``aborts`` kills the "process". Returns the calls."""
    calls = []

    def compile_run(client, text, args, device, overrides):
        calls.append(dict(overrides))
        folder = overrides.get("xla_dump_to")
        if folder and dumps:
            for step, (pipeline, name) in enumerate(STEPS):
                nxt = STEPS[step + 1][1] if step + 1 < len(STEPS) else "pipeline-end"
                (Path(folder) / f"module_0001.jit_f.{step:04d}.{pipeline}.after_{name}."
                                f"before_{nxt}.txt").write_text(f"HloModule after {name}")
        disabled = overrides.get("xla_disable_hlo_passes")
        if disabled in aborts:
            raise _Abort(disabled)
        if broken_by is None or disabled in broken_by:
            return [RIGHT]
        if disabled == "fusion":
            raise RuntimeError("INTERNAL: a pass the pipeline needs")
        return [WRONG]

    monkeypatch.setattr(compiler_pass, "_compile_run", compile_run)
    return calls


def _in_process(client=None, device=None):
    """The ``isolated`` runner of :func:`compiler_pass.find`, in this process: an abort
    of the fake compiler becomes the crash the real child's death is."""
    def run(snippet, *, call, timeout):
        folder = re.search(r"child_main\(client, device, '([^']*)'\)", snippet).group(1)
        try:
            compiler_pass.child_main(client, device, folder)
        except _Abort as died:
            raise BackendCrash(f"process killed by SIGABRT [{call}: {died}]") from None
        return ""
    return run


def _right(outs):
    return np.array_equal(outs[0], RIGHT)


def _find(passes=None):
    return compiler_pass.find(_in_process(), "module {}", [np.int32(1)], passes or _right)


def test_the_pass_whose_disabling_makes_the_program_pass_is_named(monkeypatch):
    calls = _fake_compiler(monkeypatch, {"dce"})
    found = _find()
    assert found.pass_name == "dce" and found.fixers == ("dce",)
    assert found.tried == ("algsimp", "dce", "simplification", "fusion")
    assert found.module_before == "HloModule after algsimp"   # the dump before dce ran
    assert found.note().startswith("compiler pass: dce (the program passes with "
                                   "xla_disable_hlo_passes=dce")
    assert calls[0]["xla_dump_hlo_pass_re"] == ".*"
    assert [c.get("xla_disable_hlo_passes") for c in calls[1:]] == list(found.tried)


def test_a_pass_is_preferred_over_the_pipeline_that_holds_it(monkeypatch):
    _fake_compiler(monkeypatch, {"simplification", "algsimp"})
    found = _find()
    assert found.pass_name == "algsimp" and found.fixers == ("algsimp", "simplification")
    assert "disabling simplification also does" in found.reason
    assert found.module_before is None   # algsimp changed the module first: no dump before


@pytest.mark.parametrize("broken_by, dumps, why", [
    (set(), True, "no single pass's disabling makes it pass (4 tried)"),
    ({"dce"}, False, "the backend wrote no HLO pass dumps"),
    (None, True, "the program passes when recompiled with HLO dumps"),
])
def test_undecided_is_said_never_guessed(monkeypatch, broken_by, dumps, why):
    _fake_compiler(monkeypatch, broken_by, dumps)
    found = _find()
    assert found.pass_name is None and why in found.reason
    assert found.note().startswith("compiler pass: undecided (")
    assert found.data()["pass"] is None


def test_a_compile_error_while_dumping_is_undecided(monkeypatch):
    def broken(*_):
        raise _Abort("the plugin aborts on debug options")
    monkeypatch.setattr(compiler_pass, "_compile_run", broken)
    found = _find()
    assert found.pass_name is None and "SIGABRT" in found.reason


def test_a_pass_whose_disabling_kills_the_process_is_skipped(monkeypatch):
    """XLA aborts the process when a pass that a later one needs is disabled (seen under
    the nightly profile): the recompiles run in a child, and a new child goes on after
    the pass that killed it."""
    calls = _fake_compiler(monkeypatch, {"fusion-x", "simplification"},
                           aborts=frozenset({"algsimp", "dce"}))
    found = _find()
    assert found.pass_name == "simplification", found
    assert "disabling algsimp, dce killed the process" in found.reason
    tried = [c.get("xla_disable_hlo_passes") for c in calls[1:]]
    assert tried == ["algsimp", "dce", "simplification", "fusion"]


def test_the_finding_is_failure_data(monkeypatch):
    _fake_compiler(monkeypatch, {"dce"})
    err = AssertionError("out differs from expected")
    compiler_pass.attach(err, _find())
    facts = outcomes.failure_facts(err)
    assert facts["compiler_pass"]["pass"] == "dce"
    assert any(n.startswith("compiler pass: dce") for n in err.__notes__)
    assert compiler_pass.of(AssertionError()) is None


def test_report_md_html_and_the_reproduction_show_the_pass():
    d = report_docs.doc()
    f = next(f for f in d["failures"] if f["status"] == "fail_wrong_result")
    f["compiler_pass"] = {"pass": "algsimp", "reason": "the program passes with "
                          "xla_disable_hlo_passes=algsimp, 9 passes tried", "tried": ["algsimp"],
                          "fixers": ["algsimp"], "module_before": "HloModule jit_nested"}
    line = "compiler pass: algsimp (the program passes with xla_disable_hlo_passes=algsimp"
    assert failure_view.compiler_pass_line(f).startswith(line)
    assert line in report_md.render(copy.deepcopy(d))
    assert "HloModule jit_nested" in report_md.render(copy.deepcopy(d))
    assert line in report_html.render(copy.deepcopy(d))
    assert failure_view.compiler_pass_line({"nodeid": "x"}) == ""
    f["arrays"] = {"inputs": [{"dtype": "float32", "shape": [1], "base64": "AAAAAA=="}],
                   "expected": {"dtype": "float32", "shape": [1],
                                              "base64": "AAAAAA=="},
                   "assertion": "assert_exact", "options": {}}
    f["program_text"] = "module @jit_f {}"
    text = repro.script(f, d)
    assert '"pass": "algsimp"' in text and "--disable-pass" in text


def test_the_nested_dynamic_slice_names_the_algebraic_simplifier():
    """On the releases where the catalog measured xla-nested-dynamic-slice-clamp
    present, the real defect names XLA's algebraic simplifier (algsimp)."""
    from conformance import test_programs
    (defect,) = [d for d in defect_catalog.load() if d.id == "xla-nested-dynamic-slice-clamp"]
    (entry, *_) = defect_catalog.entries([defect])
    if not entry.applies("cpu"):
        pytest.skip(f"installed versions outside {defect.id}'s range ({defect.requirement})")
    program_cache = compiled_programs.ProgramCache(xla_bridge.get_backend("cpu"))
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    args = [x, np.int32(0), np.int32(2)]
    device = program_cache.client.local_devices()[0]
    _, text = program_cache.run("nested_dynamic_slice", test_programs._nested_dynamic_slice,
                                args, device)
    found = compiler_pass.find(_in_process(program_cache.client, device), text, args,
                               lambda outs: np.array_equal(outs[0], x[1:3, 0:1]))
    assert found.pass_name == "algsimp", found
    assert found.module_before and "dynamic-slice" in found.module_before


def test_copy_insertion_is_never_disabled(monkeypatch):
    """Without copy-insertion no while loop ends (XLA:CPU): the search skips it, so a
    failing program with a loop is not held to the child's timeout."""
    monkeypatch.setattr(sys.modules[__name__], "STEPS", STEPS + [("copy", "copy-insertion")])
    calls = _fake_compiler(monkeypatch, {"dce"})
    found = _find()
    assert found.pass_name == "dce" and "copy-insertion" not in found.tried
    assert "copy-insertion" not in [c.get("xla_disable_hlo_passes") for c in calls]
