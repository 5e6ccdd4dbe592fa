"""The time log of docs/ci.md: ``PJRT_CONFORMANCE_CHILD_TIMES`` names a file to which every
child of ``conformance.processes.runner`` and every ``python -m conformance.cli`` command
append one JSON line; without it nothing is written."""

import json

from conformance.processes import runner


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_child_and_cli_command_is_logged(tmp_path, monkeypatch):
    log = tmp_path / "times.jsonl"
    monkeypatch.setenv(runner.TIMES_LOG, str(log))
    done = runner.run_python("import sys; sys.exit(3)", ["x"], timeout=60)
    assert done.returncode == 3
    cli = runner.run_python(runner.Module("conformance.cli"), ["verify", "--help"],
                            timeout=120)
    assert cli.returncode == 0, cli.stderr
    first, cli_self, cli_child = _lines(log)
    assert first["argv"] == ["-c", "x"] and first["returncode"] == 3 and first["wall_s"] > 0
    assert "test_every_child_and_cli" in first["caller"]
    # the CLI child logs itself (its CPU seconds), then the runner logs the child
    assert cli_self["cli"] == ["verify"] and cli_self["cpu_s"] > 0
    assert cli_child["argv"] == ["conformance.cli", "verify", "--help"]


def test_nothing_is_logged_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(runner.TIMES_LOG, raising=False)
    monkeypatch.chdir(tmp_path)
    assert runner.run_python("pass", timeout=60).returncode == 0
    assert list(tmp_path.iterdir()) == []
