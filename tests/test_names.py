"""Names explain themselves (issue 40 item 6).

- No module or name of this project is imported under another name: every
  ``import conformance.x.y as z`` / ``from conformance.x import y as z`` (also of
  ``runtime``, ``tests``, ``benchmarks``, and relative imports) whose ``z`` is not the
  imported name fails, naming file and line. A module whose own name does not say what
  it is gets renamed instead (``conformance/programs/compiled_programs.py``, not
  ``cache as programs``). Third-party aliases (``numpy as np``...) are not this
  project's; ``runtime.xla_client as xc`` is jax's own convention for the drop-in of
  ``jaxlib.xla_client`` and stays allowed.
- No text cites the seed files the API was first described in (a number after "seed"):
  users have none. The code and the docs name the API itself (docs/api-map.md).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The project's top-level packages: imports of these are checked.
PROJECT = ("conformance", "runtime", "tests", "benchmarks")
#: (module, imported name, alias) that stay allowed: jax's ``xla_client as xc``.
ALLOWED_ALIASES = {("runtime", "xla_client", "xc")}
#: Where the text scan looks (reports/ holds signed evidence and is left alone).
TEXT_ROOTS = ("conformance", "runtime", "tests", "benchmarks", "docs", "README.md")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".j2", ".tmpl", ".sh", ".ini",
                 ".cfg", ".yml", ".yaml", ".html"}
#: A citation of a numbered seed file: "seed" or "seeds" (any case), a space or a hyphen,
#: then "00" and a digit.
CITATION = re.compile(r"\bseeds?[ -]00[0-9]", re.IGNORECASE)


def _project(module: str) -> bool:
    return module.split(".")[0] in PROJECT


def alias_violations(path: Path, source: str | None = None) -> list[str]:
    """``'path:line: import ... as NAME'`` for each import of a project module or name
    under a name other than its own (``import a.b as b`` keeps the module's own name)."""
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and _project(a.name) and a.asname != a.name.rsplit(".", 1)[-1]:
                    found.append((node.lineno, f"import {a.name} as {a.asname}"))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.level == 0 and not _project(module):
                continue
            for a in node.names:
                if a.asname and a.asname != a.name \
                        and (module, a.name, a.asname) not in ALLOWED_ALIASES:
                    found.append((node.lineno, f"from {module} import {a.name} as {a.asname}"))
    return [f"{path}:{line}: {what}" for line, what in sorted(found)]


def citation_violations(path: Path, text: str | None = None) -> list[str]:
    """``'path:line: <the citation>'`` for each seed-file citation in ``path``."""
    text = path.read_text(errors="replace") if text is None else text
    return [f"{path}:{n}: {m.group(0)!r} in {line.strip()[:120]!r}"
            for n, line in enumerate(text.splitlines(), 1) for m in CITATION.finditer(line)]


def _python_files() -> list[Path]:
    return sorted(p for top in PROJECT for p in (ROOT / top).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _text_files() -> list[Path]:
    files = []
    for name in TEXT_ROOTS:
        top = ROOT / name
        candidates = [top] if top.is_file() else top.rglob("*")
        files += [p for p in candidates if p.is_file() and p.suffix in TEXT_SUFFIXES
                  and "__pycache__" not in p.parts]
    return sorted(files)


def test_no_project_module_is_imported_under_another_name():
    files = _python_files()
    assert len(files) > 300 and ROOT / "conformance" / "cli.py" in files
    found = [v for p in files for v in alias_violations(p)]
    assert not found, ("import aliases of the project's own modules (use the module's name, "
                       "or rename the module to one that says what it is):\n"
                       + "\n".join(found))


def test_no_text_cites_a_seed_file():
    files = _text_files()
    assert ROOT / "README.md" in files and ROOT / "docs" / "api-map.md" in files
    found = [v for p in files for v in citation_violations(p)]
    assert not found, ("seed-file citations (name the API instead: docs/api-map.md):\n"
                       + "\n".join(found))


def test_the_alias_scan_reports_every_renaming_import(tmp_path):
    """The check of the check: renaming aliases are reported with their line; the
    module's own name, third-party aliases and ``xla_client as xc`` are not."""
    snippet = "\n".join([
        "import numpy as np",                                              # 1 third party
        "import jax.numpy as jnp",                                         # 2 third party
        "from runtime import xla_client as xc",                            # 3 allowed
        "import conformance.cli as cli",                                   # 4 own name
        "from conformance.helpers import dtype_helpers",                   # 5 no alias
        "from conformance.programs import compiled_programs as programs",  # 6
        "import conformance.session.api as seam",                          # 7
        "from runtime.xla_client import HostBufferSemantics as Sem",       # 8
        "from . import sibling as other",                                  # 9
        "def f():",
        "    from tests.mutants import stablehlo_rewrite as rw",           # 11
        "    from benchmarks import backend as b",                         # 12
        "from runtime import xla_bridge as xb",                            # 13
    ])
    found = alias_violations(tmp_path / "planted.py", snippet)
    assert [v.split(":")[1] for v in found] == ["6", "7", "8", "9", "11", "12", "13"], found
    assert found[0] == (f"{tmp_path / 'planted.py'}:6: from conformance.programs import "
                        "compiled_programs as programs")


def test_the_citation_scan_reports_every_seed_citation(tmp_path):
    """The check of the check: numbered seed citations are reported with their line;
    Hypothesis seeds and seeded arrays are not."""
    seed = "seed"   # split so that this file does not cite a seed itself
    text = "\n".join([
        f"the custom calls of {seed} 000",                 # 1
        f"({seed.title()}s 001/003 HostBufferSemantics)",  # 2
        f"has the {seed}-002 registry semantics",          # 3
        "--hypothesis-seed=1234, a random seed",           # 4 not a citation
        "hh.seeded_arrays(dt, shape); seed 6603 of the dev profile",  # 5 not one either
    ])
    found = citation_violations(tmp_path / "planted.md", text)
    assert [v.split(":")[1] for v in found] == ["1", "2", "3"], found
