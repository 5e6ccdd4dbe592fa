"""The results log of a run as a file: plain ``results.jsonl`` while the run writes it,
``results.jsonl.xz`` once its bundle is written. Every reader and writer of the file
goes through this module.

While tests run, pytest-reportlog appends one JSON line per phase report to
``results.jsonl`` (flushed: after a SIGKILL the file reads back up to its last whole
line, :func:`records`). When the bundle is written (the end of a run, ``finalize``,
``merge``), :func:`pack` replaces it with ``results.jsonl.xz``: each test report slimmed
to the fields its readers use (:func:`slim`), xz-compressed, the plain log's mtime kept;
the manifest lists the packed file. A CPU run's 8-10 MB log packs to about 150 kB.

Bundles written before packing list ``results.jsonl`` in a manifest that may be signed.
:func:`compress` stores such a log as ``results.jsonl.xz`` byte for byte (nothing
slimmed), and :func:`listed_sha256` checks the manifest entry ``results.jsonl`` against
the decompressed bytes, so the manifest and its signature stay valid.
"""

from __future__ import annotations

import errno
import hashlib
import json
import lzma
import os
from pathlib import Path
from typing import Any, Iterable

from conformance import file_limits
from conformance.certification import jsontext

LOG = "results.jsonl"
PACKED = LOG + ".xz"
#: Bundle files that may be stored as ``<name>.xz`` holding their exact bytes, the
#: manifest still listing ``<name>`` (:func:`store_xz`): the results log and, in a
#: committed bundle (``pjrt-conformance rerender``), ``junit.xml`` (one testcase per
#: result: 0.4-0.5 MB for a CPU run, 40 kB packed).
STORABLE = (LOG, "junit.xml")
#: xz settings of :func:`pack` and :func:`compress` (deterministic: same bytes in, same out).
PRESET = 9 | lzma.PRESET_EXTREME
#: Presets that :func:`pack` falls back to when :data:`PRESET` finds no memory (9e: about
#: 700 MB, 6: about 100 MB, 1: about 10 MB of compressor memory).
FALLBACK = (6, 1)
#: Fields of a test report that its readers use: records.Collector (``finalize``) reads
#: nodeid, location, when, outcome, longrepr, duration and user_properties,
#: shards.durations_from_log (``durations``) nodeid, location and duration; the rest are
#: pytest's own (``keywords`` is required by ``TestReport._from_json``, kept empty).
KEPT = ("$report_type", "nodeid", "location", "when", "outcome", "longrepr", "duration",
        "user_properties", "wasxfail", "rerun")
_XZ_MAGIC = b"\xfd7zXZ\x00"
_CHUNK = 1 << 20


def locate(directory: Path | str) -> Path | None:
    """The results log of the run directory or bundle ``directory``: the plain log when
    present (a run in progress or killed), else the packed one, else None. Raises
    ValueError when one of them is there but not a regular file (a FIFO would block its
    reader, a link may lead anywhere)."""
    for name in (LOG, PACKED):
        path = Path(directory) / name
        if path.is_file() and not path.is_symlink():
            return path
        if os.path.lexists(path):   # a FIFO, a link, a directory: never opened
            raise ValueError(f"{path}: is not a regular file; a results log is one")
    return None


def resolve(path: Path | str) -> Path:
    """The log that ``path`` names: a log file (plain or packed), a bundle directory, or
    ``.../results.jsonl`` of a bundle that holds only ``results.jsonl.xz``.
    Raises FileNotFoundError when there is none."""
    path = Path(path)
    found = locate(path) if path.is_dir() else path if path.is_file() else \
        locate(path.parent) if path.name == LOG else None
    if found is None:
        raise FileNotFoundError(f"{path}: no {LOG} or {PACKED} there")
    return found


def _is_packed(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(len(_XZ_MAGIC)) == _XZ_MAGIC


def _log_bytes(path: Path) -> bytes:
    """The log's bytes, unpacked when packed, within :mod:`conformance.file_limits`' caps
    (a decompression bomb is a :class:`~conformance.file_limits.FileLimitError`, a
    ValueError, never the whole output in memory)."""
    if _is_packed(path):
        return file_limits.read_xz(path)
    return file_limits.read_bytes(path, what="results log", limit=file_limits.DECOMPRESSED_LIMIT)


def read_lines(path: Path | str) -> list[str]:
    """The text lines of the log file ``path``, plain or xz-compressed (told by its
    first bytes). Raises OSError for an unreadable file, ValueError for a corrupt or
    cut-off xz file or text that is not UTF-8."""
    path = Path(path)
    try:
        raw = _log_bytes(path)
        return raw.decode("utf-8").splitlines()
    except (lzma.LZMAError, EOFError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: unreadable results log ({err})") from None


def records(path: Path | str, dropped: list[int] | None = None) -> list[Any]:
    """The JSON lines of the log file ``path`` (plain or packed), parsed; a last line cut
    off by a kill is skipped. Any other line that is not JSON: ValueError naming it, or,
    with a list ``dropped``, its number (1-based) appended there and the line skipped
    (and see :func:`numbered`)."""
    return [record for _, record in numbered(path, dropped)]


def numbered(path: Path | str, dropped: list[int] | None = None) -> list[tuple[int, Any]]:
    """(line number, parsed JSON line) of the log file ``path`` (plain or packed), lines
    split at ``\\n`` only, as pytest-reportlog writes them (see :func:`records` for the
    lines that are not JSON). Raises OSError for an unreadable file, ValueError for a
    corrupt or cut-off xz file."""
    path = Path(path)
    try:
        raw = _log_bytes(path)
    except (lzma.LZMAError, EOFError) as err:
        raise ValueError(f"{path}: unreadable results log ({err})") from None
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    found = []
    for n, line in enumerate(lines, 1):
        try:
            found.append((n, _parse(line)))
        except ValueError as err:
            if n == len(lines):   # cut off by a kill or a full disk: skipped, and named
                if dropped is not None:   # to whoever keeps a list of what was dropped
                    dropped.append(n)
                break
            if dropped is None:
                raise ValueError(f"{path} line {n}: not JSON ({err})") from None
            dropped.append(n)
    return found


def _parse(line: bytes) -> Any:
    """One log line parsed; ValueError (json.JSONDecodeError, UnicodeDecodeError) when it
    is not a JSON text in UTF-8."""
    return jsontext.loads(line.decode("utf-8"))


def slim(record: Any) -> Any:
    """A test report (a dict whose ``$report_type`` is ``TestReport``) cut to :data:`KEPT`,
    ``keywords`` emptied and ``sections`` (captured output) kept of failed reports only;
    any other record unchanged; then no absolute path of this machine in any string
    (:func:`conformance.certification.local_paths.redact_tree`). Idempotent."""
    from conformance.certification import local_paths

    if not isinstance(record, dict) or record.get("$report_type") != "TestReport":
        return local_paths.redact_tree(record)
    out = {k: record[k] for k in KEPT if k in record}
    if "keywords" in record:
        out["keywords"] = {}
    if record.get("outcome") == "failed" and record.get("sections"):
        out["sections"] = record["sections"]
    return local_paths.redact_tree(out)


def write_packed(found: Iterable[Any], directory: Path | str,
                 mtime_ns: int | None = None) -> Path:
    """Write the log records ``found`` slimmed (:func:`slim`), one JSON line each, as
    ``directory/results.jsonl.xz``; return its path. ``mtime_ns``: its modification time
    (default: now). Raises OSError when it cannot be written, MemoryError when even the
    smallest xz preset finds no memory (see :func:`_stream_xz`)."""
    found = list(found)   # read again from the start if a smaller preset is tried
    return _stream_xz(lambda: ((json.dumps(slim(r), separators=(",", ":")) + "\n")
                               .encode("utf-8") for r in found),
                      Path(directory) / PACKED, mtime_ns)


def pack(directory: Path | str, skip: Iterable[int] = ()) -> Path | None:
    """Replace the plain log of ``directory`` by its packed form (see the module
    docstring); return the packed log's path, or None when there is no plain log.
    Streamed: one line in memory at a time, never the whole log. ``skip``: numbers of
    lines left out (bad lines that ``finalize`` dropped). Raises ValueError for another
    log line that is not JSON (except a cut-off last line), OSError when the packed log
    cannot be written, MemoryError when no xz preset finds memory; whatever it raises,
    the plain log is kept, rewritten by :func:`redact_plain` (:class:`NotRedacted` when
    even that failed)."""
    plain = Path(directory) / LOG
    if not plain.is_file():
        return None
    mtime = plain.stat().st_mtime_ns
    skip = frozenset(skip)
    try:
        packed = _stream_xz(lambda: _slim_lines(plain, skip), Path(directory) / PACKED, mtime)
    except (OSError, ValueError, MemoryError):
        redact_plain(directory)   # kept plain: still no absolute path of this machine
        raise
    plain.unlink()
    return packed


class NotRedacted(OSError):
    """The plain log could neither be packed nor rewritten without local paths
    (:func:`redact_plain`): it must not go into a bundle as it is."""


def redact_plain(directory: Path | str) -> Path | None:
    """Rewrite the plain log of ``directory`` (one that could not be packed and stays in
    the bundle) line by line with no absolute path of this machine: a JSON line through
    :func:`~conformance.certification.local_paths.redact_tree` (kept byte for byte
    when that changes nothing), any other line (corrupt, cut off) through
    :func:`~conformance.certification.local_paths.redact` of its text; every line
    kept, in order, and the log's mtime. Streamed, through a temporary file and a rename.
    Returns its path, None when there is no plain log; raises :class:`NotRedacted` when
    it cannot be rewritten (no space, no memory: the plain log is then as it was)."""
    plain = Path(directory) / LOG
    if not plain.is_file():
        return None
    tmp = plain.with_name(plain.name + ".tmp")
    try:
        mtime = plain.stat().st_mtime_ns
        with open(plain, "rb") as src, open(tmp, "wb") as dst:
            for line in src:
                dst.write(_redacted_line(line))
        os.utime(tmp, ns=(mtime, mtime))
        os.replace(tmp, plain)
    except (OSError, MemoryError) as err:
        why = getattr(err, "strerror", None) or str(err) or type(err).__name__
        raise NotRedacted(getattr(err, "errno", None) or errno.ENOMEM,
                          f"{plain}: neither packed nor rewritten without local paths "
                          f"({why})") from err
    finally:
        tmp.unlink(missing_ok=True)
    return plain


def _redacted_line(line: bytes) -> bytes:
    """One line of a plain log (its ``\\n`` kept) with no local absolute path."""
    from conformance.certification import local_paths

    body, end = (line[:-1], b"\n") if line.endswith(b"\n") else (line, b"")
    try:
        record = _parse(body)
    except (ValueError, RecursionError):   # corrupt: redacted as text, bytes kept
        text = body.decode("utf-8", "surrogateescape")
        return local_paths.redact(text).encode("utf-8", "surrogateescape") + end
    redacted = local_paths.redact_tree(record)
    return line if redacted == record else json.dumps(redacted).encode("utf-8") + end


def _slim_lines(plain: Path, skip: frozenset[int]) -> Iterable[bytes]:
    """The lines of the plain log ``plain`` slimmed (:func:`slim`), read one at a time;
    lines numbered in ``skip`` and a cut-off last line left out; ValueError for another
    line that is not JSON (raised once the next line shows it was not the last)."""
    bad: str | None = None
    with open(plain, "rb") as f:
        for n, line in enumerate(f, 1):
            if bad is not None:   # the line that was not JSON was not the last one
                raise ValueError(bad)
            if n in skip:
                continue
            try:
                record = _parse(line.rstrip(b"\n"))
            except ValueError as err:
                bad = f"{plain} line {n}: not JSON ({err})"
                continue
            yield (json.dumps(slim(record), separators=(",", ":")) + "\n").encode("utf-8")


def _chunks(path: Path) -> Iterable[bytes]:
    """The bytes of the file ``path``, :data:`_CHUNK` at a time."""
    with open(path, "rb") as f:
        yield from iter(lambda: f.read(_CHUNK), b"")


def _stream_xz(chunks: Any, target: Path, mtime_ns: int | None = None) -> Path:
    """Write the bytes that ``chunks()`` yields xz-compressed to ``target``, fed to the
    compressor one chunk at a time, through a temporary file and a rename (a kill leaves
    the old state, never half a file). :data:`PRESET` needs about 700 MB of memory: where
    it is refused (``ulimit -v``, MemoryError) the smaller presets of :data:`FALLBACK`
    are tried, each from the start (the file is the same log, only larger); MemoryError
    when none fits."""
    tmp = target.with_name(target.name + ".tmp")
    try:
        for n, preset in enumerate((PRESET, *FALLBACK)):
            try:
                compressor = lzma.LZMACompressor(preset=preset)
                with open(tmp, "wb") as f:
                    for chunk in chunks():
                        f.write(compressor.compress(chunk))
                    f.write(compressor.flush())
                break
            except MemoryError:
                if n == len(FALLBACK):
                    raise
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def compress(directory: Path | str) -> Path | None:
    """Store the plain log of the bundle ``directory`` as ``results.jsonl.xz`` holding
    the same bytes (its manifest entry ``results.jsonl`` stays valid, see
    :func:`listed_sha256`); return the packed path, None when there is no plain log.
    Raises OSError when it cannot be written (the plain log is then kept)."""
    return store_xz(directory, LOG)


def store_xz(directory: Path | str, name: str) -> Path | None:
    """Store the file ``name`` (one of :data:`STORABLE`) of the bundle ``directory`` as
    ``<name>.xz`` holding the same bytes; return that path, None when there is no plain
    ``name``. ValueError for another name; OSError when it cannot be written (the plain
    file is then kept)."""
    if name not in STORABLE:
        raise ValueError(f"store_xz: argument 'name' must be one of {STORABLE}, got {name!r}")
    plain = Path(directory) / name
    if not plain.is_file():
        return None
    packed = _stream_xz(lambda: _chunks(plain), Path(directory) / (name + ".xz"),
                        mtime_ns=plain.stat().st_mtime_ns)
    plain.unlink()
    return packed


def read_stored(directory: Path | str, name: str) -> bytes:
    """The bytes of the bundle file ``name``, plain or stored as ``<name>.xz``
    (:func:`store_xz`). Raises FileNotFoundError when neither exists, ValueError for a
    corrupt xz file."""
    path = Path(directory) / name
    if path.is_file() or name not in STORABLE:
        return path.read_bytes()
    try:
        return file_limits.read_xz(Path(directory) / (name + ".xz"))
    except (lzma.LZMAError, EOFError) as err:
        raise ValueError(f"{name}.xz is not a valid xz file ({err})") from None


def listed_sha256(directory: Path | str, name: str) -> str | None:
    """The sha256 (hex) that the manifest entry ``name`` of the bundle ``directory`` is
    checked against: that of the file ``name``; for ``results.jsonl`` (or another file of
    :data:`STORABLE`) stored only as ``results.jsonl.xz`` (:func:`compress`,
    :func:`store_xz`), that of its decompressed bytes. None when
    there is no such file. Raises ValueError for a corrupt or cut-off xz file."""
    path = Path(directory) / name
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                digest.update(chunk)
        return digest.hexdigest()
    packed = Path(directory) / (name + ".xz")
    if name not in STORABLE or not packed.is_file():
        return None
    size = 0
    try:
        with lzma.open(packed, "rb") as f:   # streamed, and stopped at the cap
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                size += len(chunk)
                if size > file_limits.DECOMPRESSED_LIMIT:
                    raise ValueError(f"{packed.name} unpacks to more than "
                                     f"{file_limits.size_text(file_limits.DECOMPRESSED_LIMIT)}"
                                     ", past the cap of a results log")
                digest.update(chunk)
    except (lzma.LZMAError, EOFError) as err:
        raise ValueError(f"{packed.name} is not a valid xz file ({err})") from None
    return digest.hexdigest()


def stands_for(directory: Path | str, name: str) -> str | None:
    """The manifest entry that the file ``name`` of the bundle ``directory`` may stand
    for: ``results.jsonl`` for ``results.jsonl.xz`` when there is no plain log, and the
    same for the other files of :data:`STORABLE` (see :func:`listed_sha256`), else None."""
    stem = name[:-3] if name.endswith(".xz") else None
    return stem if stem in STORABLE and not (Path(directory) / stem).is_file() else None


def main(argv: list[str] | None = None) -> int:
    """``python -m conformance.certification.results.runlog BUNDLE...``: :func:`compress` the
    plain log of each bundle (committed bundles are re-written so); exit 2 for a path
    that is not a bundle directory."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    for arg in args:
        if not (Path(arg) / "MANIFEST.sha256").is_file():
            print(f"runlog: {arg}: not a bundle directory (no MANIFEST.sha256)",
                  file=sys.stderr)
            return 2
        before = Path(arg) / LOG
        size = before.stat().st_size if before.is_file() else None
        packed = compress(arg)
        print(f"{arg}: " + (f"{LOG} {size} B -> {PACKED} {packed.stat().st_size} B"
                            if packed else f"no plain {LOG}, nothing to do"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
