"""Probe defects of issue 34 (items 1 and 3): every input has a cap.

Every file an option names is a regular file of at most a few MiB, read once where it is
a pipe (``<(...)``); a FIFO, a device or a directory is refused with one line naming the
option; xz data stops at its output cap; ``-n`` has a maximum; JSON and TOML nested too
deeply, or holding a number too long to convert, are malformed input, never a traceback;
a spec larger than one argument reaches the child processes. Cases that hung (or ate
memory) before run in a child process with a timeout and a memory limit, so that a
regression fails instead of hanging the self-tests.
"""

import datetime
import json
import lzma
import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import file_limits
from conformance.certification.bundle import bundle_files
from conformance.certification.bundle import reportfile
from conformance.certification import jsontext
from conformance.certification.verdict import report
from conformance.session import option_files
from conformance.session import validate
from tests.bundle_helpers import HEADER, main
from tests.bundle_helpers import clean

ROOT = Path(__file__).resolve().parents[1]
GiB = 1 << 30
MiB = 1 << 20


def _limited(memory: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return apply


def _child(argv, *, timeout=120, memory=3 * GiB, cwd=ROOT):
    """Run ``argv`` in its own session with at most ``memory`` bytes of address space;
    a hang past ``timeout`` seconds kills its whole group and fails the test. Returns
    (exit status, stdout and stderr as text)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=_limited(memory))
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{argv[:6]}... hung: no end within {timeout} s")
    return proc.returncode, out.decode("utf-8", "backslashreplace")


def _cli(*args, **kw):
    return _child([sys.executable, "-m", "conformance.cli", *map(str, args)], **kw)


def _bash(script, **kw):
    """``script`` in bash (for its process substitution ``<(...)``); ``$PY`` runs the CLI."""
    return _child(["bash", "-c", f'PY="{sys.executable} -m conformance.cli"; {script}'], **kw)


def _one_line_usage_error(rc, text, *wanted):
    assert rc == 2, text[-3000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    for w in wanted:
        assert w in text, text[-3000:]


@pytest.fixture
def odd(tmp_path):
    """Paths of the kinds no option file may be: a device (a link named x.json to
    /dev/zero, so that loaders that want a .json read it), a FIFO, a directory."""
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "dir.json").mkdir()
    return {"character device": tmp_path / "zero.json", "named pipe": tmp_path / "fifo.json",
            "directory": tmp_path / "dir.json"}


# -- the module ---------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_read_bytes_refuses_what_is_not_a_regular_file_without_reading_it(odd):
    for what, path in odd.items():
        with pytest.raises(file_limits.FileLimitError,
                           match=rf"^--waivers={path}: is a {what}"):
            file_limits.read_bytes(path, what="--waivers")
    with pytest.raises(file_limits.FileLimitError, match="^/dev/null: is a character device"):
        file_limits.read_bytes("/dev/null")


def test_read_bytes_refuses_a_file_past_its_cap_by_its_size(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(file_limits.OPTION_FILE_LIMIT + 1)   # sparse: nothing is written
    with pytest.raises(file_limits.FileLimitError,
                       match=r"^--waivers=.*big.toml: is 16.0 MiB, more than the 16 MiB"):
        file_limits.read_bytes(big, what="--waivers")
    small = tmp_path / "small.txt"
    small.write_bytes(b"x" * 10)
    assert file_limits.read_bytes(small, limit=10) == b"x" * 10
    with pytest.raises(file_limits.FileLimitError, match="is 10 bytes, more than the 9 bytes"):
        file_limits.read_bytes(small, limit=9)


@pytest.mark.timeout(60)
def test_a_pipe_is_read_once_only_where_asked_within_its_cap_and_time():
    def pipe(data: bytes, close: bool = True):
        r, w = os.pipe()
        os.write(w, data)
        if close:
            os.close(w)
        return r, w, f"/dev/fd/{r}"

    r, _, path = pipe(b"f64\n")
    assert file_limits.is_anonymous_pipe(path)
    with pytest.raises(file_limits.FileLimitError, match="is a pipe, not a regular file"):
        file_limits.read_bytes(path, what="--declare-file")
    assert file_limits.read_bytes(path, what="--declare-file", pipe=True) == b"f64\n"
    os.close(r)
    r, _, path = pipe(b"x" * 100)
    with pytest.raises(file_limits.FileLimitError,
                       match="more than the 10 bytes this file may have came through"):
        file_limits.read_bytes(path, what="--declare-file", limit=10, pipe=True)
    os.close(r)
    r, w, path = pipe(b"x", close=False)   # a writer that never ends
    with pytest.raises(file_limits.FileLimitError, match="the pipe did not end within 0.5 s"):
        file_limits.read_bytes(path, pipe=True, timeout=0.5)
    os.close(r)
    os.close(w)


def test_decompress_xz_stops_at_its_output_cap():
    one = lzma.compress(b"\0" * MiB)
    bomb = one * 8   # eight concatenated streams: 8 MiB from a few kB
    assert len(bomb) < 16 * 1024
    with pytest.raises(file_limits.FileLimitError,
                       match=r"^results.jsonl.xz: unpacks to more than 4 MiB"):
        file_limits.decompress_xz(bomb, limit=4 * MiB, what="results.jsonl.xz")
    assert file_limits.decompress_xz(bomb, limit=8 * MiB) == lzma.decompress(bomb)
    data = lzma.compress(b"ab") + lzma.compress(b"cd")
    assert file_limits.decompress_xz(data + b"\0junk") == b"abcd"   # as lzma.decompress does
    with pytest.raises(EOFError):
        file_limits.decompress_xz(lzma.compress(b"abc" * 1000)[:-10])
    with pytest.raises(lzma.LZMAError):
        file_limits.decompress_xz(b"not xz at all")
    assert file_limits.DECOMPRESSED_LIMIT == 512 * MiB


# -- options --------------------------------------------------------------------------------

_LOADERS = {   # what reads an option's file -> a call of PATH
    "--waivers": "waivers.parse(Path(PATH))",
    "--known-failures": "known_failures.parse(Path(PATH))",
    "--declare-file": "profiles.read_declare_file(Path(PATH))",
    "--profile": "profiles.load(PATH)",
    "--defects": "defect_catalog.load_file(Path(PATH))",
    "--shard-durations": "shards.load_durations(PATH)",
    "--plugin-options": "backend.load_plugin_options(PATH)",
    "check": "option_files.check({DEST: PATH}.get)",
    "@FILE": "option_files.argument_files(['@' + PATH])",
}
_CALLS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from conformance.certification.bundle import shards
    from conformance.certification.catalog import defect_catalog, known_failures, waivers
    from conformance.certification.catalog import profiles
    from conformance.session import backend, option_files
    for label, call, path, dest in json.loads(sys.argv[1]):
        try:
            eval(call.replace("DEST", repr(dest)), globals(), {"PATH": path})
            print(json.dumps([label, path, "accepted"]), flush=True)
        except ValueError as err:
            print(json.dumps([label, path, str(err)]), flush=True)
""")


def test_every_option_file_reader_refuses_a_fifo_a_device_and_a_directory(odd):
    """Before: a FIFO blocked for ever, /dev/zero was read until memory ran out."""
    calls = [[label, call, str(path), dest] for label, call in _LOADERS.items()
             for what, path in odd.items()
             for dest in (option_files.FILE_OPTIONS if label == "check" else [None])
             if not (label == "check" and what == "directory")]   # a folder of catalogs
    rc, out = _child([sys.executable, "-c", _CALLS, json.dumps(calls)], memory=3 * GiB)
    assert rc == 0, out[-3000:]
    answers = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    assert len(answers) == len(calls), out[-3000:]
    for (label, path, message), (_, _, _, dest) in zip(answers, calls):
        what = next(w for w, p in odd.items() if str(p) == path)
        assert f"{path}: is a {what}" in message, (label, message)
        if label == "check":
            assert message.startswith(f"--{dest.replace('_', '-')}={path}:"), message
        elif label != "--defects":   # a catalog file is named by its path alone
            assert message.startswith(f"{label}={path}:"), message


def test_an_option_file_past_its_cap_is_a_usage_error(tmp_path):
    big = tmp_path / "waivers.toml"
    with open(big, "wb") as f:
        f.truncate(17 * MiB)   # NUL bytes are UTF-8: the old check read all of it
    values = {d: None for d in option_files.FILE_OPTIONS}
    with pytest.raises(validate.OptionError, match=r"^--waivers=.*: is 17 MiB, more than "
                                                   r"the 16 MiB this file may have"):
        option_files.check({**values, "waivers": str(big)}.get)
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"pad": "x" * (1 * MiB)}))
    with pytest.raises(validate.OptionError, match=r"^--plugin-options=.*: is 1.0 MiB, more "
                                                   r"than the 1 MiB"):
        validate.parsed_plugin_options(str(options), "/x/libother_plugin.so")


@pytest.mark.parametrize("where", ["file", "inline"])
def test_plugin_options_nested_deep_is_one_usage_error(tmp_path, where):
    text = '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}"
    value = text
    if where == "file":
        value = str(tmp_path / "options.json")
        Path(value).write_text(text)
    with pytest.raises(validate.OptionError, match="^--plugin-options: not valid JSON "
                                                   r"\(nested too deeply"):
        validate.parsed_plugin_options(value, "/x/libother_plugin.so")
    with pytest.raises(validate.OptionError, match="a number too long to read"):
        validate.parsed_plugin_options('{"a": ' + "9" * 5000 + "}", "/x/libother_plugin.so")


@pytest.mark.parametrize("option", ["--declare-file", "--known-failures", "--waivers",
                                    "@FILE"])
def test_run_refuses_a_fifo_or_device_before_anything_starts(tmp_path, odd, option):
    """Before: --declare-file and --known-failures of a FIFO hung in the pytest session,
    --waivers /dev/zero read until memory ran out."""
    path = odd["named pipe" if option in ("--declare-file", "--known-failures")
               else "character device"]
    out = tmp_path / "out"
    args = ["run", "--platform", "cpu", "--output", out]
    args += [option, path, "--", "-k", "test_registry"] if option != "@FILE" \
        else ["--", f"@{path}"]
    rc, text = _cli(*args, timeout=90)
    _one_line_usage_error(rc, text, f"{option}={path}: is a ")
    assert not out.exists()


def test_an_endless_pipe_stops_at_the_cap(tmp_path):
    out = tmp_path / "out"
    rc, text = _bash(f"$PY run --platform cpu --output {out} --declare-file <(yes f64) "
                     "-- -k test_registry", timeout=120)
    _one_line_usage_error(rc, text, "--declare-file=/dev/fd/",
                          "more than the 16 MiB this file may have came through the pipe")
    assert not out.exists()


def test_process_substitutions_are_read_once_and_the_run_is_certified(tmp_path):
    """Before: --declare-file <(...) was read by the session and again, empty or gone, by
    the xdist worker: '0 collected', not certified."""
    out = tmp_path / "out"
    rc, text = _bash(
        f"$PY run --platform cpu --cpu-devices 1 -n 0 --profile none --output {out} "
        "--declare-file <(printf 'f64\\ncomplex\\n') --waivers <(printf '') "
        "--known-failures <(printf '# none\\n') "
        "-- @<(printf -- '-k\\ntest_registry_serves_the_client_under_test\\n')",
        timeout=300)
    assert rc == 1, text[-3000:]   # --profile none: not a certification
    doc = json.loads((out / "report.json").read_text())
    assert clean(doc)
    assert doc["summary"]["collected"] == 1
    assert doc["declared_capabilities"] == ["f64", "complex"]
    copy = json.loads((out / "run.json").read_text())["options"]["declare_file"]
    # the run's private copy of the process substitution, named as a bundle names a
    # local file: no path of this machine, its file name kept
    assert copy.startswith("<redacted>/") and copy.endswith(".txt")


def test_a_process_substitution_reaches_the_xdist_workers_of_plain_pytest(tmp_path):
    """pytest-xdist workers parse the command line again: the controller hands them the
    private copy (before: the worker read the spent pipe, '0 collected')."""
    out = tmp_path / "out"
    rc, text = _child(["bash", "-c", f'"{sys.executable}" -m pytest --pyargs conformance '
                       f"-p no:cacheprovider -q -n 1 --cpu-devices=1 --profile=none "
                       f"--report-dir={out} --declare-file <(printf 'f64\\n') "
                       "-k test_registry_serves_the_client_under_test"],
                      cwd=tmp_path, timeout=300)
    assert rc == 0, text[-3000:]
    doc = json.loads((out / "report.json").read_text())
    assert clean(doc) and doc["summary"]["collected"] == 1
    assert doc["declared_capabilities"] == ["f64"]


def test_read_once_replaces_only_pipes():
    r, w = os.pipe()
    os.write(w, b"f64\n")
    os.close(w)
    values = {d: None for d in option_files.FILE_OPTIONS}
    values.update(declare_file=f"/dev/fd/{r}", profile="v8", defects=["shipped"],
                  known_failures=[f"/dev/fd/{r}"], plugin_options='{"a": 1}')
    changed = option_files.read_once(values.get, values.__setitem__)
    os.close(r)
    assert sorted(changed) == ["declare_file", "known_failures"]
    assert Path(values["declare_file"]).read_bytes() == b"f64\n"
    assert values["known_failures"][0].endswith(".txt")   # the pipe was read already: empty
    assert (values["profile"], values["defects"]) == ("v8", ["shipped"])
    assert values["plugin_options"] == '{"a": 1}'


def test_workers_have_a_maximum_of_four_per_core(tmp_path):
    """Before: -n 100000 started workers one after another without end."""
    top = validate.max_workers()
    assert top == 4 * (os.cpu_count() or 1)
    assert validate.workers(str(top)) == str(top)
    with pytest.raises(validate.OptionError, match=rf"^-n/--workers=100000: accepted: an int "
                                                   rf"from 0 to {top} \(4 per CPU core"):
        validate.workers("100000")
    out = tmp_path / "out"   # not empty: the old code stopped here, before any worker
    out.mkdir()
    (out / "keep.txt").write_text("x")
    rc, text = _cli("run", "--platform", "cpu", "-n", "100000", "--output", out, timeout=90)
    _one_line_usage_error(rc, text, "-n/--workers=100000")
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_a_spec_larger_than_an_argument_reaches_the_preflight_and_isolation_children():
    """Before: a 168 KB --plugin-options file made the preflight child's argv too long
    (OSError: Argument list too long)."""
    from conformance.processes import isolation, preflight
    from conformance.session import backend

    spec = backend.BackendSpec(platform="cpu", cpu_devices=1,
                               plugin_options={"pad": "x" * 200_000})
    problem, info = preflight.describe(spec, timeout=120)
    assert problem is None and info.get("local_device_count") == 1
    out = isolation.run_snippet("print(len(spec.plugin_options['pad']), device.id)",
                                spec=spec, device_index=0, call="big spec", timeout=120)
    assert out.split() == ["200000", "0"]


# -- bundles and other JSON/TOML ------------------------------------------------------------

def _small_bundle(path: Path) -> Path:
    results = [report.Result("conformance/test_a.py::t", "a", "pass", message="m")]
    doc = report.build(results, collected=1, header=HEADER, today=datetime.date(2026, 11, 22))
    return bundle_files.write(json.loads(json.dumps(doc)), path).parent


def _retext(path: Path, extra: str) -> None:
    """Add the raw JSON member ``extra`` to report.json and re-hash the manifest."""
    target = path / "report.json"
    target.write_text("{" + extra + ", " + target.read_text().lstrip()[1:])
    lines = [f"{bundle_files.sha256_file(path / n)}  {n}" for n in bundle_files.FILES]
    (path / bundle_files.MANIFEST).write_text("\n".join(lines) + "\n")


def test_a_5000_digit_number_in_report_json_is_malformed_input(tmp_path, capsys):
    """Before: diff and scoreboard ended in ValueError: Exceeds the limit (4300 digits)."""
    good = _small_bundle(tmp_path / "good")
    bad = _small_bundle(tmp_path / "reports" / "cpu" / "20260101T000000Z")
    _retext(bad, '"x": ' + "9" * 5000)
    got = main(capsys, "diff", bad, good)
    assert got.returncode == 3, got.stderr
    assert "a number too long to read" in got.stderr
    got = main(capsys, "scoreboard", tmp_path / "reports")
    assert got.returncode == 3 and "a number too long to read" in got.stderr, got.stderr
    with pytest.raises(json.JSONDecodeError, match="^a number too long"):
        jsontext.loads('[1, ' + "9" * 5000 + "]")


def test_report_json_nested_past_the_depth_cap_is_malformed(tmp_path, capsys):
    """Before: 900 levels decoded, then rerender ended in a RecursionError."""
    path = _small_bundle(tmp_path / "b")
    _retext(path, '"x": ' + "[" * 900 + "]" * 900)
    with pytest.raises(reportfile.MalformedReport, match="nested too deeply"):
        reportfile.load(path)
    got = main(capsys, "rerender", path)
    assert got.returncode == 3 and "nested too deeply" in got.stderr, got.stderr
    jsontext.loads("[" * jsontext.MAX_DEPTH + "]" * jsontext.MAX_DEPTH)   # the most accepted
    with pytest.raises(jsontext.TooDeep, match=rf"more than {jsontext.MAX_DEPTH} levels"):
        jsontext.loads("[" * (jsontext.MAX_DEPTH + 1) + "]" * (jsontext.MAX_DEPTH + 1))


@pytest.mark.parametrize("text", ["x = " + "[" * 100_000 + "]" * 100_000,
                                  "x = " + "9" * 5000], ids=["nested", "long number"])
def test_toml_nested_deep_or_with_a_long_number_names_the_file(tmp_path, text):
    from conformance.certification.catalog import defect_catalog, waivers

    path = tmp_path / "x.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^--waivers {path}: "):
        waivers.parse(path)
    with pytest.raises(ValueError, match=rf"^{path}: cannot read the defect catalog"):
        defect_catalog.load_file(path)


def test_finalize_refuses_a_fifo_run_json(tmp_path):
    """Before: finalize blocked for ever opening run.json."""
    os.mkfifo(tmp_path / "run.json")
    (tmp_path / "results.jsonl").write_text("")
    rc, text = _cli("finalize", tmp_path, timeout=90)
    _one_line_usage_error(rc, text, "run.json: is a named pipe (FIFO)")


def test_a_results_log_that_unpacks_past_the_cap_is_refused(tmp_path):
    """520 MiB from 100 kB of xz: ``durations`` (and finalize, diff, verify, rerender)
    unpacked all of it."""
    log = tmp_path / "results.jsonl.xz"
    log.write_bytes(lzma.compress(b"\0" * MiB) * 520)
    rc, text = _cli("durations", log, timeout=120, memory=4 * GiB)
    assert "Traceback" not in text, text[-3000:]
    assert "unpacks to more than 512 MiB" in text, text[-3000:]
