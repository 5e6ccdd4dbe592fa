"""A bundle directory seen without following a link or opening anything but a regular file.

A bundle holds regular files and directories only. A FIFO, socket or device node in it
(or a symbolic link, whose target may be one, or lie outside the bundle) must never be
opened: reading a FIFO blocks for ever, a device may never end. :func:`walk` lists every
entry by ``lstat``; :func:`odd_entries` names each one that is not a regular file or a
directory (``verify`` reports them and reads nothing more); :func:`read_bytes` opens a
file only after ``stat`` says it is regular, with ``O_NONBLOCK``, and checks again with
``fstat`` what it opened.

:func:`enclosing_bundle` finds the bundle a path lies in (a directory holding a bundle
manifest, or the results log and ``run.json`` of a run), so that the commands writing
pages and files (``dashboard --out``, ``scoreboard --html/--markdown``, ``durations
--output``, ``run``/``merge --output``) refuse to write into a bundle they did not make
(:func:`refuse_inside_bundle`).

Standard library only: any layer may use it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conformance.option_error import OptionError

#: The manifest that makes a directory a bundle (``signing.MANIFEST``).
MANIFEST = "MANIFEST.sha256"
#: A run's files before its bundle is written (``results_log.RUN_FILE``, ``runlog.LOG``
#: and ``runlog.PACKED``): a directory holding ``run.json`` and a results log is a run's.
RUN_FILE, RUN_LOGS = "run.json", ("results.jsonl", "results.jsonl.xz")

_KINDS = ((stat.S_ISDIR, "directory"), (stat.S_ISREG, "regular file"),
          (stat.S_ISLNK, "symbolic link"), (stat.S_ISFIFO, "FIFO (named pipe)"),
          (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"))


def kind(mode: int) -> str:
    """The kind of file of an ``st_mode``: "regular file", "directory", "symbolic link",
    "FIFO (named pipe)", "socket", "character device", "block device" or "special file"."""
    return next((name for test, name in _KINDS if test(mode)), "special file")


def walk(root: Path | str) -> tuple[list[tuple[str, str]], list[str]]:
    """(entries, errors) of the directory ``root``: every entry below it as (path relative
    to ``root`` in POSIX form, :func:`kind`), sorted; real directories are descended into,
    a symbolic link never is. ``errors``: one line per directory that could not be listed."""
    found: list[tuple[str, str]] = []
    errors: list[str] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                listed = [(e.name, e.stat(follow_symlinks=False).st_mode) for e in it]
        except OSError as err:
            errors.append(f"{rel or '.'} cannot be listed ({err.strerror or err})")
            continue
        for name, mode in listed:
            sub = f"{rel}/{name}" if rel else name
            found.append((sub, kind(mode)))
            if stat.S_ISDIR(mode):
                pending.append(sub)
    return sorted(found), errors


def odd_entries(root: Path | str) -> list[str]:
    """One problem per entry below the directory ``root`` that is neither a regular file
    nor a directory (a symbolic link, FIFO, socket, device node), and per directory that
    cannot be listed; nothing is opened."""
    found, errors = walk(root)
    return errors + [f"{rel} is a {what}; a bundle holds regular files only"
                     for rel, what in found if what not in ("regular file", "directory")]


def read_bytes(path: Path | str) -> bytes:
    """The bytes of the regular file ``path`` (a link to one is followed). Raises OSError,
    without opening it, when ``path`` is a FIFO, socket, device or directory: never blocks
    on a pipe nor reads a device."""
    what = kind(os.stat(path).st_mode)
    if what != "regular file":
        raise OSError(f"{path} is a {what}, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        what = kind(os.fstat(f.fileno()).st_mode)   # swapped since the stat: refuse it too
        if what != "regular file":
            raise OSError(f"{path} is a {what}, not a regular file")
        return f.read()


def read_text(path: Path | str) -> str:
    """:func:`read_bytes` as UTF-8 text (UnicodeDecodeError, a ValueError, if it is not)."""
    return read_bytes(path).decode("utf-8")


def is_bundle(directory: Path) -> bool:
    """``directory`` holds a bundle (its manifest) or a run's files (``run.json`` and a
    results log); links are not followed to decide."""
    def present(name: str) -> bool:
        try:
            os.lstat(directory / name)
            return True
        except OSError:
            return False
    return present(MANIFEST) or (present(RUN_FILE) and any(map(present, RUN_LOGS)))


def enclosing_bundle(path: Path | str, *, itself: bool = True) -> Path | None:
    """The bundle directory (:func:`is_bundle`) that ``path`` is, with ``itself``, or lies
    in: the nearest of its ancestors, symbolic links resolved; None when there is none."""
    resolved = Path(os.path.abspath(path))
    try:
        resolved = resolved.resolve()
    except (OSError, RuntimeError):   # a link loop: judge the path as written
        pass
    for directory in ([resolved] if itself else []) + list(resolved.parents):
        if directory.is_dir() and is_bundle(directory):
            return directory
    return None


def refuse_inside_bundle(path: Path | str, option: str, *, is_dir: bool) -> None:
    """Raise OptionError when the output ``path`` of ``option`` lies in a report bundle
    (or a run's directory): a file ``path`` (``is_dir`` False) in one, or a directory
    ``path`` that is one or lies in one, every symbolic link resolved first (a link to
    a bundle's report.html is that file). No command writes into a bundle it did not
    make."""
    real = Path(os.path.realpath(path))   # a link (x.html -> B/report.html) is its target
    where = real if is_dir else real.parent
    bundle = enclosing_bundle(where)
    if bundle is not None:
        raise OptionError(f"{option}={path}: is inside the report bundle {bundle} (it holds "
                          f"{MANIFEST if (bundle / MANIFEST).exists() else RUN_FILE}); "
                          "nothing but the run that made a bundle writes into it (verify "
                          "would find it changed): give a path outside it")
