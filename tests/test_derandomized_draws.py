"""The derandomized ``ci`` profile draws the same examples from any working directory, and
whatever else the run collected (tests/test_hypothesis_draws.py: Hypothesis' pool of
local constants is off in a conformance run)."""

import json
from pathlib import Path

import pytest

from conformance.processes import runner
from tests.mutants.runner import PYTEST

ROOT = Path(__file__).resolve().parents[1]
TEST = "test_reduce_bool"


def _draws(cwd: Path, target: list[str], store: Path, case: str = f"{TEST}[and]") -> list[dict]:
    """The drawn arguments of every example of ``case``, run by pytest in ``cwd``."""
    env = runner.child_env({"HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY": "1",
                            "HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER": "1",
                            "HYPOTHESIS_STORAGE_DIRECTORY": str(store)})
    env.pop("PYTEST_ADDOPTS", None)
    args = ["-q", "-p", "no:cacheprovider", "-n", "0", "--platform=cpu",
            "--hypothesis-profile=ci", *target]
    done = runner.run_python(PYTEST, args, cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cases = [json.loads(line) for f in sorted((store / "observed").glob("*testcases*.jsonl"))
             for line in f.read_text().splitlines()]
    draws = [{k: v for k, v in c["arguments"].items() if k.startswith("Draw")}
             for c in cases if c.get("type") == "test_case"
             and c["property"].endswith(f"::{case}")]
    assert draws, f"no examples of {case} observed: {done.stdout[-2000:]}"
    return draws


@pytest.mark.timeout(900)
def test_drawn_examples_do_not_depend_on_the_working_directory(tmp_path):
    at_root = _draws(ROOT, [f"conformance/test_kernels_reduce.py::{TEST}[and]"],
                     tmp_path / "root")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    from_pyargs = _draws(elsewhere, ["--pyargs", f"conformance.test_kernels_reduce::{TEST}[and]"],
                         tmp_path / "pyargs")
    assert at_root == from_pyargs
    assert len({json.dumps(d, sort_keys=True) for d in at_root}) > 1  # draws, not one case


@pytest.mark.timeout(900)
def test_a_one_module_rerun_draws_what_a_wider_collection_drew(tmp_path):
    """A failure's rerun command collects its one module; the main job collects them all.
    Before Hypothesis' pool of local constants was turned off, ``test_reduce[sum-int32]``
    drew an int32[31692] with these four modules collected and an int32[0, 4] alone."""
    case = "test_reduce[sum-int32]"
    alone = _draws(tmp_path, ["--pyargs", f"conformance.test_kernels_reduce::{case}"],
                   tmp_path / "alone", case)
    wider = _draws(tmp_path, ["--pyargs", "conformance.test_kernels_reduce",
                              "conformance.test_kernels_dot", "conformance.test_programs",
                              "conformance.test_stablehlo_ops", "-k", "test_reduce and sum-int32"],
                   tmp_path / "wider", case)
    assert alone == wider
