"""The project's ``noxfile.py`` loaded as a module, once per process (loading it again
registers its sessions twice, which nox warns about). Skips the calling test when nox is
not installed."""

import functools
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _load():
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load():
    """The noxfile module (skip the test without nox)."""
    pytest.importorskip("nox")
    return _load()
