"""Standalone reproductions: ``repro/<test>.py`` in the bundle for every failure that
recorded enough to re-run it.

Each script is the template ``conformance/templates/repro.py.tmpl`` with the failure's
facts embedded as JSON (``DATA``), and runs the checks of ``repro/pjrt_repro.py``
(:data:`SHARED`, from ``templates/pjrt_repro.py.tmpl``), written once per bundle: about
9 kB of code that each of a bundle's 10-60 scripts would otherwise repeat. ``DATA`` holds the drawn inputs and the expected array (from
``failures[].arrays``, :mod:`conformance.helpers.reproduction`), the StableHLO
program, the assertion that rejected the result and its options. It needs numpy and
ml_dtypes, and jax (jaxlib's built-in clients) or pypjrt (a PJRT C API plugin, whose
library path it names); never pytest or this suite. It exits 1 while the defect is
present, 0 when the backend is correct, 2 when a module it needs is missing; a crash
ends it non-zero too.

Kinds (:func:`kind`): ``execute`` (program, inputs and comparison recorded),
``transfer`` (a wrong round trip of the transfer areas with its inputs recorded) and
``lifetime`` (``test_use_after_delete_raises[<method>]``: the method on a deleted
jax array must raise). ``repro/README.md`` lists every failure with its script or
why it has none.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import conformance

DIR = "repro"
#: The checks every script of a bundle imports (from the script's own folder).
SHARED = "pjrt_repro.py"
_TRANSFER_AREAS = ("transfer", "host_buffer_semantics")
_LIFETIME = re.compile(r"test_lifecycle\.py::test_use_after_delete_raises\["
                       r"(is_ready|clone|block_until_ready|on_device_size_in_bytes|asarray)\]$")


def file_name(nodeid: str) -> str:
    """``conformance/test_x.py::test_y[a-b]`` -> ``test_x.test_y-a-b.py`` (characters
    other than letters, digits, ``_``, ``-`` and ``.`` become ``_``; over 100
    characters: cut, with 8 hex digits of the id's sha256)."""
    if not isinstance(nodeid, str) or not nodeid:
        raise ValueError(f"file_name: argument 'nodeid' must be a non-empty test id, "
                         f"got {nodeid!r}")
    path, _, name = nodeid.partition("::")
    stem = Path(path).stem + ("." + name if name else "")
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", stem.replace("[", "-").rstrip("]"))
    if len(stem) > 100:
        stem = stem[:91] + "-" + hashlib.sha256(nodeid.encode()).hexdigest()[:8]
    return stem + ".py"


def kind(record: dict[str, Any]) -> str | None:
    """``"execute"``, ``"transfer"``, ``"lifetime"`` or None (nothing recorded that a
    standalone script can re-run) for one ``failures[]`` entry."""
    arrays = record.get("arrays") or {}
    if record.get("program_text") and arrays.get("inputs") and arrays.get("expected") \
            and arrays.get("assertion"):
        return "execute"
    if record.get("status") == "fail_wrong_result" and record.get("area") in _TRANSFER_AREAS \
            and arrays.get("inputs"):
        return "transfer"
    if _LIFETIME.search(record.get("nodeid", "")):
        return "lifetime"
    return None


def _backend(doc: dict[str, Any]) -> dict[str, Any]:
    """How a script reaches the run's backend: the C API plugin's library or jax's."""
    loaded = (doc.get("platform") or {}).get("loaded") or {}
    if loaded.get("how") == "PJRT C API plugin" and loaded.get("library_path"):
        return {"via": "capi", "library_path": loaded["library_path"],
                "options": loaded.get("options") or {}}
    return {"via": "jax", "library_path": None, "options": {}}


def script(record: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """The standalone script for ``record`` (a ``failures[]`` entry of report ``doc``),
    or None when :func:`kind` finds nothing to re-run. Raises TypeError for
    arguments that are not dicts."""
    if not isinstance(record, dict) or not isinstance(doc, dict):
        raise TypeError("script: arguments 'record' and 'doc' must be report dicts")
    what = kind(record)
    if what is None:
        return None
    arrays = record.get("arrays") or {}
    backend = _backend(doc)
    if what == "lifetime":  # a jaxlib Array method: plain jax on the built-in client
        backend = {"via": "jax", "library_path": None, "options": {}}
    data = {"check": what, "nodeid": record["nodeid"], "via": backend["via"],
            "library_path": backend["library_path"], "client_options": backend["options"],
            "platform": (doc.get("platform") or {}).get("name") or "cpu",
            "devices": int(doc.get("cpu_devices") or 1),
            "program": record.get("program_text"), "inputs": arrays.get("inputs"),
            "expected": arrays.get("expected"), "assertion": arrays.get("assertion"),
            "options": arrays.get("options") or {}}
    if what == "lifetime":
        data["method"] = _LIFETIME.search(record["nodeid"]).group(1)
    text = json.dumps(data, indent=1).replace("'", "\\u0027")  # goes into r'''...'''
    env = doc.get("environment") or {}
    needs = (f"numpy, ml_dtypes, pypjrt and the plugin {backend['library_path']}"
             if backend["via"] == "capi" else f"numpy, ml_dtypes, jax=={env.get('jax')}")
    if what == "lifetime":
        needs += " (jax's built-in CPU client: the method is jaxlib's Array's)"
    fields = {"SUITE": f"pjrt-conformance {conformance.__version__}",
              "NODEID": record["nodeid"], "STATUS": record["status"],
              "BACKEND": _describe(doc), "NEEDS": needs}
    out = _template("repro.py.tmpl")
    for key, value in fields.items():  # into a raw docstring: no closing quotes
        out = out.replace(f"@@{key}@@", str(value).replace('"' * 3, "'" * 3))
    return out.replace("@@DATA@@", text)


def _template(name: str) -> str:
    return resources.files("conformance").joinpath("templates", name).read_text(
        encoding="utf-8")


def shared() -> str:
    """The text of :data:`SHARED`, the checks every script imports from its folder."""
    return _template(SHARED + ".tmpl").replace("@@SUITE@@",
                                               f"pjrt-conformance {conformance.__version__}")


def _describe(doc: dict[str, Any]) -> str:
    p = doc.get("platform") or {}
    env = doc.get("environment") or {}
    return f"{p.get('name')} {p.get('platform_version', '')} (jaxlib {env.get('jaxlib')})"


def write(doc: dict[str, Any], out_dir: Path) -> list[str]:
    """Write ``repro/<file_name>.py`` for every failure of ``doc`` that has a script,
    ``repro/README.md`` and, when there is a script, :data:`SHARED`; return their paths
    relative to ``out_dir`` (posix), or [] when ``doc`` has no failures."""
    failures = doc.get("failures") or []
    if not failures:
        return []
    folder = Path(out_dir) / DIR
    folder.mkdir(parents=True, exist_ok=True)
    written, lines = [], ["# Standalone reproductions", "",
                          "`python3 repro/<file>` exits 1 while the defect is present, 0 "
                          "when the backend is correct, 2 when a module it needs is "
                          "missing (a crash: killed by a signal).", "",
                          "| test | status | reproduction |", "|---|---|---|"]
    for record in failures:
        text = script(record, doc)
        if text is None:
            lines.append(f"| `{record['nodeid']}` | {record['status']} | none: no program, "
                         f"inputs and expected value recorded; run `{record.get('command')}` |")
            continue
        name = file_name(record["nodeid"])
        (folder / name).write_text(text, encoding="utf-8")
        written.append(f"{DIR}/{name}")
        lines.append(f"| `{record['nodeid']}` | {record['status']} | [`{name}`]({name}) |")
    if written:
        (folder / SHARED).write_text(shared(), encoding="utf-8")
        written.append(f"{DIR}/{SHARED}")
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written + [f"{DIR}/README.md"]
