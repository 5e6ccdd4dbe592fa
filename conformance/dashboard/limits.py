"""Machine limits: the device-limits files of GPU runs (``benchmarks/gpu/*.json``).

Schema ``pjrt-conformance/device-limits/1``::

    {"schema": "pjrt-conformance/device-limits/1", "device": str, "platform": str,
     "jax": str, "jaxlib": str, "measured_at": ISO 8601 str,
     "rows": [{"name": str, "unit": str, "value": float, "reference": str,
               "reference_value": float | null, "ratio": float | null}]}

:func:`load_dir` raises :class:`MalformedInput` naming the file and the key of the
first problem.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from pathlib import Path
from typing import Any

from conformance import file_limits
from conformance.certification import jsontext
from conformance.dashboard.errors import MalformedInput, UsageError

SCHEMA = "pjrt-conformance/device-limits/1"
_TOP = {"device": str, "platform": str, "jax": str, "jaxlib": str, "measured_at": str,
        "rows": list}
_ROW = {"name": (str,), "unit": (str,), "value": (int, float), "reference": (str,),
        "reference_value": (int, float, type(None)), "ratio": (int, float, type(None))}


@dataclasses.dataclass(frozen=True)
class Limits:
    """One file: its header fields and rows (dicts of the schema's row keys)."""

    source: Path
    header: dict[str, str]
    rows: list[dict[str, Any]]


def read(path: Path) -> Limits:
    """The device-limits file ``path``; MalformedInput on anything off-schema."""
    path = Path(path)
    try:
        doc = jsontext.loads(file_limits.read_text(path))   # no FIFO or device, 16 MiB
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise MalformedInput(f"{path}: not readable JSON ({' '.join(str(err).split())})") \
            from err
    if not isinstance(doc, dict):
        raise MalformedInput(f"{path}: expected a JSON object, got {type(doc).__name__}")
    if doc.get("schema") != SCHEMA:
        raise MalformedInput(f"{path}: key 'schema' is {doc.get('schema')!r}, expected "
                             f"{SCHEMA!r}")
    for key, kind in _TOP.items():
        if not isinstance(doc.get(key), kind):
            raise MalformedInput(f"{path}: key {key!r} is missing or not a "
                                 f"{'list' if kind is list else 'string'}")
    try:
        datetime.datetime.fromisoformat(doc["measured_at"])
    except ValueError as err:
        raise MalformedInput(f"{path}: key 'measured_at' is not an ISO 8601 time") from err
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, dict):
            raise MalformedInput(f"{path}: rows[{i}] is not an object")
        for key, kinds in _ROW.items():
            value = row.get(key, ...)
            if value is ... or isinstance(value, bool) or not isinstance(value, kinds) or (
                    isinstance(value, float) and not math.isfinite(value)):
                raise MalformedInput(f"{path}: rows[{i}] key {key!r} is missing or has "
                                     "the wrong type")
    header = {k: doc[k] for k in _TOP if k != "rows"}
    return Limits(source=path, header=header, rows=list(doc["rows"]))


def load_dir(folder: Path) -> list[Limits]:
    """Every ``*.json`` of ``folder``, sorted by name; [] when it has none. Raises
    UsageError when ``folder`` is not a directory."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such limits directory")
    return [read(p) for p in sorted(folder.glob("*.json"))]
