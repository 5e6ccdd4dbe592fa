"""Up-front validation (``conformance.session.validate``): every bad option of the probes
in issue 19 is a one-line exit-2 error naming the option, before any test runs."""

import datetime

import pytest

from conformance import cli
from conformance.certification.catalog import waivers
from conformance.session import validate
from tests.mutants.runner import pytester_run

_LIB = "libpjrt_cpu.so"  # XLA's CPU plugin by file name: its create options are known


def _cpu_plugin(options):
    """Arguments of XLA's CPU plugin with create options ``options`` (JSON text)."""
    return ["--plugin-library", f"/x/{_LIB}", "--plugin-options", options]


def _run(capsys, *args):
    rc = cli.main(["run", *args])
    err = capsys.readouterr().err.strip()
    return rc, err


@pytest.mark.parametrize("args,fragment", [
    (["-n", "-1"], "-n/--workers=-1: accepted: an int from 0 to "),
    (["-n", "two"], "-n/--workers=two"),
    (["--timeout", "-5"], "--timeout=-5.0: accepted: a number of seconds > 0"),
    (["--timeout", "0"], "--timeout=0.0"),
    (["--timeout", "nan"], "--timeout=nan"),
    (["--cpu-devices", "100000"], "--cpu-devices=100000: accepted: an int from 1 to 1024"),
    (["--cpu-devices", "0"], "--cpu-devices=0"),
    (["--num-processes", "0"], "--num-processes=0: accepted: an int from 1 to 64"),
    (["--plugin-options", '{"cpu_device_count": 2}'], "given without --plugin-library"),
    (_cpu_plugin('{"cpu_device_count": "eight"}'),
     "cpu_device_count='eight'; accepted: an int from 1 to 1024"),
    (_cpu_plugin('{"cpu_device_count": 1.5}'),
     "cpu_device_count=1.5; accepted"),
    (_cpu_plugin('{"cpu_device_count": [8]}'),
     "cpu_device_count=[8]; accepted"),
    (_cpu_plugin('{"cpu_device_count": -1}'),
     "cpu_device_count=-1; accepted"),
    (_cpu_plugin('{"cpu_device_count": true}'),
     "cpu_device_count=True; accepted"),
    (_cpu_plugin('{"cpu_devices": 2}'),
     "unknown create option 'cpu_devices' of libpjrt_cpu.so; accepted: cpu_device_count"),
    (["--plugin-library", "/x/libother.so", "--plugin-options", '{"a": {"b": 1}}'],
     "a={'b': 1} is not a string, a bool, an int, a float or a list of ints"),
    (["--plugin-library", "/x/libother.so", "--plugin-options", "[8]"],
     "--plugin-options: expected a JSON object, got list"),
])
def test_bad_run_options_are_one_line_usage_errors(capsys, tmp_path, args, fragment):
    rc, err = _run(capsys, "--output", str(tmp_path / "out"), *args)
    assert rc == 2 and fragment in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_output_that_is_a_file_or_not_empty_is_refused(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    rc, err = _run(capsys, "--output", str(tmp_path / "f"))
    assert rc == 2 and "--output=" in err and "is a file" in err
    old = tmp_path / "old"
    old.mkdir()
    (old / "report.json").write_text("{}")
    rc, err = _run(capsys, "--output", str(old))
    assert rc == 2 and "not empty (report.json)" in err and "--force" in err
    (old / "notes.txt").write_text("mine")
    with pytest.raises(validate.OptionError, match="not empty"):
        validate.output_dir(old, force=True)  # a foreign file is never removed
    assert (old / "notes.txt").exists() and (old / "report.json").exists()


def test_force_replaces_only_an_earlier_bundle(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    for name in ("report.json", "MANIFEST.sha256", "results.jsonl", "results.jsonl.xz"):
        (old / name).write_text("{}")
    assert validate.output_dir(old, force=True) == old
    assert not any(old.iterdir())


def test_unwritable_output_and_full_disk(tmp_path):
    with pytest.raises(validate.OptionError, match=r"--output=/proc/pjrt-out: cannot write"):
        validate.output_dir("/proc/pjrt-out")
    with pytest.raises(validate.OptionError, match=r"MiB free; a report needs at least"):
        validate.output_dir(tmp_path / "o", min_free_bytes=2**62)


def test_good_values_pass(tmp_path):
    validate.numbers(cpu_devices=1024, num_processes=2, timeout=0.5, workers_value="auto")
    validate.numbers(cpu_devices=1, num_processes=1, timeout=600, workers_value="0")
    validate.plugin_options({"cpu_device_count": 8}, f"/x/{_LIB}")
    validate.plugin_options({"any": [1, 2], "flag": True, "s": "x", "f": 0.5}, "/x/lib.so")
    validate.plugin_options(None, None)
    assert validate.output_dir(tmp_path / "new" / "dir").is_dir()


@pytest.mark.parametrize("text,fragment", [
    ('[[waivers]]\ntest = "a"\n', "unknown key 'waivers'; accepted: [[waiver]] tables"),
    ('[[waiver]]\ntest = "a"\nissue = "https://x/1"\nexpires = 2099-01-01\nreson = "x"\n',
     "waiver #1: unknown key 'reson'; accepted: test, issue, expires, reason"),
])
def test_waiver_file_unknown_keys_are_errors(tmp_path, text, fragment):
    f = tmp_path / "w.toml"
    f.write_text(text)
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        waivers.parse(f)


def test_cli_checks_certification_files_first(capsys, tmp_path):
    f = tmp_path / "w.toml"
    f.write_text('[[waivers]]\ntest = "a"\n')
    rc, err = _run(capsys, "--output", str(tmp_path / "o"), "--waivers", str(f))
    assert rc == 2 and "unknown key 'waivers'" in err and len(err.splitlines()) == 1, err
    rc, err = _run(capsys, "--output", str(tmp_path / "o"), "--known-failures",
                   str(tmp_path / "missing.txt"))
    assert rc == 2 and err.startswith("pjrt-conformance: --known-failures=") and \
        "No such file" in err, err
    rc, err = _run(capsys, "--output", str(tmp_path / "o"), "--profile", "v999")
    assert rc == 2 and "v999" in err and len(err.splitlines()) == 1, err


def test_good_waiver_file_parses(tmp_path):
    f = tmp_path / "w.toml"
    f.write_text('[[waiver]]\ntest = "a"\nissue = "https://x/1"\nexpires = 2099-01-01\n'
                 'reason = "r"\n')
    assert waivers.parse(f)[0].expires == datetime.date(2099, 1, 1)


def test_pytest_plugin_reports_bad_options_as_usage_error(pytester):
    """The plugin front end: the same checks, as pytest.UsageError (exit 4), no traceback,
    before any backend is created."""
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester_run(
        pytester, "--platform=cpu", "--plugin-library=/x/libpjrt_cpu.so", "-p", "no:cacheprovider",
        '--plugin-options={"cpu_device_count": "eight"}')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "cpu_device_count='eight'; accepted: an int from 1 to 1024" in err
    assert "Traceback" not in err
    out = pytester.path / "o"
    (out).mkdir()
    (out / "x").write_text("x")
    result = pytester_run(pytester, "--platform=cpu", f"--report-dir={out}",
                          "-p", "no:cacheprovider", "--cpu-devices=100000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--cpu-devices=100000: accepted: an int from 1 to 1024" in result.stderr.str()


def test_an_empty_plugin_library_says_the_command_substitution_printed_nothing():
    from conformance.session import validate
    with pytest.raises(validate.OptionError, match="^--plugin-library: the path is empty"):
        validate.parsed_plugin_options(None, "")
    assert validate.parsed_plugin_options(None, None) is None
