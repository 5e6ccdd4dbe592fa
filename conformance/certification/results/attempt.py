"""The record of one certification attempt of a backend (``attempt.json``).

``reports/certify-plugins.sh`` writes one per backend folder after each attempt, whether
or not a bundle came out, so that the scoreboard can say why a plugin has no bundle
from a real attempt, not a guess::

    python -m conformance.certification.results.attempt OUT/attempt.json --backend NAME
        --exit-code N --seconds S [--package P] [--library PATH] [--bundle DIR]
        [--error-file FILE] [--command TEXT]

Fields: ``backend``, ``package`` and ``package_version`` (None when not installed),
``library``, ``command``, ``exit_code``, ``seconds`` (wall time of the run),
``bundle`` (the bundle directory when it holds a ``report.json``, else None),
``error`` (the last lines of the run's stderr when no bundle came out, else None),
``utc`` (ISO 8601 time the record was written).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
from pathlib import Path
from typing import Any

from conformance import file_limits
from conformance.certification import local_paths
from conformance.certification import jsontext

#: Lines of stderr kept as the reason a run gave no bundle.
ERROR_LINES = 15
FIELDS = ("backend", "package", "package_version", "library", "command", "exit_code",
          "seconds", "bundle", "error", "utc")


def record(*, backend: str, exit_code: int, seconds: float, package: str = "",
           library: str = "", bundle: str = "", error_text: str = "",
           command: str = "") -> dict[str, Any]:
    """The attempt record (see the module docstring). Local absolute paths in
    ``library``, ``command`` and ``error_text`` are redacted as in a bundle
    (``local_paths.redact``: a plugin library becomes its path inside its package), since
    the record is committed beside the bundles. Raises ValueError for an empty
    ``backend`` or a negative ``seconds``."""
    if not backend:
        raise ValueError("record: argument 'backend' must be a non-empty str")
    if seconds < 0:
        raise ValueError(f"record: argument 'seconds' must be >= 0, got {seconds}")
    version = None
    if package:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = None
    made = bool(bundle) and (Path(bundle) / "report.json").is_file()
    lines = [local_paths.redact(ln) for ln in error_text.splitlines() if ln.strip()]
    library, command = local_paths.redact(library), local_paths.redact(command)
    return {"backend": backend, "package": package or None, "package_version": version,
            "library": library or None, "command": command or None,
            "exit_code": int(exit_code), "seconds": float(seconds),
            "bundle": str(bundle) if made else None,
            "error": None if made else ("\n".join(lines[-ERROR_LINES:]) or
                                        f"no bundle (exit code {exit_code})"),
            "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def read(path: Path) -> dict[str, Any]:
    """An ``attempt.json``; ValueError naming the file when it is not a JSON object with
    the fields above."""
    try:
        doc = jsontext.loads(file_limits.read_text(path, limit=file_limits.BUNDLE_FILE_LIMIT))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a readable attempt record ({err})") from err
    if not isinstance(doc, dict) or set(FIELDS) - set(doc):
        raise ValueError(f"{path}: an attempt record needs the fields {', '.join(FIELDS)}")
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.certification.results.attempt")
    parser.add_argument("output", type=Path)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--exit-code", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--package", default="")
    parser.add_argument("--library", default="")
    parser.add_argument("--bundle", default="")
    parser.add_argument("--error-file", type=Path)
    parser.add_argument("--command", default="")
    args = parser.parse_args(argv)
    error = ""
    if args.error_file is not None and args.error_file.is_file():
        error = args.error_file.read_text(encoding="utf-8", errors="replace")
    try:
        doc = record(backend=args.backend, exit_code=args.exit_code, seconds=args.seconds,
                     package=args.package, library=args.library, bundle=args.bundle,
                     error_text=error, command=args.command)
    except ValueError as err:
        parser.error(str(err))
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
