"""Every child program of the suite is a module (issue 34 item 7): each ``runner.Module``
the package names resolves to an importable module with a ``__main__`` guard, so a typo
fails here rather than in a child at run time; no child is Python source in a string."""

import ast
import importlib.util
from pathlib import Path

import conformance
from conformance.processes import runner

PACKAGE = Path(conformance.__file__).resolve().parent


def _named_modules():
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Module" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.append((path.relative_to(PACKAGE.parent), node.args[0].value))
    return found


def test_every_child_module_resolves_and_runs_as_main():
    named = _named_modules()
    assert len(named) >= 6, named   # worker, pytest, isolation, preflight, probe, capi
    for where, name in named:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"{where}: runner.Module({name!r}) not found"
        if name.startswith("conformance."):
            text = Path(spec.origin).read_text(encoding="utf-8")
            assert '__name__ == "__main__"' in text, f"{name} has no __main__ guard"


def test_the_check_fails_on_a_misspelt_module():
    assert importlib.util.find_spec("conformance.session.preflight_chlid") is None
    assert runner.command(runner.Module("x.y"))[-1] == "x.y"
