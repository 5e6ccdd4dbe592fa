"""Checks on a PJRT plugin shared library before jaxlib loads it (the plugin
registry's ``load_pjrt_plugin_dynamically``).

jaxlib's loader segfaults on a library whose ``GetPjrtApi`` returns NULL and
reports other problems as ``INTERNAL``/``NOT_FOUND`` status strings. Here every
problem becomes :class:`PluginLoadError` naming the plugin, the path and the
cause, and the header (``PJRT_Api`` struct size and C API version) is read in a
child process first, so a crashing library cannot take the caller down.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

_HEADER_SCRIPT = Path(__file__).with_name("_pjrt_header.py")
#: Seconds the header probe may take (dlopen of a large plugin takes ~1 s).
HEADER_PROBE_TIMEOUT_S = 120.0


class PluginLoadError(RuntimeError):
    """A PJRT plugin could not be loaded, initialized or configured.

    Attributes: ``plugin_name``, ``path`` (or None) and ``cause`` (text).
    """

    def __init__(self, plugin_name: str, path: str | None, cause: str):
        where = f" from {path!r}" if path else ""
        super().__init__(f"PJRT plugin {plugin_name!r}{where}: {cause}")
        self.plugin_name, self.path, self.cause = plugin_name, path, cause


@dataclasses.dataclass(frozen=True)
class PluginLibrary:
    """What is known about a plugin library file before loading it.

    ``path`` is absolute, ``sha256`` the hex digest of the file, ``size_bytes``
    its size, ``api_version`` the ``(major, minor)`` PJRT C API version its
    ``GetPjrtApi`` reports.
    """

    path: str
    sha256: str
    size_bytes: int
    api_version: tuple[int, int]


def absolute_path(library_path: str | os.PathLike) -> str:
    """The one spelling of a library path that loads are recorded and compared under:
    ``~`` expanded, made absolute, ``..`` collapsed, symlinks kept."""
    return os.path.abspath(os.path.expanduser(library_path))


def check_path(plugin_name: str, library_path: str | os.PathLike) -> str:
    """:func:`absolute_path` of an existing, readable regular file; else PluginLoadError."""
    text = absolute_path(library_path)
    path = Path(text)
    if not path.exists():
        raise PluginLoadError(plugin_name, text, "the library path does not exist")
    if path.is_dir():
        raise PluginLoadError(plugin_name, text, "the library path is a directory, "
                              "expected a shared library file (.so)")
    if not path.is_file():
        raise PluginLoadError(plugin_name, text, "the library path is not a regular file")
    if not os.access(path, os.R_OK):
        raise PluginLoadError(plugin_name, text, "the library file is not readable "
                              "(permission denied)")
    return text


#: ELF ``e_machine`` numbers of the architectures a plugin is commonly built for.
ELF_MACHINES = {3: "x86 (i386)", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "s390",
                40: "ARM (32-bit)", 62: "x86-64", 183: "AArch64", 243: "RISC-V",
                258: "LoongArch"}


def elf_target(path: str | os.PathLike) -> tuple[int, int, int] | None:
    """``(e_machine, ELF class: 32 or 64, byte order: 'little'/'big' as 1/2)`` of the ELF
    file ``path``, or None when it is not an ELF file (fewer than 20 bytes or no magic)."""
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return None
    order = "little" if head[5] == 1 else "big"
    return int.from_bytes(head[18:20], order), 32 if head[4] == 1 else 64, head[5]


def check_architecture(plugin_name: str, path: str) -> None:
    """PluginLoadError when ``path`` is an ELF file for another machine, class or byte
    order than this Python (whose own ELF header is the reference): dlopen reports that
    as "No such file or directory"."""
    mine = elf_target(os.path.realpath(sys.executable))
    theirs = elf_target(path)
    if mine is None or theirs is None or mine == theirs:
        return
    def name(t: tuple[int, int, int]) -> str:
        return (f"{ELF_MACHINES.get(t[0], f'e_machine {t[0]}')}, {t[1]}-bit, "
                f"{'little' if t[2] == 1 else 'big'}-endian")
    raise PluginLoadError(plugin_name, path, f"the library is built for another architecture "
                          f"({name(theirs)}); this Python runs on {name(mine)}: use the "
                          "plugin build for this machine")


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def probe(plugin_name: str, library_path: str | os.PathLike) -> PluginLibrary:
    """Check the path and read the library's PJRT C API header in a child process.

    Raises PluginLoadError (naming plugin, path and cause) when the path is
    missing, a directory or unreadable, the file is an ELF file of another architecture
    (:func:`check_architecture`), is not a shared library, has no
    ``GetPjrtApi``, ``GetPjrtApi`` returns NULL or kills the child (signal), or
    the probe takes longer than ``HEADER_PROBE_TIMEOUT_S`` seconds.
    """
    path = check_path(plugin_name, library_path)
    check_architecture(plugin_name, path)
    try:
        proc = subprocess.run([sys.executable, str(_HEADER_SCRIPT), path], capture_output=True,
                              text=True, timeout=HEADER_PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        raise PluginLoadError(plugin_name, path, f"reading the PJRT_Api header took more than "
                              f"{HEADER_PROBE_TIMEOUT_S:g} s") from err
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode).name
        except ValueError:
            sig = f"signal {-proc.returncode}"
        raise PluginLoadError(plugin_name, path, f"GetPjrtApi() crashed the probe process "
                              f"({sig}); the library would crash the caller too")
    try:
        head = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise PluginLoadError(plugin_name, path, f"header probe failed (exit {proc.returncode})"
                              f": {proc.stderr.strip()[-500:]}") from None
    if not head["ok"]:
        raise PluginLoadError(plugin_name, path, head["error"])
    return PluginLibrary(path=path, sha256=sha256_of(path), size_bytes=os.path.getsize(path),
                         api_version=(head["major"], head["minor"]))
