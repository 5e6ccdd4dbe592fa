"""The mutant catalog and its score (tests/mutants): a fast subset runs in CI.

The whole catalog runs in the nightly command (``pytest -m slow``, docs/ci.md) and on
demand: ``python -m tests.mutants -j 2`` (tests/mutants/README.md).
"""

import collections
import os
from pathlib import Path

import pytest

from conformance.session import api
from tests.mutants import CATALOG, KINDS, runner, score
from tests.mutants.catalog import Target, add
from tests.mutants.composition import MUTANTS
from tests.mutants.runner import Outcome

AREAS = {p.stem for p in (Path(__file__).parents[1] / "conformance").glob("test_*.py")}
# one mutant per operator kind, each killed by a small selection on every healthy suite
# (the output kind's clamps infinities to the finite range; out-last-device, which the
# composition areas kill too, cost ~95 s of children with its control and runs in the
# nightly whole catalog)
REPRESENTATIVES = ["hlo-add-to-subtract", "out-clamp-infinities", "xfer-put-last-device",
                   "mem-put-ignores-kind", "api-device-count-plus-one"]
#: Child runs at a time: one inside an xdist worker (its siblings already use the cores).
JOBS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


def test_catalog_has_at_least_60_mutants_of_every_kind():
    assert len(CATALOG) >= 60, len(CATALOG)
    assert {m.kind for m in CATALOG.values()} == set(KINDS)
    assert {CATALOG[n].kind for n in REPRESENTATIVES} == set(KINDS)


def test_readme_counts_match_the_catalog():
    """tests/mutants/README.md's count of the catalog, in all and per kind, is the
    catalog's (it said 128 while the catalog held 144)."""
    text = " ".join((Path(__file__).parent / "mutants" / "README.md").read_text().split())
    counts = collections.Counter(m.kind for m in CATALOG.values())
    said = f"({len(CATALOG)} mutants: " + ", ".join(
        f"{n} `{kind}`" for kind, n in counts.most_common()) + ";"
    assert said in text, f"tests/mutants/README.md should say {said!r}"
    composition = sum(1 for m in CATALOG.values() if m.name in MUTANTS)
    assert f"the {composition} of `composition.py`" in text


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_mutant_targets_existing_areas_and_says_what_it_breaks(name):
    mutant = CATALOG[name]
    assert mutant.doc, f"{name} has no description"
    assert {t.module for t in mutant.targets} <= AREAS, mutant.targets
    assert mutant.expression().count("(") == mutant.expression().count(")")


def test_catalog_rejects_bad_mutants():
    with pytest.raises(ValueError, match="already in the catalog"):
        add("broken-flip", "hlo", object, "test_transfer")
    with pytest.raises(ValueError, match="'kind'"):
        add("x-new", "miscompile", object, "test_transfer")
    with pytest.raises(ValueError, match="'targets'"):
        add("x-new", "hlo", object, "")
    assert "x-new" not in CATALOG
    with pytest.raises(KeyError, match="no-such-mutant"):
        runner.select(["no-such-mutant"])


def test_module_api_seam():
    from runtime import xla_client

    assert api.module_api("seam-test") is xla_client
    fake = object()
    api.register_module_api("seam-test", fake)
    try:
        assert api.module_api("seam-test") is fake
    finally:
        api.unregister_module_api("seam-test")
    assert api.module_api("seam-test") is xla_client
    with pytest.raises(TypeError, match="'platform'"):
        api.register_module_api("", fake)
    with pytest.raises(TypeError, match="'module'"):
        api.register_module_api("seam-test", None)
    with pytest.raises(TypeError, match="'platform'"):
        api.module_api(None)


def _outcome(name, areas, killed, failing=(), error=None):
    return Outcome(name, "hlo", tuple(areas), list(killed), {}, 1, 0.0, list(failing), error)


def test_score_counts_a_mutant_in_each_area_it_targets():
    outcomes = [_outcome("a", ["x", "y"], ["y"]), _outcome("b", ["x"], []),
                _outcome("c", ["y"], ["y"])]
    areas = score.by_area(outcomes)
    assert (areas["x"].killed, areas["x"].survivors) == ([], ["a", "b"])
    assert (areas["y"].killed, areas["y"].survivors) == (["a", "c"], [])
    assert score.overall(outcomes) == pytest.approx(2 / 3)
    text = score.report(outcomes, [])
    assert "surviving mutants:" in text and "  b (hlo): x" in text


def test_a_control_with_failures_or_no_results_is_not_clean():
    assert score.control_failures([_outcome("cpu", ["x"], [])]) == []
    assert score.control_failures([_outcome("cpu", ["x"], ["x"], ["t.py::t"])]) == ["cpu: t.py::t"]
    assert score.control_failures([_outcome("cpu", ["x"], [], error="no results")])
    known = "test_kernels_elementwise.py::test_float_special_values[atan2-bfloat16]"  # cpu
    control = _outcome("cpu", ["kernels_elementwise"], [], [known, "t.py::t"])
    assert score.control_failures([control]) == ["cpu: t.py::t"]
    assert score.known_defects([control]) == [f"cpu: {known}"]


def test_a_test_failing_on_the_control_does_not_kill():
    mutant = _outcome("m", ["a", "b"], [], ["test_a.py::t", "test_b.py::u"])
    assert runner.against(mutant, set()).killed_areas == ["a", "b"]
    assert runner.against(mutant, {"test_a.py::t"}).killed_areas == ["b"]
    assert not runner.against(mutant, {"test_a.py::t", "test_b.py::u"}).killed


def test_child_command_selects_only_the_targets(tmp_path):
    cmd = runner.pytest_args("m", [Target("test_a", "b or c"), Target("test_d")], 4, tmp_path)
    assert cmd[cmd.index("-k") + 1] == "(test_a.py and (b or c)) or (test_d.py)"
    assert {"--platform=m", "--cpu-devices=4", "--profile=none", "no:cacheprovider"} <= set(cmd)


def test_representative_mutants_are_killed_and_the_control_is_clean():
    """One mutant per operator kind, each in a child pytest, and the healthy control."""
    outcomes, controls = runner.run_all(runner.select(REPRESENTATIVES), jobs=JOBS)
    survivors = {o.platform: o.error or o.statuses for o in outcomes if not o.killed}
    assert not survivors, survivors
    assert all(set(o.killed_areas) == set(o.areas) for o in outcomes), outcomes
    assert not score.control_failures(controls), score.report(outcomes, controls)
    assert sum(sum(c.statuses.values()) for c in controls) >= len(REPRESENTATIVES)


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
def test_the_whole_catalog_scores_and_the_control_is_clean():
    """``python -m tests.mutants``'s pass condition over the whole catalog: the score
    reaches its default ``--min-score`` (0.95), the control has no failures beyond the
    known defects, and no rewriting mutant is a no-op."""
    outcomes, controls = runner.run_all(runner.select(), jobs=JOBS)
    text = score.report(outcomes, controls)
    assert score.overall(outcomes) >= 0.95, text
    assert not score.control_failures(controls), text
    no_ops = [o.error for o in outcomes
              if o.error and o.error.startswith(("NoOpRewrite", "RewriteError"))]
    assert not no_ops, no_ops
