"""The run's options are parsed once into one typed object that the session receives
(issue 40 item 4): :class:`conformance.session.run_options.RunOptions`.

Before, ``pjrt-conformance run`` turned its parsed options back into
``--report-dir=...``/``--platform=...`` strings, every session module read them back
with ``config.getoption``, each pytest-xdist worker parsed and checked its command line
again, and the multi-host process read ``--report-dir=`` back out of a command line.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import types
from pathlib import Path

import pytest

from conformance.session import option_intake
from conformance.session import options
from conformance.session import run_options
from conformance.session import validate
from conformance.session.run_options import RunOptions
from tests import bundle_helpers
from tests.mutants.runner import pytester_run

ROOT = Path(__file__).resolve().parent.parent
SUITE_FLAGS = tuple(name for name, _ in options.SUITE_OPTIONS) + option_intake.EXTRA_OPTIONS


def test_the_options_are_one_frozen_typed_object_that_travels_as_json():
    opts = RunOptions.from_values({
        "platform": "cpu", "cpu_devices": "3", "declare": ["bf16,donation"],
        "known_failures": ["a.toml", "b.txt"], "report_dir": "/tmp/out", "waivers": "",
        "plugin_library": None, "reference_timeout": 5, "hypothesis_seed": 7,
        "not_an_option": 1})
    assert opts.cpu_devices == 3 and opts.reference_timeout == 5.0
    assert opts.declare == ("bf16,donation",)
    assert opts.known_failures == (Path("a.toml"), Path("b.txt"))
    assert opts.report_dir == Path("/tmp/out") and opts.waivers is None
    assert opts.hypothesis_seed == "7" and opts.profile == RunOptions().profile
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.platform = "cuda"   # type: ignore[misc]
    wire = json.loads(json.dumps(opts.to_wire()))   # what pytest-xdist carries
    assert RunOptions.from_wire(wire) == opts
    assert set(opts.saved()) == set(run_options.SAVED)
    assert RunOptions.from_values(opts.saved()).known_failures == opts.known_failures
    with pytest.raises(ValueError):
        RunOptions.from_values({"cpu_devices": "many"})


def test_a_child_process_gets_the_options_written_out():
    """A child pytest (multi-host, reference differential) is an argv boundary."""
    opts = RunOptions(cpu_devices=2, defects=("none", "x.toml"), report_dir=Path("/r"),
                      create_options={"a": 1}, progress="off", hypothesis_seed="3")
    args = opts.as_pytest_args()
    assert "--cpu-devices=2" in args and "--report-dir=/r" in args
    assert args.count("--defects=none") == 1 and "--defects=x.toml" in args
    assert not any(a.startswith(("--create-options", "--progress", "--hypothesis"))
                   for a in args)


def test_only_the_builder_reads_the_options_from_pytest():
    """No session module reads an option back with ``config.getoption``: they all take
    :func:`run_options.run_options`; nothing under conformance/ reads ``--report-dir=``
    back out of a command line."""
    readers, parsers = [], []
    for path in sorted((ROOT / "conformance").rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "getoption":
                readers.append(where)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "startswith" and node.args and \
                    isinstance(node.args[0], ast.Constant) and \
                    str(node.args[0].value).startswith("--report-dir"):
                parsers.append(where)
    assert sorted(set(readers)) == ["conformance/session/option_intake.py"]
    assert parsers == []


def test_the_cli_hands_over_one_object_and_no_option_strings(tmp_path, monkeypatch,
                                                              capsys):
    """``pjrt-conformance run`` gives pytest its own arguments only and the suite's
    options as a :class:`run_options.Handover`; the workers get the object (the client
    they open has the 3 devices asked for, which their command line does not say)."""
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    calls = []
    real = pytest.main

    def spy(args, plugins=()):
        calls.append((list(args), list(plugins)))
        return real(args, plugins=plugins)
    monkeypatch.setattr(pytest, "main", spy)
    out = tmp_path / "out"
    proc = bundle_helpers.main(capsys, "run", "--platform", "cpu", "--cpu-devices", "3",
                    "--profile", "none", "--declare", "bf16", "--output", out, "-n", "1",
                    "--", "-k", "test_transfer and float32 and round_trip_bit")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    (args, plugins), = calls
    given = [a.split("=", 1)[0] for a in args]
    assert [f for f in SUITE_FLAGS if f in given] == [], args
    assert not any(str(out) in a for a in args), args
    handed = [p.options for p in plugins if isinstance(p, run_options.Handover)]
    assert len(handed) == 1
    assert handed[0].report_dir == out and handed[0].cpu_devices == 3
    assert handed[0].declare == ("bf16",) and handed[0].reference_differential == "auto"
    doc = json.loads((out / "report.json").read_text())
    assert doc["platform"]["local_device_count"] == 3
    assert doc["declared_capabilities"] == ["bf16"]
    assert doc["summary"]["by_status"]["pass"] > 0


CONFTEST = """
import dataclasses, json, os
import pytest
from conformance.session import option_intake, run_options

LOG = {log!r}
_real = option_intake.build


def _note(**facts):
    with open(LOG, "a") as f:
        f.write(json.dumps({{"pid": os.getpid(), **facts}}) + "\\n")


def build(config):
    _note(event="build")
    return dataclasses.replace(_real(config), num_processes=3)


option_intake.build = build


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    opts = run_options.run_options(config)
    _note(event="configured", worker=hasattr(config, "workerinput"),
          num_processes=opts.num_processes, cpu_devices=opts.cpu_devices,
          in_argv=config.getoption("num_processes"))
"""


def test_built_once_and_each_worker_takes_the_controllers_object(pytester):
    """Under plain ``pytest -n 2`` the builder runs once, in the controller; each worker
    rebuilds the controller's object from ``workerinput`` (here the builder changed
    ``--num-processes`` to 3: the workers see 3 where their command line says 2)."""
    log = pytester.path / "events.jsonl"
    pytester.makeconftest(CONFTEST.format(log=str(log)))
    pytester.makepyfile(test_it="def test_sees_the_controllers_options(num_processes):\n"
                                "    assert num_processes == 3\n")
    result = pytester_run(pytester, "--platform=cpu", "--cpu-devices=2",
                          "--num-processes=2", "--profile=none", "--defects=none",
                          "-p", "no:cacheprovider", "-n", "2", "test_it.py")
    assert result.ret == 0, result.stdout.str()[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    builds = [e for e in events if e["event"] == "build"]
    controller = [e for e in events if e["event"] == "configured" and not e["worker"]]
    workers = [e for e in events if e["event"] == "configured" and e["worker"]]
    assert len(builds) == 1 and len(controller) == 1 and len(workers) == 2, events
    assert builds[0]["pid"] == controller[0]["pid"]
    assert all(w["num_processes"] == 3 and w["in_argv"] == 2 and w["cpu_devices"] == 2
               for w in workers), workers


def test_a_suite_option_beside_a_handed_object_is_refused():
    """After ``--`` of ``pjrt-conformance run`` a suite option would be ignored: it is
    a usage error naming the option instead."""
    config = types.SimpleNamespace(
        pluginmanager=types.SimpleNamespace(
            get_plugins=lambda: [run_options.Handover(RunOptions())]),
        invocation_params=types.SimpleNamespace(args=("-k", "x", "--cpu-devices=2")),
        getoption=lambda name, default=None: {"progress": "off"}.get(name, default))
    with pytest.raises(validate.OptionError, match=r"^--cpu-devices: .*before '--'"):
        option_intake.received(config)
    config.invocation_params.args = ("-k", "x", "--progress=off")   # pytest's own: read
    assert option_intake.received(config).progress == "off"


@pytest.mark.parametrize("bad, message", [
    (("--cpu-devices", "0"), "--cpu-devices"),
    (("--num-processes", "x"), "--num-processes"),
    (("--float-controls", "float32=flush"), "--float-controls"),
    (("--plugin-options", "{}"), "--plugin-options"),
])
def test_bad_values_are_one_line_usage_errors_of_the_cli(tmp_path, capsys, bad, message):
    out = tmp_path / "out"
    proc = bundle_helpers.main(capsys, "run", "--platform", "cpu", *bad, "--output", out,
                    "--", "-k", "test_registry")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines and message in lines[-1] and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists()


def test_a_bad_value_is_one_usage_error_of_pytest(pytester):
    result = pytester_run(pytester, "--platform=cpu", "--float-controls=float32=flush",
                          "-p", "no:cacheprovider", "-n", "0")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text, text
    assert "ERROR: --float-controls" in text, text
