"""A good neighbour (issue 19 part 7): installed in an environment, the suite's plugin
leaves another project's pytest run alone, and acts when the run asks for the suite."""

import pytest

from conformance.session import activation
from tests.mutants.runner import pytester_run

_FOREIGN = """
import sys
from hypothesis import given, settings, strategies as st

@given(st.integers())
def test_settings(x):
    s = settings()
    print(f"SEEN max_examples={s.max_examples} derandomize={s.derandomize} "
          f"database={s.database is not None} jax={'jax' in sys.modules} "
          f"jaxlib={'jaxlib' in sys.modules} "
          f"plugin={'conformance.session.pytest_plugin' in sys.modules} "
          f"state={'conformance.session.session_state' in sys.modules}")
"""


@pytest.fixture
def foreign(pytester, monkeypatch):
    for var in ("CI", "TF_BUILD"):  # Hypothesis' own CI detection would change its defaults
        monkeypatch.delenv(var, raising=False)
    pytester.makepyfile(test_foreign=_FOREIGN)

    def run(*args):
        result = pytester_run(pytester, "-s", "-p", "no:cacheprovider", *args)
        seen = [line for line in result.outlines if line.startswith("SEEN ")]
        assert result.ret == 0 and seen, result.stdout.str()
        return seen[0]
    return run


def test_foreign_project_sees_default_settings_and_no_backend(foreign):
    seen = foreign()
    assert seen == ("SEEN max_examples=100 derandomize=False database=True jax=False "
                    "jaxlib=False plugin=True state=False")


def test_explicit_platform_activates_the_suite(foreign):
    """The same project asking for the suite gets it: the suite's profile and backend."""
    seen = foreign("--platform=cpu", "--cpu-devices=1", "--profile=none")
    assert "max_examples=8 derandomize=True database=False jax=True" in seen
    assert "state=True" in seen


@pytest.mark.parametrize("args,pyargs,expected", [
    (["conformance"], True, True),
    (["conformance.test_types::test_x"], True, True),
    (["tests"], False, False),
    ([str(activation.PACKAGE / "test_types.py")], False, True),
    ([str(activation.PACKAGE.parent / "tests")], False, False),
])
def test_collecting_the_package_activates(args, pyargs, expected, pytestconfig, monkeypatch):
    monkeypatch.setattr(pytestconfig, "args", args)
    monkeypatch.setattr(pytestconfig.option, "pyargs", pyargs)
    assert activation._collects_package(pytestconfig) is expected


@pytest.mark.parametrize("args,expected", [
    (["-p", "pjrt_conformance"], True), (["-ppjrt_conformance"], True),
    (["-p", "xdist"], False), ([], False)])
def test_naming_the_plugin_activates(args, expected):
    assert activation._named_plugin(args) is expected
