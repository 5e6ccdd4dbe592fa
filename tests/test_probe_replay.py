"""Replay of the third probe round (issue 40): 16 root causes, tried as a careless or
hostile user would. Each case states what the probe did and checks the promise the
README makes: one line and the documented exit status, never a traceback, a hang, a
write through a link or outside ``--output``, and ``verify`` never calls a bundle that
lost results intact. Cases that need a real run of the suite select a few tests."""

from __future__ import annotations

import json
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


# -- case 1: finalize (and rerender, sign, merge) over a run that is still going ------------

@pytest.fixture
def live_run(tmp_path):
    """A run directory whose lock another process holds, as a live ``run`` does: its
    ``run.json`` and a results log of one line."""
    out = tmp_path / "LK"
    out.mkdir()
    (out / "run.json").write_text("{}\n")
    (out / "results.jsonl").write_text('{"pytest_version": "8"}\n')
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         f"fd = os.open({str(out)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    yield out
    holder.kill()
    holder.wait()


@pytest.mark.parametrize("command", [["finalize", "{d}"], ["rerender", "{d}"],
                                     ["sign", "{d}", "--key", "{k}"],
                                     ["merge", "{p}", "{p}", "--output", "{d}", "--force"]])
def test_commands_refuse_a_directory_a_live_run_holds(live_run, capsys, tmp_path, command):
    """``finalize`` packed and removed the log of a run still writing it (1 line of 24
    results kept, and verify said intact)."""
    key = tmp_path / "key"
    key.write_text("not a key\n")
    part = tmp_path / "part"
    part.mkdir()
    args = [a.format(d=live_run, k=key, p=part) for a in command]
    before = sorted((p.name, p.read_bytes()) for p in live_run.iterdir())
    rc, err = _main(args, capsys)
    assert sorted((p.name, p.read_bytes()) for p in live_run.iterdir()) == before
    if command[0] == "merge":   # the parts are refused first (not bundles): nothing touched
        assert rc in (2, 3) and "Traceback" not in err, err
        return
    _clean_usage_error(rc, err, "still writing into it")


# -- case 2: writes through links into a bundle ---------------------------------------------

def _bundle(tmp_path):
    bundle = tmp_path / "B"
    bundle.mkdir()
    (bundle / "MANIFEST.sha256").write_text("")
    (bundle / "report.html").write_text("original")
    (bundle / "run.json").write_text("{}")
    return bundle


@pytest.mark.parametrize("command", [["scoreboard", "{r}", "--html", "{link}"],
                                     ["scoreboard", "{r}", "--markdown", "{link}"],
                                     ["durations", "{log}", "--output", "{link}"]])
def test_no_command_writes_through_a_link_into_a_bundle(tmp_path, capsys, command):
    bundle = _bundle(tmp_path)
    link = tmp_path / "x.html"
    link.symlink_to(bundle / ("run.json" if command[0] == "durations" else "report.html"))
    log = tmp_path / "results.jsonl"
    log.write_text("")
    reports = tmp_path / "reports"
    reports.mkdir()
    args = [a.format(r=reports, link=link, log=log) for a in command]
    rc, err = _main(args, capsys)
    assert rc == 2 and "is inside the report bundle" in err and "Traceback" not in err, err
    assert (bundle / "report.html").read_text() == "original"
    assert (bundle / "run.json").read_text() == "{}"


# -- case 3: --shard with more shards than tests ------------------------------------------

def test_a_shard_count_far_too_large_is_refused_at_once(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, err = _main(["run", "--output", "o", "--shard", "1/100000000"], capsys)
    _clean_usage_error(rc, err, "at most 1000 shards")
    assert list(tmp_path.iterdir()) == []


def test_more_shards_than_selected_tests_is_a_usage_error(tmp_path):
    """Found by the workers once they collected: one line, exit 2, no bundle."""
    rc, text = _cli("run", "--cpu-devices", "1", "--profile", "none", "--output", "sh",
                    "--shard", "5/10", "--", "-k", "test_client and platform_strings",
                    cwd=tmp_path)
    _clean_usage_error(rc, text, "10 shards of 1 selected test(s)")
    assert not (tmp_path / "sh").exists()


# -- case 9: --force over a killed run -----------------------------------------------------

def test_force_keeps_the_log_of_a_run_that_wrote_no_bundle(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "killed"
    out.mkdir()
    (out / "run.json").write_text("{}\n")
    (out / "results.jsonl").write_text("{}\n" * 24)
    rc, err = _main(["run", "--output", str(out), "--force"], capsys)
    _clean_usage_error(rc, err, "pjrt-conformance finalize", "results.jsonl")
    assert (out / "results.jsonl").read_text() == "{}\n" * 24


# -- cases 7, 10 and 16: finalize and verify read the results log as it is -------------------

@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    """A bundle of a real run of 2 tests (profile none), made once for these cases."""
    where = tmp_path_factory.mktemp("small")
    rc, text = _cli("run", "--cpu-devices", "1", "--profile", "none", "--output", "b",
                    "--", "-k", "test_client and platform_strings", cwd=where)
    assert rc in (0, 1) and (where / "b" / "MANIFEST.sha256").is_file(), text[-3000:]
    return where / "b"


def _copy(bundle, tmp_path):
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(bundle, target)
    return target


def test_finalize_refuses_a_results_log_that_is_a_fifo(small_bundle, tmp_path, capsys):
    """A FIFO results.jsonl made a 0-result bundle holding the FIFO (exit 0)."""
    import os

    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_bytes((small_bundle / "run.json").read_bytes())
    os.mkfifo(out / "results.jsonl")
    rc, err = _main(["finalize", str(out)], capsys)
    _clean_usage_error(rc, err, "results.jsonl: is not a regular file")
    assert sorted(p.name for p in out.iterdir()) == ["results.jsonl", "run.json"]


def test_a_cut_off_last_line_is_named(tmp_path):
    from conformance.session import results_log

    log = tmp_path / "results.jsonl"
    log.write_text('{"pytest_version": "8"}\n{"$report_type": "TestRep')   # cut off
    dropped: list[int] = []
    assert results_log.read_reports(log, dropped) == []
    assert dropped == [2]
    assert "dropped 1 corrupt or cut-off line(s) (line 2)" in \
        results_log.dropped_note(log, dropped)
    assert results_log.read_reports(log) == []   # without a list: skipped, as before


def _rehash(bundle):
    """The manifest of ``bundle`` re-hashed, as a forger would (every digest recomputed)."""
    import hashlib
    import lzma

    lines = []
    for line in (bundle / "MANIFEST.sha256").read_text().splitlines():
        _, _, name = line.partition("  ")
        path = bundle / name
        data = path.read_bytes() if path.is_file() else \
            lzma.decompress((bundle / (name + ".xz")).read_bytes())
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    (bundle / "MANIFEST.sha256").write_text("\n".join(lines) + "\n")


def test_verify_finds_a_log_that_lost_results(small_bundle, tmp_path):
    """``finalize`` over a live run packed a log of 1 line for 24 results; with the
    manifest re-hashed, verify said intact."""
    import lzma

    from conformance.certification.bundle import bundle_files
    from conformance.certification.results import runlog

    copy = _copy(small_bundle, tmp_path)
    assert not [p for p in bundle_files.verify(copy).problems]   # intact as written
    lines = runlog.read_lines(copy / runlog.PACKED)
    (copy / runlog.PACKED).write_bytes(lzma.compress((lines[0] + "\n").encode()))
    _rehash(copy)
    n = len(json.loads((copy / "report.json").read_text())["results"])
    problems = bundle_files.verify(copy).problems
    assert any(f"holds no test report of {n} of the {n} results" in p for p in problems), \
        problems


def test_verify_stops_at_the_cap_of_a_log_that_unpacks_too_far(small_bundle, tmp_path,
                                                               monkeypatch):
    """A log that unpacked to 2 GB verified intact (hashed, never capped); the cap is
    lowered here so that the bomb is small."""
    import lzma

    from conformance import file_limits
    from conformance.certification.bundle import bundle_files
    from conformance.certification.results import runlog

    copy = _copy(small_bundle, tmp_path)
    text = runlog.read_lines(copy / runlog.PACKED)
    (copy / runlog.PACKED).write_bytes(lzma.compress(
        ("\n".join(text) + "\n").encode() + b" " * (3 << 20)))
    _rehash(copy)
    monkeypatch.setattr(file_limits, "DECOMPRESSED_LIMIT", 2 << 20)
    problems = bundle_files.verify(copy).problems
    assert any("past the cap" in p or "unpacks to more than" in p for p in problems), problems


def test_since_previous_never_compares_another_selection():
    """A sibling bundle made with another -k or --cpu-devices was compared with (its
    selection differs: never the previous bundle; tests/test_since_previous.py runs it)."""
    from conformance.certification.compare import since_previous

    base = {"cpu_devices": 2, "command": "cli.py run --output /o -- -k a"}
    assert since_previous.selection(base) != since_previous.selection(
        {**base, "command": "cli.py run --output /o -- -k b"})
    assert since_previous.selection(base) != since_previous.selection(
        {**base, "cpu_devices": 4})


# -- case 13: a timed-out test's duration ------------------------------------------------

def test_a_timed_out_test_keeps_the_seconds_it_ran():
    """Timed-out tests got duration_s 0.0003 (their teardown's); they ran 2.8-4.3 s."""
    from types import SimpleNamespace

    from conformance.certification.results.records import Collector

    def report(when, seconds, status):
        return SimpleNamespace(nodeid="conformance/test_x.py::t", location=None, when=when,
                               duration=seconds, outcome="failed" if status != "pass"
                               else "passed", longrepr="Timeout", user_properties=[
                                   ("pjrt_outcome", {"status": status})])

    collector = Collector()
    for when, seconds, status in (("setup", 0.01, "pass"), ("call", 3.5, "timeout"),
                                  ("teardown", 0.0003, "timeout")):
        collector.add(report(when, seconds, status))
    (result,) = collector.results.values()
    assert result.status == "timeout" and result.duration_s == pytest.approx(3.5103), \
        result.duration_s


# -- case 14: nothing written outside --output ------------------------------------------------

def test_a_run_writes_nothing_in_the_current_directory_but_its_output(tmp_path):
    """``run`` created ``.hypothesis/`` and ``.benchmarks/`` in the current directory.
    Hypothesis writes its files (here its observability log, which every Hypothesis test
    writes; a run no longer writes a cache of local constants) under the cache folder."""
    import os

    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--cpu-devices",
                           "1", "--profile", "none", "--output", "o", "--", "-k",
                           "test_reduce and sum-int32", "--hypothesis-profile=dev"],
                          cwd=work, capture_output=True, text=True, timeout=300,
                          env={**env, "XDG_CACHE_HOME": str(cache),
                               "HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY": "1"})
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout, proc.stdout[-2000:]
    assert sorted(p.name for p in work.iterdir()) == ["o"]
    assert any((cache / "pjrt-conformance" / "hypothesis" / "observed").iterdir())


# -- case 6: a full disk as the run begins ---------------------------------------------------

FULL_AT_START = """
import errno, os
from conformance.session import results_log


def _no_space(out, facts):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "run.json"))


results_log._write_run = _no_space
"""


def test_a_full_disk_when_run_json_is_written_is_exit_5(tmp_path):
    """An INTERNALERROR traceback and exit 2, where the README says 5."""
    import os

    (tmp_path / "full_at_start.py").write_text(FULL_AT_START)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--cpu-devices",
                           "1", "--profile", "none", "--output", "o", "--", "-k",
                           "test_client and platform_strings", "-p", "full_at_start"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 5, text[-3000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    assert "cannot write run.json" in text and "No space left on device" in text, text[-3000:]
    assert not (tmp_path / "o").exists()


# -- case 15: the console script under a memory limit ----------------------------------------

@pytest.mark.parametrize("limit_kb", [380_000, 400_000, 420_000])
def test_the_command_under_a_memory_limit_is_one_line(tmp_path, limit_kb):
    """``ulimit -v 380000-420000``: finalize died with a MemoryError or ImportError
    traceback and exit 1 (verify's "intact but not certified")."""
    proc = subprocess.run(["bash", "-c", f"ulimit -v {limit_kb}; exec \"$0\" -m "
                           "conformance.launch finalize missing", sys.executable],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text[-3000:]
    # 5: not enough memory to start; 2: enough memory after all (no such run); 127: the
    # dynamic loader itself gave up before Python ran a line (one line of its own,
    # "cannot allocate memory for thread-local data: ABORT", seen on Python 3.12)
    outcome = (proc.returncode, "not enough memory" in text)
    loader = proc.returncode == 127 and "cannot allocate memory" in text
    assert outcome in ((5, True), (2, False)) or loader, text
