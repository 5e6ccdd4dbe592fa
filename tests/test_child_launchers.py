"""One child launcher (issue 40 item 3): every Python child of the suite and of the
self-tests starts through :mod:`conformance.processes.runner`.

The scan reads every ``.py`` file of ``conformance/`` and ``tests/`` (the syntax tree, not
the text) for the calls that start a process outside the runner: ``subprocess.run``,
``Popen``, ``call``, ``check_call``, ``check_output``, pytester's
``runpytest_subprocess``, and ``os.system``/``os.popen``/``os.spawn*``/``os.exec*``. Each
call is one of:

- a tool that is not Python (its command starts with a name in :data:`TOOLS`: git,
  ssh-keygen, mpirun...): allowed, with the reason given there; a command that starts
  with ``sys.executable`` or a name beginning ``python`` is Python;
- ``python -m conformance.cli ...``: the command a user types, tested as the user runs
  it (:data:`CLI`); allowed;
- ``python -m pytest``, pytester's ``runpytest_subprocess``, other Python (``-c``, a
  script), or a command the scan cannot read (a variable): each must be listed in
  :data:`BYPASSES` by file and kind, with the number of calls and why the runner does
  not serve it. A new launcher fails here until it goes through the runner
  (:func:`tests.mutants.runner.run_child` or :func:`~tests.mutants.runner.pytester_run`
  for a child pytest of the suite, :func:`conformance.processes.runner.run_python`
  otherwise) or is listed with a reason; a listed file that no longer has the call fails
  too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The folders scanned.
SCANNED = ("conformance", "tests")
#: The runner itself: its ``Popen`` is the one launcher.
RUNNER = "conformance/processes/runner.py"
_SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output"}
_OS = ("system", "popen", "spawn", "exec", "posix_spawn")

#: The first element of a command (as written in the source) that names a program other
#: than this Python, and why it is started directly.
TOOLS = {
    "git": "git reads the repository (provenance, docs, the dashboard's commit axis)",
    "*git": "git builds a scratch repository for a script's test",
    "ssh-keygen": "OpenSSH signs and checks bundles (docs/provenance.md)",
    "bash": "the benchmark scripts (benchmarks/*.sh) and a `ulimit` wrapper are shell",
    "CHROMIUM": "headless Chromium renders the HTML report and the dashboard",
    "mpirun": "Open MPI starts the multi-host processes as a cluster's launcher does",
    "CC": "the C compiler builds a stub plugin library",
    "asv": "airspeed velocity checks the benchmark suite",
    "*pip": "pip builds and installs the project's wheel",
    "exe": "the installed `pjrt-conformance` script, as the README's command runs it",
}
#: Why ``python -m conformance.cli`` is started directly.
CLI = ("the user's command, tested as a user runs it (exit status, files, signals); the "
       "run starts its own children through the runner")

#: (file, kind) -> (calls, why the runner does not start them). Kinds: ``pytest`` (a
#: child pytest), ``python`` (``python -c``, a script), ``unknown`` (a command in a
#: variable).
BYPASSES = {
    ("conformance/certification/bundle/signing.py", "unknown"):
        (1, "ssh-keygen (the command is built in a variable)"),
    ("conformance/certification/catalog/catalog_bisect.py", "python"):
        (2, "another release's Python in its own environment (the runner starts this "
            "interpreter)"),
    ("conformance/programs/ffi_build.py", "unknown"):
        (1, "the C compiler (the command is built in a variable)"),
    ("tests/test_cancel_signal_handling.py", "python"):
        (1, "a bare interpreter whose own signal handling is under test"),
    ("tests/test_capi.py", "python"):
        (1, "a standalone reproduction under `python -I` without this project on the "
            "path (the runner puts it there)"),
    ("tests/test_layers.py", "python"):
        (1, "import-linter's command over a copy of the tree, that copy on the path"),
    ("tests/test_partitioned_records.py", "python"):
        (2, "a standalone reproduction under `python -I` without this project; jax's "
            "own sharding in a bare interpreter"),
    ("tests/test_plugin_loading.py", "python"):
        (1, "a bare interpreter with only a fake plugin package on the path"),
    ("tests/test_probe_outputs.py", "python"):
        (1, "a lock holder that stays alive while the test acts (the runner waits for "
            "its children to end)"),
    ("tests/test_probe_replay.py", "python"):
        (1, "a lock holder that stays alive while the test acts"),
    ("tests/test_probe_runtime.py", "python"):
        (2, "bare interpreters driving runtime/ into crashes and signals, watched live"),
    ("tests/test_probe_signals.py", "python"):
        (2, "a run signalled while it runs (Popen); a finalize under a memory limit "
            "(preexec_fn: the runner sets no limits)"),
    ("tests/test_probe_inputs.py", "unknown"):
        (1, "commands under an address-space limit (preexec_fn: the runner sets no "
            "limits)"),
    ("tests/test_pytest_outcome.py", "python"):
        (3, "the CI script .ci/pytest_outcome.py, run as CI runs it"),
    ("tests/test_repro_capi.py", "python"):
        (2, "standalone reproductions, run as a user runs them (`python -I`)"),
    ("tests/test_sequences_selftest.py", "python"):
        (2, "a failing sequence's standalone script, run as its reader runs it "
            "(`python repro.py`, the project's runtime package on the path)"),
    ("tests/test_repro_portability.py", "python"):
        (1, "a standalone reproduction with an empty environment"),
    ("tests/test_upstream_repros.py", "python"):
        (1, "the upstream reproduction scripts, run as their readers run them"),
    ("tests/test_run_survival.py", "pytest"):
        (3, "runs killed or signalled while they run (Popen); the runner waits for "
            "its children to end"),
    ("tests/test_multihost.py", "unknown"):
        (1, "the processes of one multi-host run, one killed by a fault, watched while "
            "they run (Popen)"),
}


def _kind(call: ast.Call) -> str:
    """``'tool:NAME'``, ``'cli'``, ``'pytest'``, ``'python'`` or ``'unknown'`` for a call
    that starts a process."""
    if getattr(call.func, "attr", None) == "runpytest_subprocess":
        return "pytest"
    command = call.args[0] if call.args else None
    if not isinstance(command, (ast.List, ast.Tuple)) or not command.elts:
        return "unknown"
    first, *rest = command.elts
    program = first.value if isinstance(first, ast.Constant) else ast.unparse(first)
    if not _python(program):
        return f"tool:{program}"
    words = [e.value for e in rest[:2] if isinstance(e, ast.Constant)]
    if words == ["-m", "pytest"]:
        return "pytest"
    if words == ["-m", "conformance.cli"]:
        return "cli"
    return "python"


def _python(program: str) -> bool:
    """Whether a command's first element (its source text) names a Python interpreter:
    ``sys.executable``, or a name such as ``python``, ``env.python``, ``python3``."""
    name = program.rsplit(".", 1)[-1]
    return program == "sys.executable" or name.startswith("python")


def _starts_a_process(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "runpytest_subprocess":
        return True
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    return (owner == "subprocess" and func.attr in _SUBPROCESS) or \
        (owner == "os" and func.attr.startswith(_OS))


def launches(source: str) -> list[tuple[int, str]]:
    """(line, kind) of every call in ``source`` that starts a process (see the module
    docstring); kind as :func:`_kind` gives it."""
    return [(node.lineno, _kind(node)) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and _starts_a_process(node)]


def bypasses(files: dict[str, str]) -> tuple[Counter, list[str]]:
    """For ``files`` (path relative to the root -> source): the count of each
    (file, kind) that must be listed in :data:`BYPASSES`, and the tools no entry of
    :data:`TOOLS` names (``'path:line: NAME'``)."""
    counted: Counter = Counter()
    unknown_tools = []
    for path, source in sorted(files.items()):
        if path == RUNNER:
            continue
        for line, kind in launches(source):
            if kind == "cli":
                continue
            if kind.startswith("tool:"):
                if kind[5:] not in TOOLS:
                    unknown_tools.append(f"{path}:{line}: {kind[5:]}")
                continue
            counted[(path, kind)] += 1
    return counted, unknown_tools


def _tree() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
            for folder in SCANNED for p in (ROOT / folder).rglob("*.py")}


def test_every_child_outside_the_runner_is_listed_with_a_reason():
    counted, unknown_tools = bypasses(_tree())
    assert not unknown_tools, ("commands of programs TOOLS does not name (start Python "
                               f"through conformance.processes.runner): {unknown_tools}")
    listed = {key: calls for key, (calls, _) in BYPASSES.items()}
    new = {k: n for k, n in counted.items() if listed.get(k) != n}
    gone = {k: n for k, n in listed.items() if counted.get(k) != n}
    assert not new and not gone, (
        f"children started outside conformance.processes.runner, (file, kind): calls "
        f"found {new}, listed {gone}; start a child pytest of the suite with "
        "tests.mutants.runner.run_child or pytester_run, other Python with "
        "runner.run_python, or list it in BYPASSES with the reason")
    assert all(why.strip() for _, why in BYPASSES.values())


def test_the_scan_finds_a_new_launcher_of_each_kind():
    planted = {
        "tests/test_new.py": (
            "import os, subprocess, sys\n"
            "def test_a(pytester):\n"
            "    pytester.runpytest_subprocess('-k', 'x')\n"
            "    subprocess.run([sys.executable, '-m', 'pytest', '-q'])\n"
            "    subprocess.Popen([sys.executable, '-c', 'pass'])\n"
            "    subprocess.check_output(argv)\n"
            "    os.system('python -m pytest')\n"
            "    subprocess.run(['git', 'status'])\n"
            "    subprocess.run([sys.executable, '-m', 'conformance.cli', 'run'])\n"
            "    subprocess.run(['node', 'x.js'])\n"
            "    subprocess.run([env.python, '-I', 'probe.py'])\n"),
        RUNNER: "import subprocess\nsubprocess.Popen(argv)\n",
    }
    counted, unknown_tools = bypasses(planted)
    assert counted == {("tests/test_new.py", "pytest"): 2, ("tests/test_new.py", "python"): 2,
                       ("tests/test_new.py", "unknown"): 2}
    assert unknown_tools == ["tests/test_new.py:10: node"]


def test_the_self_tests_pytest_children_go_through_the_runner():
    """The three launchers of child conformance runs (the ``run_suite`` fixture, the
    shared ``suite_runs``, the mutant runner) and pytester's children start through
    :func:`tests.mutants.runner.run_child`, which calls the runner."""
    from conformance.processes import runner
    from tests.mutants.runner import PYTEST

    tree = _tree()
    for path in ("tests/conftest.py", "tests/suite_runs.py", "tests/mutants/runner.py"):
        assert not [k for _, k in launches(tree[path])], path
    body = ast.unparse(ast.parse(tree["tests/mutants/runner.py"]))
    assert "runner.run_python(PYTEST" in body
    assert PYTEST == runner.Module("pytest")
