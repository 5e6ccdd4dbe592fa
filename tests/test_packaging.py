"""The wheel holds every package of the project: ``pip install .`` (README command 1)
installs only the packages ``[tool.setuptools] packages`` lists, so a new subpackage left
out of it imports in the checkout and fails in the user's install."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for top in ("runtime", "conformance") for p in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
