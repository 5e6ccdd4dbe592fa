"""Up-front validation of a run's options, before the first test runs.

Every check raises :class:`OptionError` (a ValueError) with one line that names the
option, what was given and what is accepted. ``pjrt-conformance run`` prints it and
exits 2; the pytest plugin raises it as ``pytest.UsageError``. Checks:

- :func:`output_dir`: the report directory has a UTF-8 path, is absent or empty (an earlier bundle is
  replaced only with ``force``: its regular files, unlinked by name, never through a
  symbolic link; never the results log of a run that wrote no bundle, which ``finalize``
  can still keep), not a file, not inside a report bundle, writable, with at least
  :data:`MIN_FREE_BYTES` free on its file system; it is claimed by an exclusive lock
  that this process holds until the run ends (a second run into it is refused), and the
  folders made for a run that is refused are removed again (:func:`release`);
- :func:`platform_name`: ``--platform`` is a name (:data:`PLATFORM_NAME`), never a path;
- :func:`plugin_options`: create options need ``--plugin-library``; values must be of
  a type a PJRT named value can carry; for a known plugin (:data:`KNOWN_PLUGINS`,
  recognised by its library file name) every option must be one it accepts, of its
  type and range. The PJRT C API publishes no schema of create options, and the XLA
  CPU plugin aborts (SIGABRT) or crashes (SIGSEGV) on a wrongly typed or negative
  ``cpu_device_count``, so the table below stops that before the library is loaded;
- :func:`numbers`: ``-n``/``--workers`` (``auto`` or an int from 0 to
  :func:`max_workers`: :data:`WORKERS_PER_CORE` per CPU core), ``--timeout`` (> 0
  seconds), ``--cpu-devices`` (1..:data:`MAX_CPU_DEVICES`), ``--num-processes``
  (1..:data:`MAX_PROCESSES`).

- :func:`output_file`: a file a command writes (``durations --output``, ``profile
  --write``) is not a directory, not in a report bundle, and can be written;
- :func:`certification_files`: ``--profile``, ``--waivers`` (schema: unknown keys are
  errors) and ``--known-failures`` files, by their own parsers. The pytest plugin
  loads the same files before collection
  (:meth:`conformance.session.session_state.SessionState.configure_certification`).
  TODO(defects): once ``conformance/defects/`` has its schema validator, call it in
  :func:`certification_files`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
import os
import re
import shutil
import stat
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from conformance import path_limits
from conformance.option_error import OptionError, shown  # below every layer: processes raise it too

#: Free bytes the report directory's file system must have (a CPU bundle with its
#: results.jsonl is about 15 MB while the run writes it).
MIN_FREE_BYTES = 64 * 2**20
#: Largest ``--cpu-devices``: more devices than this is not a test of anything real,
#: and 100000 made jaxlib hang for minutes before aborting.
MAX_CPU_DEVICES = 1024
#: Largest ``--num-processes``.
MAX_PROCESSES = 64
#: ``-n`` workers per CPU core at most (:func:`max_workers`): each worker is a Python
#: process with its own client; 100000 of them were started one after another, without
#: end, until the machine gave out.
WORKERS_PER_CORE = 4
#: Files of an earlier bundle that ``force`` removes (nothing else is ever removed).
BUNDLE_FILES = ("report.json", "report.md", "report.html", "junit.xml", "junit.xml.xz",
                "MANIFEST.sha256", "MANIFEST.sha256.sig", "results.jsonl", "results.jsonl.xz",
                "run.json")
#: The directory of an earlier bundle's standalone reproductions (``repro/*.py``, README).
REPRO_DIR = "repro"
#: A ``--platform`` name: it names the folder ``reports/<platform>/``, so never a path.
PLATFORM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: The output directories this process claimed (:func:`output_dir`): (st_dev, st_ino) ->
#: (the descriptor holding the lock, the path, the directories made for it, top first).
_HELD: dict[tuple[int, int], tuple[int, Path, list[Path]]] = {}
#: Create options of plugins whose options are known: library file name -> option ->
#: (Python type, smallest, largest). From XLA's CPU plugin (pjrt_c_api_cpu_internal.cc).
KNOWN_PLUGINS: dict[str, dict[str, tuple[type, int, int]]] = {
    "libpjrt_cpu.so": {"cpu_device_count": (int, 1, MAX_CPU_DEVICES)},
    "pjrt_c_api_cpu_plugin.so": {"cpu_device_count": (int, 1, MAX_CPU_DEVICES)},
}
_NAMED_VALUE_TYPES = "a string, a bool, an int, a float or a list of ints"


def platform_name(value: Any) -> str:
    """``--platform``: a name of :data:`PLATFORM_NAME` (it names the folder
    ``reports/<platform>/`` of the default ``--output``: never a path); OptionError else."""
    text = str(value)
    if not PLATFORM_NAME.fullmatch(text):
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise OptionError(f"--platform={text[:100]}: accepted: a platform name of 1 to 64 "
                          "letters, digits, '_' and '-' starting with a letter or digit (no "
                          "path: it names the folder reports/<platform>/)")
    return text


def _foreign(fd: int) -> tuple[list[str], list[str]]:
    """(entries, foreign) of the directory open as ``fd``: the names in it, and those that
    are not part of an earlier bundle :func:`output_dir` may remove with ``force`` (a
    regular file of :data:`BUNDLE_FILES`; ``repro``, a real directory of regular ``.py``
    and ``.md`` files), each foreign one with why (a symbolic link is never followed)."""
    present = sorted(os.listdir(fd))
    foreign = []
    for name in present:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            foreign.append(f"{name} (a symbolic link)")
        elif name in BUNDLE_FILES and stat.S_ISREG(mode):
            continue
        elif name == REPRO_DIR and stat.S_ISDIR(mode):
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                if not all(stat.S_ISREG(os.stat(n, dir_fd=sub, follow_symlinks=False).st_mode)
                           and n.endswith((".py", ".md")) for n in os.listdir(sub)):
                    foreign.append(f"{name} (holds files no bundle writes)")
            finally:
                os.close(sub)
        else:
            foreign.append(name)
    return present, foreign


def _remove_earlier(fd: int, present: list[str]) -> None:
    """Remove the files of an earlier bundle (checked by :func:`_foreign`) from the
    directory open as ``fd``: unlink by name in it, never through a link."""
    for name in present:
        if name == REPRO_DIR:
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                for script in os.listdir(sub):
                    os.unlink(script, dir_fd=sub)
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)


def _make(out: Path, option: str, fresh: bool) -> list[Path]:
    """Create ``out`` and its missing parents; return the directories made, top first.
    ``fresh``: ``out`` must not exist before (an exclusive create: a default output that
    another run made in the same microsecond is refused, never shared)."""
    missing = [d for d in [out, *out.parents] if not os.path.lexists(d)][::-1]
    made: list[Path] = []
    try:
        for directory in missing:
            try:
                directory.mkdir()
                made.append(directory)
            except FileExistsError:
                if directory == out and fresh:
                    raise
        if fresh and out not in made:
            raise FileExistsError(errno.EEXIST, "exists", str(out))
    except FileExistsError:
        _unmake(made)
        raise OptionError(f"{option}={out}: another run made this directory at the same "
                          "moment; run again (the default output is a new directory "
                          "per run)") from None
    except OSError as err:
        _unmake(made)
        raise OptionError(f"{option}={out}: cannot write there ({err.strerror or err}); give "
                          "a writable directory") from err
    return made


def _unmake(made: list[Path]) -> None:
    """Remove the directories :func:`_make` made (deepest first) that are still there and
    empty; stop at the first that is not empty."""
    for directory in reversed(made):
        try:
            directory.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            break


def _claim(out: Path, option: str, made: list[Path]) -> int | None:
    """Lock the directory ``out`` for this process (an exclusive ``flock`` on it, held
    until :func:`release` or the process ends; ``made``: the directories made for it);
    return the open descriptor, or None when this process holds it already. OptionError
    when another process holds it."""
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise OptionError(f"{option}={out}: cannot write there ({err.strerror or err}); give "
                          "a writable directory") from err
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) in _HELD:
        os.close(fd)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise DirectoryBusy(f"{option}={out}: another pjrt-conformance process is writing "
                                f"into this directory; give another {option} (or wait until "
                                "it ends)") from None
        raise OptionError(f"{option}={out}: cannot lock it ({err.strerror or err}); give "
                          "a directory on a local file system") from None
    _HELD[(info.st_dev, info.st_ino)] = (fd, out, made)
    return fd


class DirectoryBusy(OptionError):
    """The directory is claimed by another process (a run still going, or another
    command rewriting the bundle)."""


@contextlib.contextmanager
def claimed(path: Path | str, *, command: str) -> Iterator[Path]:
    """Hold the claim :func:`output_dir` takes (the directory's exclusive ``flock``) on the
    existing run or bundle directory ``path`` while ``command`` (``finalize``,
    ``rerender``, ``sign``, ``merge``) rewrites it, so that it never packs the log of a run
    that is still writing it, nor two commands rewrite one bundle at once. A ``path``
    that is not a directory passes (the command says what is wrong with it). Raises
    :class:`DirectoryBusy`: ``DIR: a pjrt-conformance run (or command) is still writing
    into it; wait until it ends`` (``finalize`` is for a run that was killed)."""
    out = Path(path)
    if not out.is_dir() or out.is_symlink():
        yield out
        return
    try:
        fd = _claim(out, command, [])
    except DirectoryBusy:
        raise DirectoryBusy(f"{out}: a pjrt-conformance run (or another command) is still "
                            f"writing into it; wait until it ends ({command} "
                            + ("is for a run that was killed" if command == "finalize" else
                               "rewrites a bundle only when nothing else writes it")
                            + ")") from None
    try:
        yield out
    finally:
        if fd is not None:
            release(out)


def holds(path: Path | str) -> bool:
    """This process holds the claim of :func:`output_dir` on the directory ``path``."""
    return any(out == Path(path) for _, out, _ in _HELD.values())


def release(path: Path | str, *, remove_made: bool = False) -> None:
    """Give up this process's claim on the output directory ``path`` (see
    :func:`output_dir`); ``remove_made``: also remove the directories the claim made that
    are empty (``path`` itself when it is, then its parents), so that a run refused after
    its claim (an unknown platform) leaves no empty folder behind."""
    for key, (fd, out, made) in list(_HELD.items()):
        if out != Path(path):
            continue
        del _HELD[key]
        if remove_made:
            _unmake(made)
        os.close(fd)


def output_dir(path: Path | str, *, option: str = "--output", force: bool = False,
               min_free_bytes: int = MIN_FREE_BYTES, fresh: bool = False) -> Path:
    """Check the report directory ``path``, create it and claim it; return it as a Path.

    The claim is an exclusive ``flock`` on the directory, held by this process until
    :func:`release` (or its end): a second process that claims the same directory gets
    OptionError ("another pjrt-conformance process is writing into this directory"); a
    second claim in this process (the pytest plugin's, after ``pjrt-conformance run``'s)
    passes. ``fresh``: the directory must be new (made here by an exclusive ``mkdir``).

    Raises OptionError for a path that is a file, a non-empty directory (unless
    ``force`` and it holds only regular files of an earlier bundle, which are then
    removed by name in the claimed directory; a symbolic link in it, or ``path`` itself
    a link, is refused with ``force``, never followed), a directory inside a report bundle
    (:func:`conformance.certification.bundle.entries.refuse_inside_bundle`), one that
    cannot be created or written, a path that is not UTF-8 (the report records it and
    pytest-xdist sends it to its workers as text), or less than ``min_free_bytes`` bytes
    free. A directory it made is removed again when it raises.
    """
    from conformance.certification.bundle import entries

    out = Path(path)
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        text = str(out).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise OptionError(f"{option}={shown(text)}: the path is not UTF-8 text; give a path of "
                          "UTF-8 characters") from None
    if force and out.is_symlink():
        raise OptionError(f"{option}={out}: is a symbolic link (to {os.readlink(out)}); "
                          "--force replaces an earlier bundle only in the directory itself: "
                          "give the directory, not a link to it")
    if out.exists() and not out.is_dir():
        raise OptionError(f"{option}={out}: is a file; give a directory that is empty or "
                          "does not exist")
    bundle = entries.enclosing_bundle(out, itself=False)
    if bundle is not None:
        raise OptionError(f"{option}={out}: is inside the report bundle {bundle}; nothing "
                          "but the run that made a bundle writes into it: give a directory "
                          "outside it")
    made = _make(out, option, fresh)
    try:
        fd = _claim(out, option, made)
    except OptionError:
        _unmake(made[:-1] if made and made[-1] == out else made)   # never what another
        raise                                                        # run now holds
    try:
        _check_claimed(out, option, force, min_free_bytes, fd)
    except BaseException:
        if fd is not None:
            release(out, remove_made=True)
        raise
    return out


def _check_claimed(out: Path, option: str, force: bool, min_free_bytes: int,
                   fd: int | None) -> None:
    """The checks of :func:`output_dir` once ``out`` is claimed (``fd``: the claim's
    descriptor, None when an earlier claim of this process holds it)."""
    own = fd if fd is not None else os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        present, foreign = _foreign(own)
        if force and "results.jsonl" in present and "MANIFEST.sha256" not in present:
            raise OptionError(
                f"{option}={out}: holds the results log of a run that did not write its "
                "bundle (results.jsonl, no MANIFEST.sha256: killed, or still going); "
                f"--force would delete its results: run 'pjrt-conformance finalize {out}' "
                "to keep them as an incomplete bundle, or remove the directory yourself")
        if present and (not force or foreign):
            listed = foreign if force else present
            raise OptionError(
                f"{option}={out}: directory is not empty ({', '.join(listed[:4])}"
                f"{', ...' if len(listed) > 4 else ''}); give an empty or new directory"
                + ("" if foreign else ", or --force to replace the earlier bundle")
                + ("; --force removes only the regular files of an earlier bundle and "
                   "never follows a link" if force else ""))
        _remove_earlier(own, present)
    except OSError as err:
        raise OptionError(f"{option}={out}: cannot clear it ({err.strerror or err}); give "
                          "an empty or new directory") from err
    finally:
        if fd is None:
            os.close(own)
    try:
        probe = out / ".pjrt-conformance-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OptionError(f"{option}={out}: cannot write there ({err.strerror or err}); give "
                          "a writable directory") from err
    free = shutil.disk_usage(out).free
    if free < min_free_bytes:
        raise OptionError(f"{option}={out}: only {free / 2**20:.1f} MiB free; a report needs "
                          f"at least {min_free_bytes / 2**20:.0f} MiB")


def output_file(path: Path | str, *, option: str) -> Path:
    """Check that the file ``path`` (given to ``option``) can be written: not a directory,
    not in a report bundle, in a directory that exists and is writable. A file that was
    absent stays absent. Raises OptionError naming the option, the path and the cause."""
    from conformance.certification.bundle import entries

    out = Path(path)
    if out.is_dir():
        raise OptionError(f"{option}={out}: is a directory; give a file path")
    entries.refuse_inside_bundle(out, option, is_dir=False)
    existed = out.exists()
    try:
        with open(out, "a", encoding="utf-8"):
            pass
    except OSError as err:
        raise OptionError(f"{option}={out}: cannot write there ({err.strerror or err}); give "
                          "a writable file path") from None
    if not existed:
        out.unlink()
    return out


def certification_files(*, profile: str, waivers: str | None,
                        known_failures: list[str]) -> None:
    """Load the profile, the waiver file and the known-failure files once; OptionError
    naming the option and the file for the first one that is missing or malformed."""
    import conformance.certification.catalog.known_failures
    import conformance.certification.catalog.waivers
    from conformance.certification.catalog import profiles

    try:
        if profile != "none":
            profiles.load(profile)
        if waivers:
            conformance.certification.catalog.waivers.parse(Path(waivers))
    except ValueError as err:
        raise OptionError(str(err).splitlines()[0]) from None
    for path in known_failures:
        try:
            conformance.certification.catalog.known_failures.parse(Path(path))
        except (OSError, ValueError) as err:
            raise OptionError(f"--known-failures={path}: {err}".splitlines()[0]) from None


def _named_value_ok(value: Any) -> bool:
    if isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)


def parsed_plugin_options(text: str | None, library: str | None) -> dict[str, Any] | None:
    """``--plugin-options`` (JSON text or a file of it, or None) parsed by
    :func:`conformance.session.backend.load_plugin_options` and checked with
    :func:`plugin_options` for ``--plugin-library``. Raises OptionError naming the option
    (also for an empty ``--plugin-library``: a ``$(python -c ...)`` that printed nothing)."""
    from conformance.session import backend  # lazy: imports jax

    if library is not None and not str(library).strip():
        raise OptionError("--plugin-library: the path is empty (a command substitution such "
                          "as $(python -c 'import pkg; print(pkg.library_path())') printed "
                          "nothing: is the plugin's package installed in this environment?)")

    path_limits.check(library, "--plugin-library")
    try:
        parsed = backend.load_plugin_options(text)
    except ValueError as err:
        raise OptionError(str(err)) from None
    plugin_options(parsed, library)
    return parsed


def plugin_options(options: dict[str, Any] | None, library: str | None) -> None:
    """Check ``--plugin-options`` (parsed JSON object, or None) for ``--plugin-library``.

    Raises OptionError for options without a library, a value no PJRT named value can
    carry, and for a known plugin an unknown option or a value of the wrong type or
    out of range.
    """
    if options is None:
        return
    if library is None:
        raise OptionError("--plugin-options: given without --plugin-library; create options "
                          "apply only to a plugin library")
    known = KNOWN_PLUGINS.get(os.path.basename(library))
    for name, value in options.items():
        if not _named_value_ok(value):
            raise OptionError(f"--plugin-options: {shown(name)}={shown(repr(value))} is not "
                              f"{_NAMED_VALUE_TYPES}")
        if known is None:
            continue
        if name not in known:
            raise OptionError(f"--plugin-options: unknown create option {shown(name)!r} of "
                              f"{os.path.basename(library)}; accepted: {', '.join(known)}")
        kind, low, high = known[name]
        if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
            raise OptionError(f"--plugin-options: {name}={shown(repr(value))}; accepted: an "
                              f"int from {low} to {high}")


def _int_in(option: str, value: Any, low: int, high: int | None) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(value, float) or number < low or (
            high is not None and number > high):
        accepted = f"an int from {low} to {high}" if high is not None else f"an int >= {low}"
        raise OptionError(f"{option}={value}: accepted: {accepted}")
    return number


def max_workers() -> int:
    """The most ``-n`` workers: :data:`WORKERS_PER_CORE` per CPU core of this machine."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def workers(value: Any) -> str:
    """``-n``/``--workers``: 'auto' or an int from 0 to :func:`max_workers` (returned as
    text)."""
    if str(value) in ("auto", "logical"):
        return str(value)
    try:
        return str(_int_in("-n/--workers", value, 0, max_workers()))
    except OptionError as err:
        raise OptionError(f"{err} ({WORKERS_PER_CORE} per CPU core; this machine has "
                          f"{os.cpu_count() or 1}) or 'auto'") from None


def numbers(*, cpu_devices: Any, num_processes: Any, timeout: Any = None,
            workers_value: Any = None) -> None:
    """Check the numeric options (see the module docstring); OptionError if one is out of
    range. ``timeout`` and ``workers_value`` are skipped when None."""
    _int_in("--cpu-devices", cpu_devices, 1, MAX_CPU_DEVICES)
    _int_in("--num-processes", num_processes, 1, MAX_PROCESSES)
    if timeout is not None:
        try:
            seconds = float(timeout)
        except (TypeError, ValueError):
            seconds = math.nan
        if not (seconds > 0 and math.isfinite(seconds)):
            raise OptionError(f"--timeout={timeout}: accepted: a number of seconds > 0")
    if workers_value is not None:
        workers(workers_value)
