"""Up-front validation of a run's options, before the first test runs.

Every check raises :class:`OptionError` (a ValueError) with one line that names the
option, what was given and what is accepted. ``pjrt-conformance run`` prints it and
exits 2; the pytest plugin raises it as ``pytest.UsageError``. Checks:

- :func:`output_dir`: the report directory has a UTF-8 path, is absent or empty (an earlier bundle is
  replaced only with ``force``), not a file, writable, with at least
  :data:`MIN_FREE_BYTES` free on its file system;
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
  --write``) is not a directory and can be written;
- :func:`certification_files`: ``--profile``, ``--waivers`` (schema: unknown keys are
  errors) and ``--known-failures`` files, by their own parsers. The pytest plugin
  loads the same files before collection
  (:meth:`conformance.session.state.SessionState.configure_certification`).
  TODO(defects): once ``conformance/defects/`` has its schema validator, call it in
  :func:`certification_files`.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path
from typing import Any

from conformance.option_error import OptionError  # below every layer: processes raise it too

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
#: Create options of plugins whose options are known: library file name -> option ->
#: (Python type, smallest, largest). From XLA's CPU plugin (pjrt_c_api_cpu_internal.cc).
KNOWN_PLUGINS: dict[str, dict[str, tuple[type, int, int]]] = {
    "libpjrt_cpu.so": {"cpu_device_count": (int, 1, MAX_CPU_DEVICES)},
    "pjrt_c_api_cpu_plugin.so": {"cpu_device_count": (int, 1, MAX_CPU_DEVICES)},
}
_NAMED_VALUE_TYPES = "a string, a bool, an int, a float or a list of ints"


def output_dir(path: Path | str, *, option: str = "--output", force: bool = False,
               min_free_bytes: int = MIN_FREE_BYTES) -> Path:
    """Check the report directory ``path`` and create it; return it as a Path.

    Raises OptionError for a path that is a file, a non-empty directory (unless
    ``force`` and it holds only files of an earlier bundle, which are then removed),
    a directory that cannot be created or written, a path that is not UTF-8 (the report
    records it and pytest-xdist sends it to its workers as text), or less than
    ``min_free_bytes`` bytes free.
    """
    out = Path(path)
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(out).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise OptionError(f"{option}={shown}: the path is not UTF-8 text; give a path of "
                          "UTF-8 characters") from None
    if out.exists() and not out.is_dir():
        raise OptionError(f"{option}={out}: is a file; give a directory that is empty or "
                          "does not exist")
    if out.is_dir():
        present = sorted(p.name for p in out.iterdir())
        foreign = [n for n in present if n not in BUNDLE_FILES and not (
            n == REPRO_DIR and all(p.is_file() and p.suffix in (".py", ".md")
                                   for p in (out / n).iterdir()))]
        if present and (not force or foreign):
            raise OptionError(
                f"{option}={out}: directory is not empty ({', '.join(present[:4])}"
                f"{', ...' if len(present) > 4 else ''}); give an empty or new directory"
                + ("" if foreign else ", or --force to replace the earlier bundle"))
        for name in present:
            if name == REPRO_DIR:
                for script in (out / name).iterdir():
                    script.unlink()
                (out / name).rmdir()
            else:
                (out / name).unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
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
    return out


def output_file(path: Path | str, *, option: str) -> Path:
    """Check that the file ``path`` (given to ``option``) can be written: not a directory,
    in a directory that exists and is writable. A file that was absent stays absent.
    Raises OptionError naming the option, the path and the cause."""
    out = Path(path)
    if out.is_dir():
        raise OptionError(f"{option}={out}: is a directory; give a file path")
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
    from conformance.certification.catalog import known_failures as known
    from conformance.certification.verdict import profiles
    from conformance.certification.catalog import waivers as waiver_file

    try:
        if profile != "none":
            profiles.load(profile)
        if waivers:
            waiver_file.parse(Path(waivers))
    except ValueError as err:
        raise OptionError(str(err).splitlines()[0]) from None
    for path in known_failures:
        try:
            known.parse(Path(path))
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
            raise OptionError(f"--plugin-options: {name}={value!r} is not {_NAMED_VALUE_TYPES}")
        if known is None:
            continue
        if name not in known:
            raise OptionError(f"--plugin-options: unknown create option {name!r} of "
                              f"{os.path.basename(library)}; accepted: {', '.join(known)}")
        kind, low, high = known[name]
        if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
            raise OptionError(f"--plugin-options: {name}={value!r}; accepted: an int from "
                              f"{low} to {high}")


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
