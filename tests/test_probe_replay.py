"""Replay of the third probe round (issue 40): 16 root causes, tried as a careless or
hostile user would. Each case states what the probe did and checks the promise the
README makes: one line and the documented exit status, never a traceback, a hang, a
write through a link or outside ``--output``, and ``verify`` never calls a bundle that
lost results intact. Cases that need a real run of the suite select a few tests."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conformance import cli, option_error, path_limits
from conformance.session import option_files

LONG = "x" * 300   # a file name over NAME_MAX (255 bytes): ENAMETOOLONG from any file call


def _clean_usage_error(rc: int, text: str, *wanted: str) -> None:
    assert rc == 2, text[-3000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    for w in wanted:
        assert w in text, text[-3000:]


def _cli(*args: str, cwd=None, timeout: float = 300) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                          capture_output=True, timeout=timeout)
    return proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", "backslashreplace")


# -- case 5: paths over 255 characters -------------------------------------------------

def _main(args: list[str], capsys) -> tuple[int, str]:
    """``pjrt-conformance ARGS`` in this process: (exit status, stderr); argparse's usage
    errors (a SystemExit) included."""
    try:
        rc = cli.main(args)
    except SystemExit as exit_info:
        rc = exit_info.code
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("option", ["--waivers", "--declare-file", "--known-failures",
                                    "--defects", "--profile", "--shard-durations",
                                    "--sign-key", "--plugin-library", "--output"])
def test_run_with_a_path_too_long_is_one_usage_line(tmp_path, monkeypatch, capsys, option):
    monkeypatch.chdir(tmp_path)
    extra = ["--shard", "1/2"] if option == "--shard-durations" else []
    rc, err = _main(["run", "--output", "out", option, LONG, *extra], capsys)
    _clean_usage_error(rc, err, "give a shorter path")
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refused run left files"


@pytest.mark.parametrize("command", [["verify", LONG], ["diff", LONG, LONG],
                                     ["sign", LONG, "--key", LONG], ["rerender", LONG],
                                     ["merge", LONG, LONG, "--output", "o"],
                                     ["durations", LONG], ["scoreboard", LONG],
                                     ["finalize", LONG]])
def test_bundle_commands_with_a_path_too_long_are_usage_errors(tmp_path, monkeypatch,
                                                               capsys, command):
    """verify's 1 means "intact", diff's 1 "regressions", finalize's 5 "free space": a
    name too long was an ENAMETOOLONG traceback with exit 1 (or 5 for finalize)."""
    monkeypatch.chdir(tmp_path)
    rc, err = _main(command, capsys)
    _clean_usage_error(rc, err, "give a shorter path")
    assert "(300 characters, the first 200 shown)" in err, err


def test_path_limits_names_what_is_wrong():
    assert path_limits.problem("a/" + "b" * 255) is None
    assert "256 bytes" in path_limits.problem("a/" + "b" * 256)
    assert "4,096 bytes long" in path_limits.problem("/".join(["c" * 200] * 21)[:4096])
    assert "NUL" in path_limits.problem("a\0b")
    with pytest.raises(option_error.OptionError, match="^--waivers=x+... .*shorter path"):
        path_limits.check(LONG, "--waivers")


def test_inline_plugin_options_nested_deep_is_a_json_error(capsys, tmp_path, monkeypatch):
    """``--plugin-options '[[[...]]]'`` nested 150 deep was read as a file name (an
    INTERNALERROR); a value starting with ``[`` is inline JSON."""
    monkeypatch.chdir(tmp_path)
    nested = "[" * 150 + "]" * 150
    rc, err = _main(["run", "--output", "o", "--plugin-library", str(tmp_path / "p.so"),
                     "--plugin-options", nested], capsys)
    _clean_usage_error(rc, err, "--plugin-options: not valid JSON")
    values = {d: None for d in option_files.FILE_OPTIONS}
    values["plugin_options"] = nested
    option_files.check(values.get)   # inline JSON: not a file to check


# -- case 12: a 170 kB error message ----------------------------------------------------

def test_a_huge_bad_value_is_quoted_to_200_characters(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    huge = '{"cpu_device_count": "' + "9" * 170_000 + '"}'
    rc, err = _main(["run", "--output", "o", "--plugin-library",
                     str(tmp_path / "libpjrt_cpu.so"), "--plugin-options", huge], capsys)
    _clean_usage_error(rc, err, "--plugin-options", "characters, the first 200 shown")
    assert len(err) < 1000, len(err)
    rc, err = _main(["run", "--output", "o", "--plugin-library", str(tmp_path / "p.so"),
                     "--plugin-options", "z" * 170_000], capsys)   # neither JSON nor a file
    _clean_usage_error(rc, err, "--plugin-options")
    assert len(err) < 1000, len(err)


def test_shown_cuts_and_counts():
    assert option_error.shown("abc") == "abc"
    assert option_error.shown([1, 2]) == "[1, 2]"
    cut = option_error.shown("q" * 500)
    assert cut.startswith("q" * 200 + "...") and "500 characters" in cut and len(cut) < 260


# -- case 11: runtime RecursionError -----------------------------------------------------

def _nested(depth: int) -> list:
    top = inner = []
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return top


def test_runtime_errors_describe_values_nested_too_deep_to_repr():
    """``execute`` with arguments nested 100,000 deep and ``buffer_from_pyval`` with a
    list nested 5,000 deep raised RecursionError from the error message's repr."""
    from runtime import _validate, xla_client

    assert _validate.describe(_nested(100_000)).startswith("[[[[")
    client = xla_client.make_cpu_client()
    device = client.local_devices()[0]
    with pytest.raises(TypeError, match="buffer_from_pyval: argument"):
        client.buffer_from_pyval(_nested(5_000), device)
    program = ("module @m { func.func public @main(%a: tensor<f32>) -> tensor<f32> "
               "{ return %a : tensor<f32> } }")
    exe = client.compile_and_load(program, client.devices()[:1])
    for call in ("execute", "execute_sharded"):
        with pytest.raises(TypeError, match=rf"{call}: argument 'arguments\[0\]'"):
            getattr(exe, call)([_nested(100_000)])
    assert exe.execute([client.buffer_from_pyval(np.float32(2), device)])[0] is not None


def test_describe_survives_a_broken_repr():
    from runtime import _validate

    class Broken:
        def __repr__(self):
            raise RuntimeError("no")

    assert "Broken" in _validate.describe(Broken())   # never the RuntimeError
