"""The release matrix (``noxfile.py``) covers every jax release the dependency range admits."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests import noxfile_module

ROOT = Path(__file__).resolve().parent.parent


def _noxfile():
    return noxfile_module.load()


def _requirement(name: str) -> Requirement:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return next(Requirement(d) for d in deps if Requirement(d).name == name)


def test_every_matrix_release_is_admitted_by_the_dependency_range():
    nf = _noxfile()
    for name in ("jax", "jaxlib"):
        spec = _requirement(name).specifier
        outside = [r for r in nf.RELEASES if not spec.contains(Version(r))]
        assert not outside, f"{name}{spec} excludes matrix releases {outside}"


def test_matrix_reaches_the_newest_admitted_minor_and_the_oldest_supported():
    nf = _noxfile()
    versions = sorted(Version(r) for r in nf.RELEASES)
    lower = [s for s in _requirement("jaxlib").specifier if s.operator == ">="]
    assert lower, "jaxlib has no lower bound"
    # the oldest admitted release (0.8.0 for >=0.8) is in the matrix
    assert versions[0] == Version(lower[0].version) == Version("0.8.0")
    upper = [s for s in _requirement("jaxlib").specifier if s.operator == "<"]
    assert upper, "jaxlib has no upper bound"
    bound = Version(upper[0].version)
    # the newest minor below the bound is in the matrix (0.12.x for <0.13)
    assert versions[-1].release[:2] == (bound.release[0], bound.release[1] - 1)


def test_matrix_pairs_are_well_formed():
    nf = _noxfile()
    assert len(nf.PAIRS) == len(set(nf.PAIRS)) == len(nf.IDS) == len(set(nf.IDS))
    for py, jax in nf.PAIRS:
        assert py in ("3.11", "3.12", "3.13")
        if Version(jax) >= Version("0.11"):
            assert py != "3.11", f"jaxlib {jax} has no Python 3.11 wheels"
    # the running interpreter's release row is covered
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert any(py == here for py, _ in nf.PAIRS) or here not in ("3.11", "3.12", "3.13")
