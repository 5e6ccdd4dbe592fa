"""Output directories and bundles under attack (issue 34 item 2, a prober's report):
``--force`` through a symbolic link deleted the link target's files; two runs shared one
``--output`` (and two default outputs of the same second one folder); ``dashboard``,
``scoreboard`` and ``durations`` wrote into a bundle; ``--platform ../../x`` made folders
outside ``reports/``; an unlisted FIFO, or a bundle dated 2099, verified intact (and the
scoreboard showed the 2099 one as the newest); ``verify``/``diff``/``scoreboard`` blocked
for ever on a FIFO in a bundle. Every command that could hang runs in a child process
with a timeout, so that a hang fails the test instead of stopping pytest."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import cli
from conformance.certification.bundle import bundle_files
from conformance.certification.compare import scoreboard
from conformance.session import results_log
from conformance.session import validate
from tests.bundle_helpers import crafted, rewrite

ROOT = Path(__file__).resolve().parent.parent
_HANG_S = 120   # far above what each command takes; reached only by a hang

_HOLDER = """
import sys, time
from pathlib import Path
from conformance.session import validate
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
try:
    validate.output_dir(sys.argv[1])
    print("claimed", flush=True)
except validate.OptionError as err:
    print("refused:", err, flush=True)
sys.stdin.read()   # the claim is held until the test closes stdin
"""


def _cli(*args, cwd=ROOT, timeout=_HANG_S):
    """``pjrt-conformance ARGS`` in a child process; a hang fails the test."""
    try:
        return subprocess.run([sys.executable, "-m", "conformance.cli", *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    except subprocess.TimeoutExpired:
        pytest.fail(f"pjrt-conformance {' '.join(map(str, args))} hung ({timeout} s)")


def _holder(out, go):
    """A process that claims ``out`` once ``go`` exists, says whether it got it, and holds
    the claim until its stdin is closed."""
    return subprocess.Popen([sys.executable, "-c", _HOLDER, str(out), str(go)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _said(kid):
    line = kid.stdout.readline().strip()
    assert line, kid.stdout.read()
    return line


def _tree(root):
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*"))


def _manifest_bytes(path):
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file() and not p.is_symlink()}


# --force and symbolic links ---------------------------------------------------------------

def test_force_never_follows_a_repro_symlink_into_another_directory(tmp_path, capsys):
    """(a) OUT/repro a link to another directory: --force deleted every file there."""
    precious = tmp_path / "precious"
    precious.mkdir()
    for name in ("notes.md", "tool.py"):         # names an earlier bundle's repro/ holds
        (precious / name).write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "repro").symlink_to(precious, target_is_directory=True)
    rc = cli.main(["run", "--platform", "cpu", "--profile", "none", "--output", str(out),
                   "--force", "--", "-k", "test_registry"])
    err = capsys.readouterr().err
    assert rc == 2 and "--output=" in err and "repro (a symbolic link)" in err, err
    assert sorted(p.name for p in precious.iterdir()) == ["notes.md", "tool.py"]
    assert (out / "repro").is_symlink() and (out / "report.json").exists()


def test_force_never_follows_a_symlinked_bundle_file_nor_a_linked_output(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").symlink_to(target)
    with pytest.raises(validate.OptionError, match=r"report\.json \(a symbolic link\)"):
        validate.output_dir(out, force=True)
    assert target.read_text() == "keep" and (out / "report.json").is_symlink()
    real = tmp_path / "real"
    real.mkdir()
    (real / "report.json").write_text("{}")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with pytest.raises(validate.OptionError, match="is a symbolic link"):
        validate.output_dir(tmp_path / "link", force=True)
    assert (real / "report.json").exists()
    assert validate.output_dir(real, force=True) == real and not any(real.iterdir())
    validate.release(real)


# claiming an output directory ------------------------------------------------------------

def test_two_processes_racing_for_one_output_one_is_refused(tmp_path):
    """(b) Two runs into one --output at once both claimed it."""
    out, go = tmp_path / "out", tmp_path / "go"
    kids = [_holder(out, go) for _ in range(2)]
    try:
        time.sleep(1.5)                 # both started (importing) before the race begins
        go.touch()
        said = sorted(_said(k) for k in kids)
    finally:
        for kid in kids:
            kid.communicate(timeout=_HANG_S)   # closes stdin: the claim ends
    assert said[0] == "claimed" and said[1].startswith("refused:"), said
    assert "another pjrt-conformance process is writing into this directory" in said[1]
    assert out.is_dir() and not any(out.iterdir())


def test_a_run_into_a_claimed_output_is_a_usage_error_naming_output(tmp_path, capsys):
    out, go = tmp_path / "out", tmp_path / "go"
    go.touch()
    kid = _holder(out, go)
    try:
        assert _said(kid) == "claimed"
        rc = cli.main(["run", "--platform", "cpu", "--profile", "none", "--output", str(out),
                       "--", "-k", "test_registry"])
        err = capsys.readouterr().err
        assert rc == 2 and f"--output={out}: another pjrt-conformance process" in err, err
        assert len(err.strip().splitlines()) == 1 and "give another --output" in err
        assert out.is_dir() and not any(out.iterdir())   # the holder's folder is untouched
    finally:
        kid.communicate(timeout=_HANG_S)


def test_two_default_outputs_of_the_same_second_differ_and_are_made_exclusively(tmp_path):
    """(c) Two runs without --output in the same second shared reports/cpu/<stamp>/."""
    first, second = cli.default_output("cpu"), cli.default_output("cpu")
    assert first != second and first.parent == second.parent == Path("reports") / "cpu"
    assert len(first.name) == len("20261127T015414.123456Z") and first.name.endswith("Z")
    out = tmp_path / "reports" / "cpu" / first.name
    assert validate.output_dir(out, fresh=True) == out
    with pytest.raises(validate.OptionError, match="another run made this directory"):
        validate.output_dir(out, fresh=True)              # never shared, even in one process
    validate.release(out)


def test_a_claim_is_given_back_and_leaves_no_folder_it_made(tmp_path):
    out = tmp_path / "a" / "b" / "out"
    validate.output_dir(out)
    assert validate.holds(out)
    validate.release(out, remove_made=True)
    assert not validate.holds(out) and not any(tmp_path.iterdir())


# platform names ---------------------------------------------------------------------------

@pytest.mark.parametrize("platform", ["../../x", "../../../tmp/x", "a/b", "..", "", "-x",
                                      "cpu x", "x" * 65])
def test_a_platform_that_is_a_path_is_refused_before_anything_is_made(tmp_path, monkeypatch,
                                                                      capsys, platform):
    work = tmp_path / "w" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    rc = cli.main(["run", f"--platform={platform}", "--profile", "none"])
    err = capsys.readouterr().err
    assert rc == 2 and "--platform=" in err and "no path" in err, err
    assert _tree(tmp_path) == ["w", "w/work"]               # nothing made, in or outside


def test_an_unknown_platform_leaves_no_empty_folder_behind(tmp_path):
    """The run made reports/bogus/<stamp>/ and removed only <stamp>/."""
    proc = _cli("run", "--platform", "bogus", "--profile", "none", "--", "-k",
                "test_registry", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and "--platform=bogus" in proc.stdout + proc.stderr, \
        proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _tree(tmp_path) == []


# writing into a bundle --------------------------------------------------------------------

@pytest.fixture
def logged_bundle(tmp_path):
    """A bundle with a results log (durations reads it)."""
    path = tmp_path / "b"
    path.mkdir()
    done = crafted(tmp_path, "b")
    from conformance.certification.bundle import reportfile
    doc = reportfile.load(done)
    (path / results_log.LOG_FILE).write_text("".join(   # a report of each result (verify)
        json.dumps({"$report_type": "TestReport", "nodeid": r["nodeid"],
                    "location": [r["nodeid"].split("::")[0], 0, "t"], "keywords": {},
                    "outcome": "passed", "longrepr": None, "when": "call",
                    "user_properties": [], "sections": [], "duration": 0.5}) + "\n"
        for r in doc["results"]))
    bundle_files.write(doc, done, extra=(results_log.LOG_FILE,))
    assert bundle_files.verify(done).problems == []
    return done


@pytest.mark.parametrize("args", [
    ["dashboard", "--asv-results", "{b}", "--out", "{b}"],
    ["dashboard", "--asv-results", "{b}", "--out", "{b}/site"],
    ["scoreboard", "{root}", "--html", "{b}/report.html"],
    ["scoreboard", "{root}", "--markdown", "{b}/report.md"],
    ["durations", "{b}", "--output", "{b}/results.jsonl.xz"],
    ["durations", "{b}", "--output", "{b}/report.json"],
    ["run", "--platform", "cpu", "--profile", "none", "--output", "{b}/sub", "--", "-k",
     "test_registry"],
])
def test_no_command_writes_into_a_bundle_it_did_not_make(logged_bundle, capsys, args):
    """(d) dashboard --out B, scoreboard --html B/report.html, durations B --output
    B/results.jsonl.xz overwrote a bundle's files with exit 0."""
    before = _manifest_bytes(logged_bundle)
    given = [a.format(b=logged_bundle, root=logged_bundle.parent) for a in args]
    rc = cli.main(given)
    err = capsys.readouterr().err
    assert rc == 2 and "is inside the report bundle" in err, err
    assert _manifest_bytes(logged_bundle) == before and bundle_files.verify(logged_bundle).valid
    assert _tree(logged_bundle) == sorted(before)


def test_outputs_beside_a_bundle_are_still_written(logged_bundle, tmp_path, capsys):
    page = tmp_path / "board.html"
    assert cli.main(["scoreboard", str(tmp_path), "--html", str(page)]) == 0
    assert page.is_file()
    durations = tmp_path / "durations.json"
    assert cli.main(["durations", str(logged_bundle), "--output", str(durations)]) == 0
    assert durations.is_file()


# verify: entries the manifest does not list, and dates ------------------------------------

@pytest.mark.parametrize("how", ["unlisted fifo", "fifo for report.md", "fifo for report.json",
                                 "link to a fifo", "unlisted link"])
def test_verify_flags_a_fifo_or_link_without_opening_it(tmp_path, how):
    path = crafted(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    if how == "unlisted fifo":
        os.mkfifo(path / "extra")
        fragments = ["extra is a FIFO (named pipe)", "extra is not listed in MANIFEST.sha256"]
    elif how.startswith("fifo for "):
        name = how.removeprefix("fifo for ")
        (path / name).unlink()
        os.mkfifo(path / name)
        fragments = [f"{name} is a FIFO (named pipe); a bundle holds regular files only"]
    elif how == "link to a fifo":
        (path / "report.md").unlink()
        (path / "report.md").symlink_to(fifo)
        fragments = ["report.md is a symbolic link"]
    else:
        (path / "notes").symlink_to(tmp_path)
        fragments = ["notes is a symbolic link", "notes is not listed in MANIFEST.sha256"]
    proc = _cli("verify", path)      # first in a child: a hang fails, never blocks pytest
    assert proc.returncode == 3 and "NOT INTACT" in proc.stdout, proc.stdout + proc.stderr
    assert all(f in proc.stdout for f in fragments), proc.stdout
    problems = bundle_files.verify(path).problems
    assert all(any(f in p for p in problems) for f in fragments), problems


def test_diff_and_scoreboard_never_block_on_a_fifo(tmp_path):
    reports = tmp_path / "reports"
    good = crafted(reports / "cpu", "good")
    bad = crafted(reports / "cpu", "bad")
    (bad / "report.json").unlink()
    os.mkfifo(bad / "report.json")
    proc = _cli("diff", good, bad)
    assert proc.returncode == 3 and ("not a regular file" in proc.stderr
                                     or "is a FIFO" in proc.stderr), proc.stderr
    proc = _cli("scoreboard", reports)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert "FIFO" in proc.stderr, proc.stderr


def _dated(root, name, started):
    path = crafted(root, name)
    rewrite(path, lambda doc: doc.update(started_utc=started), render=True)
    return path


def test_a_bundle_dated_in_the_future_is_not_intact_and_never_the_newest(tmp_path):
    reports = tmp_path / "reports"
    old = _dated(reports / "cpu", "old", "2026-11-22T00:00:00+00:00")
    future = _dated(reports / "cpu", "future", "2099-01-01T00:00:00+00:00")
    assert bundle_files.verify(old).problems == []
    problems = bundle_files.verify(future).problems
    assert problems and "dated in the future: started_utc 2099-01-01" in problems[0], problems
    passed_over = []
    rows = scoreboard.collect(reports, passed_over)
    assert [r.source for r in rows] == [str(old)] and not rows[0].problem
    assert [r.source for r in passed_over] == [str(future)]
    proc = _cli("scoreboard", reports)
    assert proc.returncode == 3 and f"{future} passed over" in proc.stderr, proc.stderr
    assert "2026-11-22 00:00" in proc.stdout and "2099" not in proc.stdout


def test_a_small_clock_skew_is_allowed():
    import datetime

    now = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.timezone.utc)
    doc = {"started_utc": "2026-11-27T12:30:00+00:00", "duration_s": 600.0}
    assert bundle_files._check_dates(doc, now) == []
    doc["started_utc"] = "2026-11-27T12:55:00+00:00"           # ends 13:05: over 1 h ahead
    assert bundle_files._check_dates(doc, now)
    doc.update(started_utc="yesterday")
    assert "is not a time" in bundle_files._check_dates(doc, now)[0]
