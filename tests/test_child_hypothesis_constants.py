"""Child pytests of the self-tests share Hypothesis' cache of the suite's constants.

Hypothesis (6.13x and later) parses the source of every local module it sees to draw
its literals, once per process, and caches what it found in ``.hypothesis/constants``.
A child pytest starts in a fresh scratch directory, so without a shared cache each one
parsed the suite's ~140 modules again (docs/ci.md). :func:`run_child` points the child's
``.hypothesis/constants`` at one per-user directory; the example database stays the
child's own.
"""

import os

from tests.mutants import runner

#: A local module that is not a test file (Hypothesis skips those) with a literal.
HELPER = "MAGIC = 918273645\n"
TEST = ("from hypothesis import given, strategies as st\n"
        "import magic_helper\n"
        "@given(st.integers())\n"
        "def test_one(x):\n"
        "    assert isinstance(x, int)\n")


def _child(home):
    home.mkdir()
    (home / "test_one.py").write_text(TEST)
    (home / "magic_helper.py").write_text(HELPER)
    result = runner.run_child(["-q", "-p", "no:cacheprovider", "test_one.py"],
                                     home=home, timeout=300, conftest=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_children_share_the_constants_cache_but_not_the_database(tmp_path):
    shared = runner.constants_cache()
    assert shared is not None and shared.is_dir()
    _child(tmp_path / "a")
    _child(tmp_path / "b")
    for name in ("a", "b"):
        link = tmp_path / name / ".hypothesis" / "constants"
        assert link.is_symlink() and link.resolve() == shared.resolve(), link
        assert not (tmp_path / name / ".hypothesis").is_symlink()
    cached = [p for p in shared.iterdir() if "918273645" in p.read_text(errors="replace")]
    assert cached, "the child's literal never reached the shared cache"


def test_an_explicit_storage_directory_is_left_alone(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "test_one.py").write_text(TEST)
    (home / "magic_helper.py").write_text(HELPER)
    store = tmp_path / "store"
    result = runner.run_child(["-q", "-p", "no:cacheprovider", "test_one.py"],
                                     home=home, timeout=300, conftest=False,
                                     env={"HYPOTHESIS_STORAGE_DIRECTORY": str(store)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (home / ".hypothesis").exists()
    assert not (store / "constants").is_symlink()


def test_a_cache_owned_by_someone_else_is_not_used(tmp_path, monkeypatch):
    """A predictable name in the shared temporary directory: a folder there that another
    user made (here: a symlink planted in its place) is never followed."""
    monkeypatch.setattr(runner.tempfile, "gettempdir", lambda: str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / f"pjrt-conformance-selftests-{os.getuid()}")
    assert runner.constants_cache() is None
    storage = tmp_path / "child" / ".hypothesis"
    storage.parent.mkdir()
    runner.share_hypothesis_constants(storage)
    assert not (storage / "constants").exists()
    assert not list(elsewhere.iterdir())
