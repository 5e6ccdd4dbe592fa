"""``pjrt-conformance catalog bisect``: fake release environments (a wrapper interpreter
that reports a jax/jaxlib version and runs the real one with FAKE_RELEASE set) and a fake
reproduction that reproduces on some releases and not others, crashes or hangs; the
measured bounds it writes give the catalog's range, and a defect fixed in release R is
not a (strict) known failure on R."""

import dataclasses
import re
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import cli
from conformance.certification.catalog import catalog_bisect
from conformance.certification.catalog import defect_catalog
from conformance.certification.catalog import known_failures
from conformance.session import recording

ROOT = Path(__file__).resolve().parents[1]

#: The fake reproduction: its behaviour on each release comes from argv[1] ("P,P,.,."
#: over the releases 0.1.0, 0.2.0, ...): P exit 3, . exit 0, S SIGSEGV, T sleep, E raise.
REPRO = r'''
import os, signal, sys, time
releases = ["0.1.0", "0.2.0", "0.3.0", "0.4.0"]
what = sys.argv[1].split(",")[releases.index(os.environ["FAKE_RELEASE"])]
if what == "P":
    sys.exit(3)
if what == "S":
    os.kill(os.getpid(), signal.SIGSEGV)
if what == "T":
    time.sleep(60)
if what == "E":
    raise RuntimeError("the reproduction is broken")
sys.exit(0)
'''

CATALOG = """
# a comment that the bisect keeps
component = "fake component"

[[defect]]
id = "{id}"
tests = ["conformance/test_lifecycle.py::test_use_after_delete_raises[is_ready]"]
affects = ["jaxlib>=0.1", "somedist>=1"]
attribution = "framework"
layer = "framework"
evidence = "a fake entry"
upstream = "not reported yet"
summary = "a fake defect for the bisect self-test"
expected = {expected}
repro = "docs/repro/fake.py"
repro_args = ["{pattern}"]
"""


def _env(tmp_path: Path, release: str) -> str:
    """A fake release environment: ``bin/python`` answers the version probe with
    ``release`` and otherwise runs this interpreter with FAKE_RELEASE=release."""
    python = tmp_path / "venvs" / f"jax-{release}" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\ncase "$2" in */release_probe.py) echo "{release} {release} '
                      f'3.99.0"; exit 0;; esac\nFAKE_RELEASE={release} exec "{sys.executable}" '
                      f'"$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return str(python)


def _repo(tmp_path: Path, pattern: str, expected: str = '["fail_wrong_result"]',
          id: str = "fake-defect") -> Path:
    (tmp_path / "docs" / "repro").mkdir(parents=True)
    (tmp_path / "docs" / "repro" / "fake.py").write_text(REPRO)
    cat = tmp_path / "conformance" / "defects" / "fake.toml"
    cat.parent.mkdir(parents=True)
    cat.write_text(CATALOG.format(id=id, expected=expected, pattern=pattern))
    return cat


def _bisect(tmp_path, cat, *extra, releases=("0.1.0", "0.2.0", "0.3.0", "0.4.0")):
    envs = [a for r in releases for a in ("--env", f"{r}={_env(tmp_path, r)}")]
    return cli.main(["catalog", "bisect", "--catalog", str(cat), "--date", "2026-01-02",
                     "--timeout", "20", *envs, *extra])


def test_bounds_are_measured_and_replace_the_guessed_range(tmp_path, capsys):
    cat = _repo(tmp_path, "P,P,.,.")
    assert _bisect(tmp_path, cat) == 0
    out = capsys.readouterr().out
    assert "FIXED fake-defect: affected from 0.1.0, fixed in 0.3.0" in out
    text = cat.read_text()
    assert "# a comment that the bisect keeps" in text
    (d,) = defect_catalog.load_file(cat)
    m = d.measured
    assert (m.first_affected, m.first_fixed, m.newest, m.date) == ("0.1.0", "0.3.0", "0.4.0",
                                                                   "2026-01-02")
    assert [(r["release"], r["outcome"], r["python"]) for r in m.runs] == [
        ("0.1.0", "present", "3.99.0"), ("0.2.0", "present", "3.99.0"),
        ("0.3.0", "absent", "3.99.0"), ("0.4.0", "absent", "3.99.0")]
    # the guess on jaxlib is gone, the condition on another distribution stays
    assert d.affects == ("somedist>=1",)
    assert d.requirement == "somedist>=1 and jaxlib<0.3.0"


def test_a_relative_interpreter_path_is_run_from_the_temporary_directory(tmp_path, capsys,
                                                                         monkeypatch):
    """``--env 0.1.0=venvs/jax-0.1.0/bin/python`` (relative to the current directory): each
    run's working directory is a temporary one, so the path was not found there and the
    command died with a FileNotFoundError traceback."""
    cat = _repo(tmp_path, "P,.")
    monkeypatch.chdir(tmp_path)
    envs = [a for r in ("0.1.0", "0.2.0")
            for a in ("--env", f"{r}={Path(_env(tmp_path, r)).relative_to(tmp_path)}")]
    assert cli.main(["catalog", "bisect", "--catalog", str(cat), "--date", "2026-01-02",
                     "--timeout", "20", *envs]) == 0
    assert "affected from 0.1.0, fixed in 0.2.0" in capsys.readouterr().out


def test_first_affected_after_the_oldest_release_is_a_lower_bound(tmp_path, capsys):
    cat = _repo(tmp_path, ".,P,P,P")
    assert _bisect(tmp_path, cat) == 0
    assert "present fake-defect: affected from 0.2.0 to the newest tested 0.4.0" in \
        capsys.readouterr().out
    (d,) = defect_catalog.load_file(cat)
    assert d.measured.first_fixed is None
    assert d.requirement == "somedist>=1 and jaxlib>=0.2.0"


def test_a_crash_is_present_only_for_a_crash_defect(tmp_path, capsys):
    cat = _repo(tmp_path, "S,S,.,.", expected='["crash"]')
    assert _bisect(tmp_path, cat) == 0
    (d,) = defect_catalog.load_file(cat)
    assert d.measured.runs[0]["outcome"] == "present"
    assert d.measured.runs[0]["detail"] == "killed by SIGSEGV"
    assert d.measured.first_fixed == "0.3.0"

    other = tmp_path / "other"
    other.mkdir()
    cat = _repo(other, "S,P,.,.")  # a wrong-result defect whose reproduction crashes
    assert _bisect(other, cat) == 1
    out = capsys.readouterr().out
    assert "ERROR fake-defect on 0.1.0: killed by SIGSEGV" in out
    (d,) = defect_catalog.load_file(cat)
    assert (d.measured.runs[0]["outcome"], d.measured.first_affected) == ("error", "0.2.0")


def test_a_timeout_is_present_only_for_a_timeout_defect(tmp_path, capsys):
    cat = _repo(tmp_path, "T,.", expected='["timeout"]')
    assert _bisect(tmp_path, cat, "--timeout", "2", releases=("0.1.0", "0.2.0")) == 0
    (d,) = defect_catalog.load_file(cat)
    assert [r["outcome"] for r in d.measured.runs] == ["present", "absent"]
    other = tmp_path / "other"
    other.mkdir()
    cat = _repo(other, "T,P")
    assert _bisect(other, cat, "--timeout", "2", releases=("0.1.0", "0.2.0")) == 1
    assert "ERROR fake-defect on 0.1.0: timed out" in capsys.readouterr().out


def test_a_broken_reproduction_is_an_error_not_a_present_defect(tmp_path, capsys):
    cat = _repo(tmp_path, "E,E,E,E")
    assert _bisect(tmp_path, cat) == 1
    out = capsys.readouterr().out
    assert "NOT MEASURED fake-defect" in out
    assert re.search(r"ERROR fake-defect on 0\.1\.0: exit 1: RuntimeError", out)
    (d,) = defect_catalog.load_file(cat)
    assert d.measured.first_affected is None
    assert d.requirement == "jaxlib>=0.1 and somedist>=1"  # unmeasured: affects stays


def test_matrix_directory_is_discovered(tmp_path, capsys):
    cat = _repo(tmp_path, "P,.")
    for r in ("0.2.0", "0.1.0"):
        _env(tmp_path, r)
    assert cli.main(["catalog", "bisect", "--catalog", str(cat), "--matrix",
                     str(tmp_path / "venvs"), "--no-write"]) == 0
    assert "2 releases: 0.1.0 (py 3.99.0), 0.2.0 (py 3.99.0)" in capsys.readouterr().out
    assert defect_catalog.load_file(cat)[0].measured is None  # --no-write


@pytest.mark.parametrize("args, fragment", [
    ([], "no release environment: give --env"),
    (["--env", "/nonexistent/python"], "--env /nonexistent/python: /nonexistent/python is "
                                       "not an executable file"),
    (["--env", "=/x"], "--env '=/x': expected [RELEASE=]PYTHON"),
    (["--env", "0.9.9={py01}"], "the interpreter has jaxlib 0.1.0, not 0.9.9"),
    (["--env", "{py01}", "--env", "{py01}"], "release 0.1.0 is already given"),
    (["--env", "{plain}"], "has no jax/jaxlib installed"),
    (["--matrix", "/nonexistent"], "--matrix /nonexistent: no such directory"),
    (["--env", "{py01}", "--only", "nope"], "--only: no such defect id ['nope']"),
    (["--env", "{py01}", "--timeout", "0"], "--timeout 0.0: must be > 0"),
    (["--env", "{py01}", "--date", "yesterday"], "--date 'yesterday': expected YYYY-MM-DD"),
    (["--env", "{py01}", "--root", "/nonexistent"], "--root /nonexistent: reproduction "
                                                    "script(s) not found: fake-defect"),
])
def test_bad_arguments_name_the_option(tmp_path, capsys, args, fragment):
    cat = _repo(tmp_path, "P")
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\nexit 1\n")
    plain.chmod(0o755)
    subs = {"py01": _env(tmp_path, "0.1.0"), "plain": str(plain)}
    args = [a.format(**subs) for a in args]
    assert cli.main(["catalog", "bisect", "--catalog", str(cat), *args]) == 2
    err = capsys.readouterr().err
    assert fragment in err, err


def test_bad_catalog_option(tmp_path, capsys):
    assert cli.main(["catalog", "bisect", "--catalog", str(tmp_path / "none.toml"),
                     "--env", "x"]) == 2
    assert f"--catalog {tmp_path / 'none.toml'}: no such file" in capsys.readouterr().err


def _measured(first_fixed: str) -> defect_catalog.Defect:
    runs = ({"release": "0.10.0", "outcome": "present"},
            {"release": first_fixed, "outcome": "absent"})
    return defect_catalog.Defect(
        id="d", tests=("conformance/test_x.py::test_y",), affects=("jaxlib>=0.1",),
        attribution="plugin", upstream="not reported yet", summary="a fixed defect here",
        expected=("fail_wrong_result",), repro="docs/repro/x.py",
        measured=defect_catalog.Measured.from_table(
            {"date": "2026-01-02", "package": "jaxlib", "first_affected": "0.10.0",
             "first_fixed": first_fixed, "newest": first_fixed, "runs": runs}))


class _Item:
    def __init__(self, nodeid):
        self.nodeid, self.markers = nodeid, []

    def add_marker(self, marker):
        self.markers.append(marker)


@pytest.mark.parametrize("installed, strict_xfail", [("0.11.2", True), ("0.12.0", False),
                                                     ("0.12.0.1", False)])
def test_a_defect_fixed_in_a_release_is_no_strict_xfail_there(monkeypatch, installed,
                                                             strict_xfail):
    monkeypatch.setitem(known_failures._VERSIONS, "jaxlib", installed)
    d = _measured("0.12.0")
    entries = defect_catalog.entries([d])
    item = _Item("conformance/test_x.py::test_y")
    known_failures.apply([item], entries, "cpu")
    assert [m.kwargs.get("strict") for m in item.markers] == ([True] if strict_xfail else [])
    fixed = defect_catalog.fixed_on_installed([d])
    assert fixed == ([] if strict_xfail else [d])
    lines = recording.fixed_lines(entries, "cpu")
    if strict_xfail:
        assert lines == []
    else:  # reported as fixed, not silently unmatched
        assert lines == ["catalog defect d is fixed in jaxlib 0.12.0 (measured 2026-01-02): "
                         "its tests are expected to pass: conformance/test_x.py::test_y"]
        known_failures.match(entries, ["conformance/test_x.py::test_y"], "cpu")
        assert known_failures.unmatched(entries, "cpu") == []


def test_every_shipped_entry_has_a_standalone_reproduction():
    for d in defect_catalog.load():
        script = ROOT / d.repro
        assert script.is_file(), f"{d.id}: {d.repro} missing"
        text = script.read_text()
        assert not re.search(r"^\s*(from|import)\s+(conformance|runtime|tests)\b", text,
                             re.MULTILINE), f"{d.repro} imports this project"
        assert "3" in text and "sys.exit" in text, f"{d.repro}: no documented exit status"


def test_classify():
    c = catalog_bisect.classify
    assert c(0, ("crash",), False) == ("absent", "")
    assert c(3, ("fail_wrong_result",), False) == ("present", "")
    assert c(4, ("crash",), False, "no GPU\n")[0] == "untestable"
    assert c(-6, ("crash",), False) == ("present", "killed by SIGABRT")
    assert c(-6, ("fail_error",), False) == ("error", "killed by SIGABRT")
    assert c(None, ("crash", "timeout"), True) == ("present", "timed out")
    assert c(1, ("crash",), False, "Traceback\nImportError: x") == ("error",
                                                                   "exit 1: ImportError: x")


def test_cli_usage_mentions_the_command():
    assert "catalog bisect" in textwrap.dedent(cli.__doc__)


@pytest.mark.parametrize("strict", [True, False])
def test_a_defect_reached_by_some_draws_only_is_no_strict_xfail(strict):
    d = dataclasses.replace(_measured("99.0"), strict=strict)
    item = _Item("conformance/test_x.py::test_y")
    known_failures.apply([item], defect_catalog.entries([d]), "cpu")
    assert [m.kwargs["strict"] for m in item.markers] == [strict]
    shipped = {x.id: x for x in defect_catalog.load()}
    assert shipped["xla-cpu-f16-batch-norm-training-negative-variance"].strict is False
