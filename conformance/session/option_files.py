"""The files that run options name must be UTF-8 text: checked once, up front.

Every loader of an option file (``--plugin-options``, ``--declare-file``, ``--waivers``,
``--known-failures``, ``--profile``, ``--shard-durations``, ``--defects`` and pytest's
``@FILE`` argument files) reads it as UTF-8; binary junk in one made the run end with
``'utf-8' codec can't decode byte 0xff`` and no word of which option or file (issue 27
item 8). :func:`check` reads each named file first and raises
:class:`conformance.session.validate.OptionError` naming the option and the file.

Each file is read through :mod:`conformance.file_limits` (issue 34): a FIFO, a device
(``/dev/zero``), a socket or a directory is refused without being opened, and a file is
never read past its cap (:data:`~conformance.file_limits.OPTION_FILE_LIMIT`,
:data:`~conformance.file_limits.PLUGIN_OPTIONS_LIMIT` for ``--plugin-options``). A
process substitution (``--declare-file <(...)``, a pipe ``/dev/fd/63``) can be read only
once, but the run reads its option files several times (its checks, the pytest session,
each pytest-xdist worker, ``finalize``): :func:`read_once` reads such a pipe once, within
the cap, into a private regular file, and the run's options
(:class:`~conformance.session.run_options.RunOptions`) name that copy from then on.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from conformance import file_limits, path_limits
from conformance.session.validate import OptionError

#: Options whose value is a file (or, for ``--defects``, a directory of .toml files) when
#: it names one that exists; their values otherwise are names (``v8``, ``shipped``) or JSON.
FILE_OPTIONS = ("plugin_options", "declare_file", "waivers", "known_failures", "profile",
                "shard_durations", "defects")
#: The suffix of an option's private copy (:func:`read_once`): its loader tells a file
#: from a name by it (``--profile x.json``, a ``--known-failures`` ``.toml`` catalog).
_SUFFIX = {"plugin_options": ".json", "declare_file": ".txt", "waivers": ".toml",
           "profile": ".json", "shard_durations": ".json", "defects": ".toml"}
#: How an inline ``--plugin-options`` value starts (JSON text, not a file name).
INLINE_JSON = ("{", "[")
_copies: list[Path] = []   # the private folder of this process's copies, once made


def limit(option: str) -> int:
    """The size cap of the file given to ``option`` (``--plugin-options`` or another)."""
    return file_limits.PLUGIN_OPTIONS_LIMIT if option.strip("-").replace("-", "_") == \
        "plugin_options" else file_limits.OPTION_FILE_LIMIT


def text_file(option: str, path: Path | str) -> str:
    """The text of the file ``path`` (given to ``option``); OptionError unless it is a
    regular file (:mod:`conformance.file_limits`: no FIFO, device, socket or directory) of
    UTF-8 text within the option's cap (:func:`limit`). The message names the option,
    the file and what is wrong (the first bad byte's offset, the size, the kind of file)."""
    try:
        return file_limits.read_text(path, what=option, limit=limit(option))
    except OSError as err:
        raise OptionError(f"{option}={path}: cannot read it ({err.strerror or err})") from None


def _files(value: str) -> list[Path]:
    path = Path(value)
    if path.is_dir():
        return sorted(path.glob("*.toml"))
    return [path] if path.exists() else []


def _private_folder() -> Path:
    """This process's folder of private copies (made once, mode 0700, removed when the
    process exits; left behind only by a kill, for ``finalize`` to read)."""
    if not _copies:
        folder = Path(tempfile.mkdtemp(prefix="pjrt-conformance-inputs-"))
        atexit.register(shutil.rmtree, folder, True)
        _copies.append(folder)
    return _copies[0]


def _copy(option: str, path: str) -> str:
    """Read the pipe ``path`` of ``option`` once (within its cap) into a private file;
    its path (with the suffix the option's loader expects: :data:`_SUFFIX`; for
    ``--known-failures``, ``.toml`` when it holds TOML tables, a catalog)."""
    try:
        data = file_limits.read_bytes(path, what=option, limit=limit(option), pipe=True)
    except OSError as err:
        raise OptionError(f"{option}={path}: cannot read it ({err.strerror or err})") from None
    dest = option.strip("-").replace("-", "_")
    suffix = _SUFFIX.get(dest, "")
    if dest == "known_failures":
        suffix = ".toml" if re.search(rb"(?m)^[ \t]*\[", data) else ".txt"
    folder = _private_folder()
    target = folder / f"{dest if dest in FILE_OPTIONS else 'args'}-" \
                      f"{len(list(folder.iterdir()))}{suffix}"
    target.write_bytes(data)
    return str(target)


def read_once(getoption: Callable[[str], Any],
              setoption: Callable[[str, Any], None]) -> dict[str, Any]:
    """Replace every :data:`FILE_OPTIONS` value that names a pipe (a process substitution
    ``<(...)``, :func:`conformance.file_limits.is_anonymous_pipe`) by a private regular
    copy of what came through it, read once within the option's cap; ``setoption(dest,
    value)`` sets the new value. Returns the values set (dest -> value). The run's
    :class:`~conformance.session.run_options.RunOptions` name the copies, and
    pytest-xdist workers get them from it, never from their command line. A named FIFO
    or a device is left for :func:`check` to refuse. OptionError when a pipe does not
    end in time or passes the cap."""
    changed: dict[str, Any] = {}
    for dest in FILE_OPTIONS:
        value = getoption(dest)
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        pipes = [i for i, v in enumerate(values)
                 if isinstance(v, str) and v and file_limits.is_anonymous_pipe(v)]
        for i in pipes:
            values[i] = _copy("--" + dest.replace("_", "-"), values[i])
        if pipes:
            changed[dest] = values if isinstance(value, (list, tuple)) else values[0]
            setoption(dest, changed[dest])
    return changed


def read_once_args(args: Iterable[str]) -> list[str]:
    """``args`` with every pytest ``@FILE`` argument that names a pipe replaced by
    ``@COPY``, a private copy read once (see :func:`read_once`)."""
    return [f"@{_copy('@FILE', arg[1:])}" if isinstance(arg, str) and arg.startswith("@")
            and len(arg) > 1 and file_limits.is_anonymous_pipe(arg[1:]) else arg
            for arg in args]


def check(getoption: Callable[[str], Any]) -> None:
    """Check every file named by the :data:`FILE_OPTIONS` (``getoption(dest)`` gives an
    option's value: ``values.get`` of :func:`.option_intake.build` or ``lambda d:
    getattr(ns, d)`` of ``pjrt-conformance run``): its path
    (:func:`conformance.path_limits.check`: a name over 255 bytes is a one-line
    OptionError, never an ENAMETOOLONG traceback), then its kind, size and text."""
    for dest in FILE_OPTIONS:
        value = getoption(dest)
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if not isinstance(v, str) or not v or (
                    dest == "plugin_options" and v.lstrip().startswith(INLINE_JSON)):
                continue
            path_limits.check(v, "--" + dest.replace("_", "-"))
            for path in _files(v):
                text_file("--" + dest.replace("_", "-"), path)


def argument_files(args: Iterable[str]) -> None:
    """pytest's ``@FILE`` arguments (one argument a line) among ``args``: each must be a
    readable UTF-8 file (argparse otherwise ends in a traceback)."""
    for arg in args:
        if isinstance(arg, str) and arg.startswith("@") and len(arg) > 1:
            text_file("@FILE", arg[1:])
