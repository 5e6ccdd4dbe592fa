"""Probe defects of issue 27 item 8 that are usage errors: each is one line naming the
option (or file), exit 2, never a traceback or INTERNALERROR, and nothing left behind."""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli_multihost
from conformance.processes import runner
from conformance.session import option_files
from conformance.session import validate
from runtime import _plugin_library
from tests.mutants.runner import PYTEST

JUNK = b"\xff\xfe\x00\x81binary junk\x00"


def _cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                          capture_output=True, timeout=300)
    return proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", "backslashreplace")


def _one_line_usage_error(rc, text, *wanted):
    assert rc == 2, text[-3000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    for w in wanted:
        assert w in text, text[-3000:]


@pytest.mark.parametrize("dest", option_files.FILE_OPTIONS)
def test_binary_junk_in_an_option_file_names_the_option_and_the_file(tmp_path, dest):
    junk = tmp_path / ("junk.toml" if dest == "defects" else "junk.json")
    junk.write_bytes(JUNK)
    values = {d: None for d in option_files.FILE_OPTIONS}
    values[dest] = [str(junk)] if dest in ("defects", "known_failures") else str(junk)
    option = "--" + dest.replace("_", "-")
    with pytest.raises(validate.OptionError, match=f"^{option}=.*junk.*not a UTF-8 text file"):
        option_files.check(values.get)
    if dest == "defects":   # a directory of catalogs: each .toml in it is read
        values[dest] = [str(tmp_path)]
        with pytest.raises(validate.OptionError, match="--defects=.*junk.toml"):
            option_files.check(values.get)
    junk.write_text("{}\n", encoding="utf-8")   # UTF-8 text passes this check
    option_files.check(values.get)


def test_names_and_inline_json_are_not_read_as_files():
    values = {d: None for d in option_files.FILE_OPTIONS}
    values.update(profile="v8", defects=["shipped"], plugin_options='{"a": 1}')
    option_files.check(values.get)


@pytest.mark.parametrize("how", ["--waivers", "@FILE"])
def test_run_with_a_junk_option_file_is_a_usage_error(tmp_path, how):
    junk = tmp_path / "junk.txt"
    junk.write_bytes(JUNK)
    out = tmp_path / "out"
    args = ["run", "--platform", "cpu", "--output", str(out)]
    args += [how, str(junk), "--"] if how == "--waivers" else ["--", f"@{junk}"]
    rc, text = _cli(*args)
    _one_line_usage_error(rc, text, f"{how}={junk}: not a UTF-8 text file")
    assert not out.exists()


def test_output_file_is_checked_before_anything_is_written(tmp_path):
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(validate.OptionError, match="--write=.*: is a directory"):
        validate.output_file(tmp_path, option="--write")
    with pytest.raises(validate.OptionError, match="--output=.*: cannot write there"):
        validate.output_file(tmp_path / "a_file" / "x.json", option="--output")
    target = tmp_path / "new.json"
    validate.output_file(target, option="--output")
    assert not target.exists()          # an absent file stays absent


def _results_log(path: Path) -> Path:
    path.write_text(
        '{"$report_type": "TestReport", "nodeid": "conformance/test_x.py::a", "location": '
        '["t.py", 0, "a"], "keywords": {}, "outcome": "passed", "longrepr": null, "when": '
        '"call", "user_properties": [], "sections": [], "duration": 0.5}\n')
    return path


@pytest.mark.parametrize("where", ["directory", "under_a_file"])
def test_durations_and_profile_write_to_an_unwritable_path_are_one_line(tmp_path, where):
    (tmp_path / "a_file").write_text("x")
    target = tmp_path if where == "directory" else tmp_path / "a_file" / "d.json"
    log = _results_log(tmp_path / "results.jsonl")
    rc, text = _cli("durations", str(log), "--output", str(target))
    _one_line_usage_error(rc, text, f"--output={target}")
    rc, text = _cli("profile", "--write", str(target))
    _one_line_usage_error(rc, text, f"--write={target}")
    written = tmp_path / "ok.json"     # the same log to a writable path is written
    assert _cli("durations", str(log), "--output", str(written))[0] == 0 and written.exists()


def test_a_non_utf8_output_path_is_a_usage_error(tmp_path):
    bad = Path(os.fsdecode(os.fsencode(tmp_path) + b"/out\xff"))
    with pytest.raises(validate.OptionError, match=r"--output=.*out\\xff: the path is not UTF-8"):
        validate.output_dir(bad)
    assert not os.path.exists(bad)
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--platform", "cpu",
                           "--output", os.fsencode(bad), "--", "-k", "test_registry"],
                          capture_output=True, timeout=300)
    text = (proc.stdout + proc.stderr).decode("utf-8", "backslashreplace")
    _one_line_usage_error(proc.returncode, text, "the path is not UTF-8")
    assert not os.path.exists(bad)


def test_a_plugin_built_for_another_architecture_says_so(tmp_path):
    own = _plugin_library.elf_target(os.path.realpath(sys.executable))
    if own is None:
        pytest.skip("this Python is not an ELF executable")
    other = 183 if own[0] != 183 else 62          # AArch64, or x86-64 on an AArch64 host
    data = bytearray(Path(os.path.realpath(sys.executable)).read_bytes()[:4096])
    data[18:20] = other.to_bytes(2, "little" if own[2] == 1 else "big")
    lib = tmp_path / "libpjrt_other.so"
    lib.write_bytes(bytes(data))
    with pytest.raises(_plugin_library.PluginLoadError,
                       match=f"another architecture \\({_plugin_library.ELF_MACHINES[other]}"):
        _plugin_library.probe("other", lib)
    not_elf = tmp_path / "not_elf.so"
    not_elf.write_bytes(JUNK * 4)
    assert _plugin_library.elf_target(not_elf) is None
    _plugin_library.check_architecture("x", str(not_elf))   # left to the dlopen probe
    shutil.copy(os.path.realpath(sys.executable), tmp_path / "same")
    _plugin_library.check_architecture("x", str(tmp_path / "same"))


def test_process_id_zero_alone_is_multihost_and_a_usage_error(tmp_path):
    ns = argparse.Namespace(multihost=False, coordinator_address=None, process_id=0,
                            process_count=None)
    assert cli_multihost.wanted(ns)     # 0 == False made it single-host
    assert not cli_multihost.wanted(argparse.Namespace(
        multihost=False, coordinator_address=None, process_id=None, process_count=None))
    out = tmp_path / "out"
    rc, text = _cli("run", "--platform", "cpu", "--process-id", "0", "--output", str(out),
                    "--", "-k", "test_registry")
    _one_line_usage_error(rc, text, "--process-id and --process-count: both are needed")
    assert not out.exists()


def test_a_foreign_conftest_defining_platform_is_one_usage_error(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--platform', default='linux', help='their own option')\n")
    (tmp_path / "test_theirs.py").write_text(
        "def test_theirs(request):\n    assert request.config.getoption('platform')\n")
    base = ["-p", "no:cacheprovider", "-q", "-n", "0"]
    proc = runner.run_python(PYTEST, base, cwd=tmp_path, timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 4 and "Traceback" not in text, text[-3000:]
    assert "option --platform is defined twice" in text and \
        "-p no:pjrt_conformance" in text, text[-3000:]
    proc = runner.run_python(PYTEST, base + ["-p", "no:pjrt_conformance"], cwd=tmp_path,
                             timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]    # the workaround the message names


def test_only_clashes_with_the_suites_own_options_are_explained():
    from conformance.session import option_clash

    assert option_clash.explain(ValueError("option names {'--platform'} already added"))
    assert option_clash.explain(ValueError(
        "option dest 'cpu_devices' already used by ['--cpu-devices']")).startswith(
        "option --cpu-devices is defined twice")
    assert option_clash.explain(ValueError("option dest 'theirs' already used")) is None
    assert option_clash.explain(ValueError("something else")) is None
