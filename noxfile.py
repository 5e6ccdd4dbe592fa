"""The release matrix: the main job and the self-tests on every jax release, as one command.

    nox -s release                      # every (Python, jax) pair below: main job + self-tests
    nox -s "release(0.12.0.1-py3.12)" -- main       # one pair, the main job only
    nox -s "release(0.10.2-py3.11)" -- tests        # one pair, the self-tests only
    nox -s "release(0.8.0-py3.11)" -- main          # the oldest supported release
    nox -s "release(0.10.2-py3.11)" -- nightly      # one pair, the slow self-tests only
    nox -s nightly                      # the slow self-tests (pytest -m slow) on every pair
    nox -s "release(0.10.2-py3.11)" -- main -k test_registry   # extra pytest arguments
    nox -s mutation                     # the mutation score on every release (slow)
    nox -s dashboard                    # the offline dashboard of it all, in matrix/dashboard/

Each session installs ``jax==R jaxlib==R`` and this project (``.[test]``) into its own
virtualenv under ``.nox/``. The main job writes its bundle to ``matrix/<R>-py<P>/``
(not tracked; copy a bundle under ``reports/cpu/`` to commit it). Python interpreters
are found on PATH (``python3.12``); with pyenv, the versions pyenv has installed are
added to PATH here, so ``pyenv install 3.12`` is enough.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent

# jax release -> the Pythons it is tested on (jaxlib 0.11 and later need Python >= 3.12;
# measured with `pip index versions jaxlib` on Python 3.11, 3.12 and 3.13, 2026-11-24).
# 0.8.0: the oldest supported (pyproject's jax>=0.8), what vendors still ship; its main job
# was run on Python 3.11 (2026-11-27: `pjrt-conformance run --platform cpu -n 2` in a
# jax==jaxlib==0.8.0 venv, bundle under reports/cpu/). 0.8.1-0.9.2 are admitted, not run.
RELEASES: dict[str, tuple[str, ...]] = {
    "0.8.0": ("3.11",),
    "0.10.0": ("3.11",),
    "0.10.1": ("3.11",),
    "0.10.2": ("3.11", "3.12", "3.13"),
    "0.11.0": ("3.12",),
    "0.11.1": ("3.12",),
    "0.11.2": ("3.12", "3.13"),
    "0.12.0": ("3.12",),
    "0.12.0.1": ("3.12", "3.13"),
}
PAIRS = [(py, jax) for jax, pys in RELEASES.items() for py in pys]
IDS = [f"{jax}-py{py}" for py, jax in PAIRS]

nox.options.sessions = ["release"]
nox.options.error_on_missing_interpreters = True


def _pyenv_on_path() -> None:
    """Put pyenv's installed versions (``~/.pyenv/versions/*/bin``) on PATH when
    ``pythonX.Y`` is not found there, so nox finds every interpreter of RELEASES."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if not root.is_dir():
        return
    extra = [str(d / "bin") for d in sorted(root.iterdir()) if (d / "bin" / "python").exists()]
    for py in sorted({p for p, _ in PAIRS}):
        found_on_path = shutil.which(f"python{py}")
        if found_on_path is None or "shims" in found_on_path:  # a pyenv shim may refuse
            found = [b for b in extra if Path(b, f"python{py}").exists()]
            if found:
                os.environ["PATH"] = found[-1] + os.pathsep + os.environ["PATH"]


_pyenv_on_path()


def _install(session: nox.Session, jax: str) -> None:
    session.install(f"jax=={jax}", f"jaxlib=={jax}", "-e", f"{ROOT}[test]")
    session.run("python", "-c", "import jax, jaxlib; print('jax', jax.__version__, "
                "'jaxlib', jaxlib.__version__)")


@nox.session
@nox.parametrize(("python", "jax"), PAIRS, ids=IDS)
def release(session: nox.Session, jax: str) -> None:
    """The main job (``-- main``), the self-tests (``-- tests``), the slow self-tests
    (``-- nightly``, as in :func:`nightly`), or all three (default) on
    ``jax==jaxlib==jax``; other posargs go to pytest. The main job's exit 1 (not
    certified) is a result, not an error; its bundle must pass ``verify``."""
    parts = ("main", "tests", "nightly")
    what = {a for a in session.posargs if a in parts} or set(parts)
    extra = [a for a in session.posargs if a not in parts]
    _install(session, jax)
    if "main" in what:
        out = ROOT / "matrix" / f"{jax}-py{session.python}"
        session.run("pjrt-conformance", "run", "--platform", "cpu", "-n", "auto",
                    "--output", str(out), "--force", *(["--", *extra] if extra else []),
                    success_codes=[0, 1])
        session.run("pjrt-conformance", "verify", str(out), success_codes=[0, 1])
    if "tests" in what:
        session.run("pytest", "-n", "auto", "-p", "no:cacheprovider", *extra, chdir=str(ROOT))
    if "nightly" in what:
        _slow_tests(session, extra)


def _slow_tests(session: nox.Session, extra: list[str]) -> None:
    # no xdist: the slow tests are few and long; the mutant catalog runs 2 children at a time
    session.run("pytest", "-m", "slow", "-p", "no:cacheprovider", *extra, chdir=str(ROOT))


@nox.session
@nox.parametrize(("python", "jax"), PAIRS, ids=IDS)
def nightly(session: nox.Session, jax: str) -> None:
    """The self-tests the default ``pytest`` deselects (``-m slow``: the 4-rank mpirun,
    the kill scenarios, the whole mutant catalog; docs/ci.md) on one release; posargs
    go to pytest."""
    _install(session, jax)
    _slow_tests(session, list(session.posargs))


@nox.session
@nox.parametrize(("python", "jax"), PAIRS, ids=IDS)
def mutation(session: nox.Session, jax: str) -> None:
    """The mutation score (``python -m tests.mutants``) on one release."""
    _install(session, jax)
    session.run("python", "-m", "tests.mutants", *session.posargs, chdir=str(ROOT))


@nox.session(python=False)
def dashboard(session: nox.Session) -> None:
    """The offline dashboard of every release, into matrix/dashboard/.

    ``pjrt-conformance dashboard`` of the environment nox runs in: every benchmark and
    conformance area per jax release, from the asv results, the committed bundles
    (``reports/``) and the matrix's own (``matrix/``, those not committed yet)."""
    session.run("pjrt-conformance", "dashboard", "--out", str(ROOT / "matrix" / "dashboard"),
                *session.posargs, success_codes=[0, 3])
