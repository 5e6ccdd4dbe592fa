"""Reading a file the suite is given: a regular file only, never more than a cap.

Every file an option names (``--waivers``, ``--declare-file``, ``--known-failures``,
``--profile``, ``--defects``, ``--shard-durations``, ``--plugin-options``, pytest's
``@FILE``) and every file of a bundle is read through :func:`read_bytes` (or
:func:`read_text`), so that none of them can hang the run or exhaust its memory:

- a FIFO (named pipe), a device (``/dev/zero``), a socket or a directory is refused
  before it is opened, with one line naming the option (or file), the path and what it
  is (the old readers blocked for ever on a FIFO and read ``/dev/zero`` until memory ran
  out); what was opened is checked again with ``fstat``;
- a regular file larger than its cap is refused without being read (and at most
  ``limit + 1`` bytes are ever read, should it grow meanwhile);
- an anonymous pipe, such as bash's process substitution ``<(...)`` (``/dev/fd/63``),
  is read only where the caller reads it once (``pipe=True``:
  :func:`conformance.session.option_files.read_once` keeps a private copy that every
  later reader, and every pytest-xdist worker, reads instead), within the same cap and
  :data:`PIPE_TIMEOUT_S` seconds;
- :func:`decompress_xz` stops at its output cap (a few kB of xz can unpack to
  gigabytes);
- :func:`toml_loads` turns nesting too deep for the parser (RecursionError) and a
  number too long for Python's int conversion into ``tomllib.TOMLDecodeError``
  (``conformance.certification.jsontext`` does the same for JSON).

The caps (:data:`OPTION_FILE_LIMIT` and the others) are far above what the suite ever
writes or ships (a profile is 150 kB, the CPU durations 220 kB, a CPU report.json
1.2 MB, its results log 5-10 MB unpacked). Errors are :class:`FileLimitError`, an
:class:`~conformance.option_error.OptionError` and so a ValueError: ``run`` prints it and
exits 2, and the bundle readers report it as a malformed file. Standard library only
(and :mod:`conformance.option_error`): any layer may use it.
"""

from __future__ import annotations

import errno
import lzma
import os
import select
import stat
import time
import tomllib
from pathlib import Path
from typing import Any

from conformance.option_error import OptionError

MiB = 1 << 20
#: Cap of a file an option names (profile, waivers, declared capabilities, known
#: failures, a defect catalog, durations, ``@FILE`` arguments, dashboard inputs).
OPTION_FILE_LIMIT = 16 * MiB
#: Cap of a ``--plugin-options`` file (a JSON object of a plugin's create options).
PLUGIN_OPTIONS_LIMIT = 1 * MiB
#: Cap of a file of a bundle (report.json, run.json, the manifest, junit.xml).
BUNDLE_FILE_LIMIT = 256 * MiB
#: Cap of what an xz file of a bundle unpacks to (``results.jsonl.xz``, ``junit.xml.xz``).
DECOMPRESSED_LIMIT = 512 * MiB
#: Seconds a pipe (``<(...)``) may take to deliver all of its bytes.
PIPE_TIMEOUT_S = 60.0
_CHUNK = 1 << 20


class FileLimitError(OptionError):
    """A file refused: not a regular file, larger than its cap, a pipe that did not end,
    or xz data that unpacks past its cap (one line naming the option or file)."""


def size_text(n: int) -> str:
    """``n`` bytes in words: ``512 bytes``, ``16 MiB``, ``2.0 GiB``."""
    if n < 1024:
        return f"{n} bytes"
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1024)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def _named(what: str | None, path: Path | str) -> str:
    return f"{what}={path}" if what else str(path)


def kind(mode: int) -> str:
    """What an ``st_mode`` is, in words ("a regular file", "a character device", ...)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def is_anonymous_pipe(path: Path | str) -> bool:
    """True when ``path`` leads to a pipe that has no name in the file system: bash's
    ``<(...)`` (``/dev/fd/63``), ``/dev/stdin`` of a pipeline. A FIFO made with
    ``mkfifo`` (or a link to one) is not: opening it waits for a writer that may never
    come."""
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    try:   # /dev/fd/N resolves to /proc/PID/fd/pipe:[INODE], a name that does not exist
        os.lstat(os.path.realpath(path))
    except OSError:
        return True
    return False


def _refusal(what: str | None, path: Path | str, mode: int, pipe: bool) -> FileLimitError:
    name = _named(what, path)
    found = kind(mode)
    if stat.S_ISDIR(mode):
        return FileLimitError(f"{name}: is a directory; give a file")
    if stat.S_ISFIFO(mode):
        if is_anonymous_pipe(path):
            return FileLimitError(f"{name}: is a pipe, not a regular file, and this file is "
                                  "read more than once; give a regular file")
        return FileLimitError(f"{name}: is a named pipe (FIFO), not a regular file: reading "
                              "it waits for a writer that may never come; give a regular "
                              "file" + (" (a process substitution <(...) is read once)"
                                        if pipe else ""))
    return FileLimitError(f"{name}: is {found}, not a regular file; give a regular file")


def read_bytes(path: Path | str, *, what: str | None = None, limit: int = OPTION_FILE_LIMIT,
               pipe: bool = False, timeout: float = PIPE_TIMEOUT_S) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    ``what``: the option that named the file (``--waivers``), shown in messages as
    ``--waivers=PATH``; None shows the path alone. ``pipe``: also read an anonymous
    pipe (:func:`is_anonymous_pipe`, a ``<(...)``), once, until its end, within
    ``limit`` bytes and ``timeout`` seconds; only a caller that keeps what it read may
    pass it (a pipe cannot be read twice).

    Raises :class:`FileLimitError` (a ValueError) for a directory, a FIFO, a device, a
    socket (none of them opened), a file or pipe of more than ``limit`` bytes and a pipe
    that does not end in time; OSError (FileNotFoundError, PermissionError...) when the
    file cannot be opened or read.
    """
    mode = os.stat(path).st_mode
    anonymous = pipe and stat.S_ISFIFO(mode) and is_anonymous_pipe(path)
    if not stat.S_ISREG(mode) and not anonymous:
        raise _refusal(what, path, mode, pipe)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISFIFO(info.st_mode) and anonymous:
            return _read_pipe(fd, path, what, limit, timeout)
        if not stat.S_ISREG(info.st_mode):   # swapped since the stat
            raise _refusal(what, path, info.st_mode, pipe)
        if info.st_size > limit:
            raise FileLimitError(f"{_named(what, path)}: is {size_text(info.st_size)}, more "
                                 f"than the {size_text(limit)} this file may have")
        parts, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        if got > limit:
            raise FileLimitError(f"{_named(what, path)}: grew past the {size_text(limit)} "
                                 "this file may have while it was read")
        return b"".join(parts)
    finally:
        os.close(fd)


def _read_pipe(fd: int, path: Path | str, what: str | None, limit: int,
               timeout: float) -> bytes:
    """Read the pipe open (non-blocking) as ``fd`` to its end (see :func:`read_bytes`)."""
    deadline = time.monotonic() + timeout
    parts, got = [], 0
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise FileLimitError(f"{_named(what, path)}: the pipe did not end within "
                                 f"{timeout:g} s (after {size_text(got)}); give a "
                                 "regular file")
        if not poller.poll(max(1, int(left * 1000))):
            continue
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
        except BlockingIOError:
            continue
        except OSError as err:
            if err.errno in (errno.EAGAIN, errno.EINTR):
                continue
            raise
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        got += len(chunk)
        if got > limit:
            raise FileLimitError(f"{_named(what, path)}: more than the {size_text(limit)} "
                                 "this file may have came through the pipe")


def read_text(path: Path | str, *, what: str | None = None, limit: int = OPTION_FILE_LIMIT,
              pipe: bool = False) -> str:
    """:func:`read_bytes` as UTF-8 text; :class:`FileLimitError` naming the first byte
    that is not UTF-8 (and its offset) too."""
    data = read_bytes(path, what=what, limit=limit, pipe=pipe)
    return decode_utf8(data, what=what, path=path)


def decode_utf8(data: bytes, *, what: str | None, path: Path | str) -> str:
    """``data`` (read from ``path``) as UTF-8 text, or :class:`FileLimitError`."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FileLimitError(f"{_named(what, path)}: not a UTF-8 text file (byte "
                             f"0x{data[err.start]:02x} at offset {err.start}); give the "
                             "text file this option reads") from None


def decompress_xz(data: bytes, *, limit: int = DECOMPRESSED_LIMIT,
                  what: str = "xz data") -> bytes:
    """``lzma.decompress(data)`` that stops at ``limit`` bytes of output.

    Concatenated streams are read as :func:`lzma.decompress` reads them (trailing bytes
    that are no stream are ignored once one stream was read). Raises
    :class:`FileLimitError` naming ``what`` when the output would pass ``limit`` (nothing
    more than ``limit + 1`` bytes is ever produced), ``lzma.LZMAError`` for data that is
    not xz, EOFError for data cut off before its end.
    """
    parts: list[bytes] = []
    got = 0
    first = True
    while data or first:
        dec = lzma.LZMADecompressor()
        try:
            chunk = dec.decompress(data, max_length=limit + 1 - got)
        except lzma.LZMAError:
            if not first:
                break   # leftover bytes that are no stream: ignored, as lzma.decompress does
            raise
        first = False
        while True:
            parts.append(chunk)
            got += len(chunk)
            if got > limit:
                raise FileLimitError(f"{what}: unpacks to more than {size_text(limit)}, the "
                                     "most it may hold")
            if dec.eof:
                break
            if dec.needs_input:
                raise EOFError("Compressed data ended before the end-of-stream marker was "
                               "reached")
            chunk = dec.decompress(b"", max_length=limit + 1 - got)
        data = dec.unused_data
    return b"".join(parts)


def read_xz(path: Path | str, *, limit: int | None = None,
            packed_limit: int = BUNDLE_FILE_LIMIT) -> bytes:
    """The unpacked bytes of the xz file ``path`` (:func:`read_bytes` within
    ``packed_limit``, then :func:`decompress_xz` within ``limit``; None: the
    :data:`DECOMPRESSED_LIMIT` of the moment)."""
    return decompress_xz(read_bytes(path, limit=packed_limit),
                         limit=DECOMPRESSED_LIMIT if limit is None else limit, what=str(path))


class TomlTooDeep(tomllib.TOMLDecodeError):
    """TOML nested deeper than the parser can follow, or a number too long to convert."""


def toml_loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; raises ``tomllib.TOMLDecodeError`` (a ValueError) for
    text that is not TOML, :class:`TomlTooDeep` (one) for nesting too deep to parse (a
    RecursionError in tomllib) or an integer of more digits than Python converts."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TomlTooDeep("arrays or tables nested too deeply to parse") from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as err:   # int('9' * 5000): Python's int-string conversion limit
        raise TomlTooDeep(f"a number too long to read ({err})") from None
