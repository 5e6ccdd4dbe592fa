"""The layers of docs/architecture.md hold: import-linter's contracts in pyproject.toml
(``[tool.importlinter]``, the one statement of the layers) are kept by this checkout,
and they break when an upward import is planted in a copy of it.

``lint-imports`` runs in a child process on the checkout's own sources (``PYTHONPATH``
and the working directory are the root that holds them), as a person runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the test extra")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "conformance")


def lint_imports(root: Path) -> tuple[int, str]:
    """``lint-imports`` with ``root``'s pyproject.toml over the packages under ``root``:
    its exit status and its output (stdout and stderr, terminal colours removed)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return result.returncode, re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]


def test_lint_imports_keeps_every_contract():
    returncode, out = lint_imports(ROOT)
    assert returncode == 0, out
    assert f"Contracts: {len(contracts())} kept, 0 broken." in out, out


def _layered(contract_id: str) -> set[str]:
    (layers,) = [c for c in contracts() if c["id"] == contract_id]
    assert layers["type"] == "layers"
    return {name.strip() for layer in layers["layers"] for name in re.split(r"[|:]", layer)}


def test_every_conformance_package_is_in_a_layer():
    packages = {p.parent.name for p in (ROOT / "conformance").glob("*/__init__.py")}
    assert packages and packages == _layered("layers"), (sorted(packages),
                                                         sorted(_layered("layers")))


def test_every_certification_subpackage_and_module_is_in_a_layer():
    """certification/'s subpackages, and the modules at its root (what every subpackage
    may use), each sit in one layer of the certification contract."""
    root = ROOT / "conformance" / "certification"
    members = {p.parent.name for p in root.glob("*/__init__.py")} | {
        p.stem for p in root.glob("*.py") if p.name != "__init__.py"}
    assert members and members == _layered("certification-layers"), sorted(members)


@pytest.fixture(scope="module")
def planted_copy(tmp_path_factory) -> Path:
    """A copy of the checkout's Python sources and pyproject.toml."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            target = root / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    return root


@pytest.mark.parametrize("module, planted, broken", [
    # The three upward imports this contract was written to stop (issue 28, item 6),
    # one inside a function (grimp sees those too).
    ("conformance/helpers/sharding_helpers.py", "from conformance.programs import lowering",
     "conformance.helpers is not allowed to import conformance.programs"),
    ("conformance/programs/coverage.py",
     "def _planted():\n    from conformance.certification import records",
     "conformance.programs is not allowed to import conformance.certification"),
    ("conformance/processes/cluster.py", "from conformance.session import validate",
     "conformance.processes is not allowed to import conformance.session"),
    # Independent siblings of one layer.
    ("conformance/dashboard/bundle_history.py", "import conformance.session.api",
     "conformance.dashboard is not allowed to import conformance.session"),
    ("conformance/helpers/dtype_helpers.py", "import conformance.cli",
     "conformance.helpers is not allowed to import conformance."),
    ("runtime/versions.py", "import conformance", "runtime imports nothing of the suite"),
    # certification/'s layers: the upward arrows it had (issue 40, item 5).
    ("conformance/certification/catalog/known_failures.py",
     "from conformance.certification.bundle import bundle_files",
     "conformance.certification.catalog is not allowed to import "
     "conformance.certification.bundle"),
    ("conformance/certification/results/records.py",
     "def _planted():\n    from conformance.certification.verdict import report",
     "conformance.certification.results is not allowed to import "
     "conformance.certification.verdict"),
    ("conformance/certification/rendering/report_md.py",
     "from conformance.certification.compare import scoreboard",
     "conformance.certification.rendering is not allowed to import "
     "conformance.certification.compare"),
    ("conformance/certification/attribution/reference_rule.py",
     "from conformance.certification.results import records",
     "conformance.certification.attribution is not allowed to import "
     "conformance.certification.results"),
    ("conformance/certification/jsontext.py",
     "from conformance.certification.catalog import profiles",
     "conformance.certification.jsontext is not allowed to import "
     "conformance.certification.catalog"),
])
def test_a_planted_upward_import_breaks_the_contract(planted_copy, module, planted, broken):
    path = planted_copy / module
    original = path.read_text()
    try:
        path.write_text(f"{original}\n{planted}  # planted\n")
        returncode, out = lint_imports(planted_copy)
    finally:
        path.write_text(original)
    assert returncode == 1, out
    words = " ".join(out.split())   # import-linter wraps long lines at 80 columns
    assert "1 broken" in words and broken in words, out
    assert module.removesuffix(".py").replace("/", ".") in words, out
