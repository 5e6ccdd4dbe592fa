"""The split of the self-tests between CI and the nightly command (docs/ci.md): the
default ``pytest`` deselects ``slow`` tests, every module with slow tests keeps a fast
representative in the default run, and the release matrix's nightly runs ``-m slow``."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from conformance.processes import runner
from tests import noxfile_module
from tests.mutants.runner import PYTEST

ROOT = Path(__file__).resolve().parent.parent
SLOW_MARK = re.compile(r"^\s*@pytest\.mark\.slow\b|marks=pytest\.mark\.slow\b", re.MULTILINE)


def _pytest_ini() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def test_default_run_deselects_slow_and_the_marker_is_registered():
    ini = _pytest_ini()
    addopts = shlex.split(ini["addopts"])
    assert addopts[addopts.index("-m") + 1] == "not slow", addopts
    assert any(m.startswith("slow:") for m in ini["markers"]), ini["markers"]


def _collected(*args: str) -> set[str]:
    done = runner.run_python(PYTEST, ["--collect-only", "-q", "-p", "no:cacheprovider",
                                      "-n", "0", *args], cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_every_module_with_slow_tests_keeps_a_fast_one_in_the_default_run():
    modules = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").glob("test_*.py"))
               if SLOW_MARK.search(p.read_text())]
    assert modules, "no slow tests"
    slow = _collected("-m", "slow", *modules)
    default = _collected(*modules)  # the addopts' -m 'not slow'
    assert slow and not slow & default, sorted(slow & default)
    for module in modules:
        assert any(n.startswith(module + "::") for n in slow), f"{module}: no slow test"
        assert any(n.startswith(module + "::") for n in default), f"{module}: all slow"


class _Session:
    """Records what a nox session would install and run."""

    def __init__(self, posargs):
        self.posargs, self.python, self.runs = list(posargs), "3.11", []

    def install(self, *args, **kwargs):
        pass

    def run(self, *args, **kwargs):
        self.runs.append(args)


def _noxfile():
    return noxfile_module.load()


@pytest.mark.parametrize("session, posargs", [("nightly", []), ("release", ["nightly"]),
                                              ("release", [])])
def test_nightly_and_the_release_matrix_run_the_slow_tests(session, posargs):
    fake = _Session(posargs)
    getattr(_noxfile(), session).func(fake, jax="0.10.2")
    slow = [r for r in fake.runs if r[0] == "pytest" and "-m" in r]
    assert [r[list(r).index("-m") + 1] for r in slow] == ["slow"], fake.runs
