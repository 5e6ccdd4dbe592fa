"""Waivers (``--waivers FILE``): a vendor's documented exceptions, each with an issue and an
expiry date.

TOML, one ``[[waiver]]`` table each::

    [[waiver]]
    test = "test_transfer.py::test_round_trip_bit_exact[{device}-float8_e3m4]"  # profile id glob
    issue = "https://github.com/vendor/plugin/issues/12"
    expires = 2027-03-31
    reason = "float8_e3m4 transfers land in release 2.1"

``test`` is a glob (``*`` only) over profile ids. A waiver turns ``fail_error``,
``not_supported`` or ``skipped`` into ``waived``. It never applies to
``fail_wrong_result``, ``crash`` or ``timeout``: wrong results are never
waivable. Problems are errors in the report (and deny certification): a waiver
that matches no test, an expired one, one whose match is a wrong result, crash
or timeout.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import tomllib
from pathlib import Path
from typing import Any

from conformance import file_limits

WAIVABLE = ("fail_error", "not_supported", "skipped")
NEVER_WAIVABLE = ("fail_wrong_result", "crash", "timeout")
#: The keys of a ``[[waiver]]`` table (any other key is an error).
FIELDS = ("test", "issue", "expires", "reason")


@dataclasses.dataclass(frozen=True)
class Waiver:
    """One entry: ``test`` glob, ``issue`` URL, ``expires`` date, ``reason``."""

    test: str
    issue: str
    expires: datetime.date
    reason: str

    def matches(self, pid: str) -> bool:
        regex = ".*".join(re.escape(part) for part in self.test.split("*"))
        return re.fullmatch(regex, pid) is not None

    def as_dict(self) -> dict[str, Any]:
        return {"test": self.test, "issue": self.issue, "expires": self.expires.isoformat(),
                "reason": self.reason}


def parse(path: Path) -> list[Waiver]:
    """Waivers of a TOML file. Raises ValueError naming the file and entry for an
    unknown key (top level: only ``[[waiver]]``; in an entry: :data:`FIELDS`), a
    missing or malformed field (``issue`` must be an http(s) URL, ``expires`` a
    TOML date)."""
    try:
        doc = file_limits.toml_loads(file_limits.read_text(path, what="--waivers"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"--waivers {path}: {err}") from err
    unknown = sorted(set(doc) - {"waiver"})
    if unknown:
        raise ValueError(f"--waivers {path}: unknown key {unknown[0]!r}; accepted: [[waiver]] "
                         "tables")
    entries = doc.get("waiver", [])
    if not isinstance(entries, list):
        raise ValueError(f"--waivers {path}: expected [[waiver]] tables")
    waivers = []
    for i, entry in enumerate(entries, 1):
        where = f"--waivers {path}: waiver #{i}"
        extra = sorted(set(entry) - set(FIELDS))
        if extra:
            raise ValueError(f"{where}: unknown key {extra[0]!r}; accepted: {', '.join(FIELDS)}")
        test, issue = entry.get("test"), entry.get("issue")
        expires, reason = entry.get("expires"), entry.get("reason", "")
        if not isinstance(test, str) or not test:
            raise ValueError(f"{where}: 'test' must be a non-empty profile id glob, got {test!r}")
        if not isinstance(issue, str) or not re.match(r"https?://\S+$", issue):
            raise ValueError(f"{where}: 'issue' must be an http(s) URL, got {issue!r}")
        if not isinstance(expires, datetime.date) or isinstance(expires, datetime.datetime):
            raise ValueError(f"{where}: 'expires' must be a TOML date like 2027-03-31, "
                             f"got {expires!r}")
        if not isinstance(reason, str):
            raise ValueError(f"{where}: 'reason' must be a str, got {reason!r}")
        waivers.append(Waiver(test, issue, expires, reason))
    return waivers


def unmatched_error(w: Waiver) -> str:
    """The report error of a waiver that matches no test of the run."""
    return f"waiver {w.test!r} ({w.issue}) matches no test of this run"


def apply(waivers: list[Waiver], results: list[dict[str, Any]],
          today: datetime.date) -> list[str]:
    """Mark waived results in place (``status`` -> ``waived``, ``waived_from``,
    ``waiver``); return the errors: unmatched, expired and never-waivable matches."""
    errors = []
    for w in waivers:
        hits = [r for r in results if w.matches(r["test_id"])]
        if not hits:
            errors.append(unmatched_error(w))
            continue
        if w.expires < today:
            errors.append(f"waiver {w.test!r} ({w.issue}) expired on {w.expires.isoformat()}")
            continue
        for r in hits:
            if r["status"] in NEVER_WAIVABLE:
                errors.append(f"waiver {w.test!r} ({w.issue}) covers {r['nodeid']} with status "
                              f"{r['status']}: wrong results, crashes and timeouts are never "
                              "waivable")
            elif r["status"] in WAIVABLE:
                r["waived_from"], r["status"], r["waiver"] = r["status"], "waived", w.as_dict()
    return errors
