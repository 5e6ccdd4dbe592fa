"""Paths given on the command line: checked for length before any file call sees them.

A path with a component longer than the file system's ``NAME_MAX`` (255 bytes on Linux)
or longer than ``PATH_MAX`` (4096 bytes) makes ``open``, ``stat`` and even
``Path.exists()`` raise ``OSError(ENAMETOOLONG)``, which ended commands in tracebacks
with exits that meant something else (``verify`` 1 "intact", ``diff`` 1 "regressions").
:func:`check` raises :class:`~conformance.option_error.OptionError` instead (``run``
prints it and exits 2); :func:`argument` is the same check as an argparse ``type`` (a
usage error, exit 2). Standard library only (and :mod:`conformance.option_error`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from conformance.option_error import OptionError, shown

#: Bytes of one path component (Linux ``NAME_MAX``).
NAME_MAX = 255
#: Bytes of a whole path (Linux ``PATH_MAX``, less its terminating NUL).
PATH_MAX = 4095


def problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot name a file on this system (None: it can): a NUL byte, a
    component over :data:`NAME_MAX` bytes or a path over :data:`PATH_MAX` bytes."""
    text = os.fspath(path)
    if "\0" in text:
        return "holds a NUL character"
    raw = os.fsencode(text)
    if len(raw) > PATH_MAX:
        return f"is {len(raw):,} bytes long; paths are at most {PATH_MAX:,}"
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return (f"has a name of {len(longest):,} bytes; a file or folder name is at most "
                f"{NAME_MAX}")
    return None


def check(path: str | os.PathLike[str] | None, what: str) -> None:
    """Raise OptionError ``what=PATH: why; give a shorter path`` when ``path`` cannot
    name a file (:func:`problem`); None passes. The path is quoted to 200 characters."""
    if path is None:
        return
    why = problem(path)
    if why is not None:
        raise OptionError(f"{what}={shown(os.fspath(path))}: the path {why}; give a "
                          "shorter path")


def argument(text: str) -> Path:
    """An argparse ``type`` for a path argument: the Path, or ArgumentTypeError (argparse
    prints it as a usage error and exits 2) when :func:`problem` finds one."""
    why = problem(text)
    if why is not None:
        raise argparse.ArgumentTypeError(f"{shown(text)}: the path {why}; give a shorter path")
    return Path(text)
