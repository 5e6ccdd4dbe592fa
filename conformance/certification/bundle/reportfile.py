"""Reading a report.json that may be anything: the first step of ``verify`` and ``diff``.

:func:`load` returns the document only when it is a JSON object of a schema this suite
reads (:data:`READS`: ``conformance/schema/report-v3.schema.json``, and
``report-v2.schema.json`` for older bundles) whose result ids are unique;
anything else -- a missing or unreadable file, truncated JSON, ``[]``, ``null``,
a string, a missing key, a wrong type, nesting of any depth -- raises
:class:`MalformedReport` with a one-line reason, so that no caller indexes into an
unchecked document.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema

from conformance.certification.bundle import entries
from conformance.certification.verdict.report import SCHEMA_VERSION
from conformance.certification import jsontext

SCHEMA_FILE = f"report-v{SCHEMA_VERSION}.schema.json"
#: The schema versions this suite reads: the current one, and 2 (evidence as strings,
#: read as legacy items by ``conformance.certification.attribution.attribution_sources.items``).
READS = (2, SCHEMA_VERSION)
_MAX_REASON = 240


class MalformedReport(ValueError):
    """report.json is missing, not JSON, or not a report of the schema (one-line message)."""


def _readable(version: Any) -> bool:
    """``version`` is a schema_version this suite reads: an int of :data:`READS` (not a
    bool, not ``3.0``, which names no schema file)."""
    return type(version) is int and version in READS


def schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The JSON Schema of report.json of ``schema_version`` ``version`` (one of
    :data:`READS`; ValueError naming the argument for any other)."""
    if not _readable(version):
        raise ValueError(f"argument 'version': expected one of {', '.join(map(str, READS))}, "
                         f"got {version!r}")
    text = resources.files("conformance").joinpath("schema", f"report-v{version}.schema.json")
    return json.loads(text.read_text())


def _fast_form(schema_doc: dict[str, Any]) -> dict[str, Any]:
    """``schema_doc`` as fastjsonschema reads it: its ``$schema`` names draft-07, whose
    meaning of every keyword the report schemas use is 2020-12's, given that no
    ``$ref`` has a sibling keyword (draft-07 ignores those; tests/test_report_schema_fast.py
    checks both schemas for it)."""
    return {**schema_doc, "$schema": "http://json-schema.org/draft-07/schema#"}


@functools.lru_cache(maxsize=None)
def _fast_validator(version: int) -> Callable[[Any], Any]:
    """fastjsonschema's compiled validator of schema ``version`` (once per process)."""
    return fastjsonschema.compile(_fast_form(schema(version)))


def fast_valid(doc: Any, version: int = SCHEMA_VERSION) -> bool:
    """True when fastjsonschema's compiled validator accepts ``doc`` as a report of
    schema ``version``: about 10 times faster than ``jsonschema`` on a report of ~3,000
    results (the compile, ~0.2 s, once per process), and never laxer: what it accepts
    ``jsonschema`` accepts (tests/test_report_schema_fast.py checks both on drawn
    damage to a real report). False says nothing: :func:`validate` then asks
    ``jsonschema``, whose answer and message are the ones reported."""
    try:
        _fast_validator(version)(doc)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON - 3] + "..."


def _type_name(value: Any) -> str:
    return {list: "a list", type(None): "null", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def validate(doc: Any, where: str = "report.json") -> dict[str, Any]:
    """``doc`` when it is a report of the schema; raises MalformedReport otherwise.

    Checks, in order: a JSON object; ``schema_version`` is one of :data:`READS`; the
    JSON Schema of that version (fastjsonschema first, :func:`fast_valid`; where it
    does not accept the document, ``jsonschema`` decides, and the error reported is its
    best match, with its path); every ``results[].nodeid`` is unique.
    """
    if not isinstance(doc, dict):
        raise MalformedReport(f"{where} is {_type_name(doc)}, not a JSON object (a report)")
    version = doc.get("schema_version")
    if not _readable(version):
        raise MalformedReport(f"{where} has schema_version {version!r}; this suite reads "
                              f"schema_version {' and '.join(map(str, READS))}")
    err = None if fast_valid(doc, version) else jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema(version)).iter_errors(doc))
    if err is not None:
        at = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise MalformedReport(_short(f"{where} does not match schema {version} at "
                                     f"{at}: {err.message}"))
    seen: set[str] = set()
    for r in doc["results"]:
        if r["nodeid"] in seen:
            raise MalformedReport(_short(f"{where} lists {r['nodeid']} more than once"))
        seen.add(r["nodeid"])
    return doc


def report_path(path: Path) -> Path:
    """``path/report.json`` for a bundle directory, ``path`` for a file.
    Raises FileNotFoundError when ``path`` does not exist, MalformedReport for a
    directory without report.json."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_dir() and not (path / "report.json").exists():
        raise MalformedReport(f"{path} has no report.json: not a report bundle")
    return path / "report.json" if path.is_dir() else path


def load(path: Path) -> dict[str, Any]:
    """The validated report of a bundle directory or a report.json file.

    Raises FileNotFoundError when ``path`` does not exist, MalformedReport when
    report.json is missing, unreadable, not JSON or not a report (see :func:`validate`).
    """
    target = report_path(path)
    try:
        text = entries.read_text(target)   # never blocks on a FIFO nor reads a device
    except (OSError, UnicodeDecodeError) as err:
        raise MalformedReport(_short(f"{target} is unreadable: {err}")) from err
    try:
        doc = jsontext.loads(text)
    except jsontext.TooDeep:
        raise MalformedReport(f"{target} is JSON nested too deeply to be a report") from None
    except json.JSONDecodeError as err:
        raise MalformedReport(_short(f"{target} is not valid JSON (truncated?): {err}")) \
            from err
    try:
        return validate(doc, str(target))
    except RecursionError:
        raise MalformedReport(f"{target} is JSON nested too deeply to be a report") from None
