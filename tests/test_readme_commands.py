"""The README's two commands are what CI runs, and command 1 works from any directory.

``.ci/run`` runs the commands that ``.ci/readme_commands.py`` reads out of the README;
these tests check that reader, that ``.ci/run`` runs its output verbatim, and the
failure the README's command 1 had from a clone's root (``ImportPathMismatchError``:
the working directory's ``conformance/conftest.py`` against the installed package).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
readme_commands = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_commands)


def test_readme_has_the_two_commands():
    cmds = readme_commands.commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "pip install . " in cmds[1] and "pjrt-conformance run --platform cpu" in cmds[1]
    assert "pip install -e '.[test]'" in cmds[2] and cmds[2].endswith("pytest -n auto tests")
    for n in (1, 2):
        assert cmds[n].startswith("python3 -m venv .venv && . .venv/bin/activate && ")


def test_ci_runs_the_readme_commands_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'cmd1="$(python3 .ci/readme_commands.py 1)"' in ci
    assert 'cmd2="$(python3 .ci/readme_commands.py 2)"' in ci
    assert 'bash -c "$cmd1"' in ci and 'bash -c "$cmd2"' in ci
    assert ci.index('bash -c "$cmd1"') < ci.index("pjrt-conformance verify") < ci.index('bash -c "$cmd2"')
    # plain pytest's rule on command 1's run, which command 2 no longer runs again
    assert ci.index("pjrt-conformance verify") < ci.index('.ci/pytest_outcome.py "$bundle"') \
        < ci.index('bash -c "$cmd2"')
    assert ci.count("rm -rf .venv") >= 2  # each command gets a fresh venv


@pytest.mark.parametrize("text, missing", [
    ("no block here", "no fenced"),
    ("```bash\n# 1. run\ncmd one\n```\n", "numbered 2"),
    ("```bash\n# 1. run\n# 2. test\npytest\n```\n", "not followed by a command"),
    ("```bash\n# 1. a\nx\n# 1. b\ny\n# 2. c\nz\n```\n", "numbered twice"),
])
def test_reader_rejects_a_broken_readme(text, missing):
    with pytest.raises(ValueError, match=missing):
        readme_commands.commands(text)


def test_reader_command_line_usage(capsys):
    assert readme_commands.main(["3"]) == 2
    assert "usage" in capsys.readouterr().err
    assert readme_commands.main(["1"]) == 0
    assert "pjrt-conformance run" in capsys.readouterr().out


def test_command_one_runs_from_a_directory_holding_another_conformance_tree(tmp_path):
    """The clone-root case: the working directory has its own ``conformance/conftest.py``
    and a ``pyproject.toml`` with pytest settings; the run must use the installed suite."""
    exe = shutil.which("pjrt-conformance", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("no pjrt-conformance script beside this Python (install the project)")
    (tmp_path / "conformance").mkdir()
    shutil.copy(ROOT / "conformance" / "conftest.py", tmp_path / "conformance" / "conftest.py")
    (tmp_path / "conformance" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "-p no_such_plugin"\ntestpaths = ["nowhere"]\n')
    out = tmp_path / "bundle"
    proc = subprocess.run(
        [exe, "run", "--platform", "cpu", "--cpu-devices", "2", "-n", "0", "--profile", "none",
         "--output", str(out), "--", "-k", "test_registry"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ImportPathMismatchError" not in proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["summary"]["collected"] > 0
    assert all(r["nodeid"].startswith("conformance/test_") for r in doc["results"])
    verify = subprocess.run([exe, "verify", str(out)], capture_output=True, text=True, timeout=120)
    assert verify.returncode in (0, 1), verify.stdout + verify.stderr
