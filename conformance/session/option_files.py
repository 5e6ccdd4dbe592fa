"""The files that run options name must be UTF-8 text: checked once, up front.

Every loader of an option file (``--plugin-options``, ``--declare-file``, ``--waivers``,
``--known-failures``, ``--profile``, ``--shard-durations``, ``--defects`` and pytest's
``@FILE`` argument files) reads it as UTF-8; binary junk in one made the run end with
``'utf-8' codec can't decode byte 0xff`` and no word of which option or file (issue 27
item 8). :func:`check` reads each named file first and raises
:class:`conformance.session.validate.OptionError` naming the option and the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from conformance.session.validate import OptionError

#: Options whose value is a file (or, for ``--defects``, a directory of .toml files) when
#: it names one that exists; their values otherwise are names (``v8``, ``shipped``) or JSON.
FILE_OPTIONS = ("plugin_options", "declare_file", "waivers", "known_failures", "profile",
                "shard_durations", "defects")


def text_file(option: str, path: Path | str) -> None:
    """Raise OptionError unless the file ``path`` (given to ``option``) is readable UTF-8
    text; the message names the option, the file and the first bad byte's offset."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise OptionError(f"{option}={path}: cannot read it ({err.strerror or err})") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise OptionError(f"{option}={path}: not a UTF-8 text file (byte "
                          f"0x{data[err.start]:02x} at offset {err.start}); give the "
                          "text file this option reads") from None


def _files(value: str) -> list[Path]:
    path = Path(value)
    if path.is_dir():
        return sorted(path.glob("*.toml"))
    return [path] if path.is_file() else []


def check(getoption: Callable[[str], Any]) -> None:
    """Check every file named by the :data:`FILE_OPTIONS` (``getoption(dest)`` gives an
    option's value: ``config.getoption`` or ``lambda d: getattr(ns, d)``)."""
    for dest in FILE_OPTIONS:
        value = getoption(dest)
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if not isinstance(v, str) or not v or (
                    dest == "plugin_options" and v.lstrip().startswith("{")):
                continue
            for path in _files(v):
                text_file("--" + dest.replace("_", "-"), path)


def argument_files(args: Iterable[str]) -> None:
    """pytest's ``@FILE`` arguments (one argument a line) among ``args``: each must be a
    readable UTF-8 file (argparse otherwise ends in a traceback)."""
    for arg in args:
        if isinstance(arg, str) and arg.startswith("@") and len(arg) > 1:
            text_file("@FILE", arg[1:])
