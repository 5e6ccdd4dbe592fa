"""Standalone reproductions: ``repro/<test>.py`` in the bundle for every failure that
recorded enough to re-run it.

Each script is the template ``conformance/templates/repro.py.tmpl`` with the failure's
facts embedded as JSON (``DATA``), and runs the checks of ``repro/pjrt_repro.py``
(:data:`SHARED`, from ``templates/pjrt_repro.py.tmpl``), written once per bundle: about
9 kB of code that each of a bundle's 10-60 scripts would otherwise repeat. ``DATA`` holds the drawn inputs and the expected array (from
``failures[].arrays``, :mod:`conformance.helpers.reproduction`), the StableHLO
program, the assertion that rejected the result and its options. It needs numpy and
ml_dtypes, and jax (jaxlib's built-in clients) or pypjrt (a PJRT C API plugin: the
script finds its library on the reader's machine from ``--plugin-library PATH``, else
the environment variable :data:`ENV`, else the installed Python package that held it
on the recording machine, :func:`~conformance.certification.local_paths.library_locator`);
never pytest or this suite, and no absolute path of the recording machine. A
partitioned program (``failures[].arrays.sharding``,
:func:`conformance.helpers.reproduction.placement`) runs partitioned: compiled with
``num_partitions`` = the mesh size and run across the same devices, so the SPMD
partitioner runs as in the test. Exit status (:data:`EXIT_CODES`): 0 fixed, 1 present,
2 cannot run, each with one line and never a traceback; a crash kills it by a signal.

Kinds (:func:`kind`): ``execute`` (program, inputs and comparison recorded; a
program of several partitions only with its placement),
``transfer`` (a wrong round trip of the transfer areas with its inputs recorded),
``sequence`` (a failing sequence of the sequences area, kept by the test as a whole
script of straight-line ``runtime`` calls, :mod:`conformance.programs.sequence_script`;
it needs this project's ``runtime`` package and jax) and ``lifetime`` (``test_use_after_delete_raises[<method>]``: the method on a deleted
jax array must raise). ``repro/README.md`` lists every failure with its script or
why it has none.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import conformance
from conformance.helpers import partitioned
from conformance.certification import local_paths

DIR = "repro"
#: The environment variable naming the plugin library on the reader's machine.
ENV = "PJRT_CONFORMANCE_PLUGIN_LIBRARY"
#: Exit status of every reproduction and what it means.
EXIT_CODES = {0: "fixed: the backend gives the correct result",
              1: "present: the defect is still there",
              2: "cannot run: no plugin library found, a module missing, too few devices, "
                 "or an error raised while setting up, compiling or running (not the "
                 "recorded defect)"}
_PARTITIONS = re.compile(r"mhlo\.num_partitions\s*=\s*(\d+)")
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
    """``"execute"``, ``"transfer"``, ``"lifetime"``, ``"sequence"`` or None (nothing
    recorded that a standalone script can re-run) for one ``failures[]`` entry."""
    arrays = record.get("arrays") or {}
    if isinstance(record.get("sequence"), dict) \
            and isinstance(record["sequence"].get("script"), str):
        return "sequence"
    if record.get("program_text") and arrays.get("inputs") and arrays.get("expected") \
            and arrays.get("assertion"):
        return "execute" if arrays.get("sharding") or partitions(record) == 1 else None
    if record.get("status") == "fail_wrong_result" and record.get("area") in _TRANSFER_AREAS \
            and arrays.get("inputs"):
        return "transfer"
    if _LIFETIME.search(record.get("nodeid", "")):
        return "lifetime"
    return None


def partitions(record: dict[str, Any]) -> int:
    """The ``mhlo.num_partitions`` of the record's program (1 when not stated)."""
    found = _PARTITIONS.search(record.get("program_text") or "")
    return int(found.group(1)) if found else 1


def _backend(doc: dict[str, Any]) -> dict[str, Any]:
    """How a script reaches the run's backend: the C API plugin's library (where to
    find it on the reader's machine: ``package``, ``file``, ``distribution``,
    ``sha256``) or jax's."""
    p = doc.get("platform") or {}
    loaded = p.get("loaded") or {}
    if loaded.get("how") == "PJRT C API plugin" and loaded.get("library_path"):
        path = loaded["library_path"]
        where = loaded.get("library_locator") or (
            None if path.startswith("package ") else local_paths.library_locator(path)) \
            or {"package": None, "file": None}
        dist = (p.get("plugin_package") or {}).get("distribution") \
            if isinstance(p.get("plugin_package"), dict) else None
        return {"via": "capi", "options": loaded.get("options") or {},
                "library": {"package": where.get("package"), "file": where.get("file"),
                            "distribution": dist, "sha256": loaded.get("library_sha256")}}
    return {"via": "jax", "library": None, "options": {}}


def script(record: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """The standalone script for ``record`` (a ``failures[]`` entry of report ``doc``),
    or None when :func:`kind` finds nothing to re-run. Raises TypeError for
    arguments that are not dicts."""
    if not isinstance(record, dict) or not isinstance(doc, dict):
        raise TypeError("script: arguments 'record' and 'doc' must be report dicts")
    what = kind(record)
    if what is None:
        return None
    if what == "sequence":  # written whole by the test (straight-line runtime calls)
        return local_paths.redact(record["sequence"]["script"])
    arrays = record.get("arrays") or {}
    backend = _backend(doc)
    if what == "lifetime":  # a jaxlib Array method: plain jax on the built-in client
        backend = {"via": "jax", "library": None, "options": {}}
    sharding = arrays.get("sharding") if what == "execute" else None
    devices = int(doc.get("cpu_devices") or 1)
    if sharding:
        devices = max(devices, max(sharding["device_ids"]) + 1)
    data = {"check": what, "nodeid": record["nodeid"], "via": backend["via"],
            "library": backend["library"], "client_options": backend["options"],
            "platform": (doc.get("platform") or {}).get("name") or "cpu",
            "devices": devices, "sharding": sharding,
            "program": record.get("program_text"), "inputs": arrays.get("inputs"),
            "expected": arrays.get("expected"), "assertion": arrays.get("assertion"),
            "options": arrays.get("options") or {},
            "output_index": arrays.get("output_index"),
            "compiler_pass": {k: (record.get("compiler_pass") or {}).get(k)
                              for k in ("pass", "reason")}
            if record.get("compiler_pass") else None}
    if what == "lifetime":
        data["method"] = _LIFETIME.search(record["nodeid"]).group(1)
    data = local_paths.redact_tree(data)
    text = json.dumps(data, indent=1).replace("'", "\\u0027")  # goes into r'''...'''
    env = doc.get("environment") or {}
    needs = (f"numpy, ml_dtypes, pypjrt and the plugin {_library_words(backend['library'])}"
             if backend["via"] == "capi" else f"numpy, ml_dtypes, jax=={env.get('jax')}")
    if sharding:
        needs += (f" ({sharding['partitions']} partitions over devices "
                  f"{sharding['device_ids']}: {devices} {data['platform']} devices)")
    if what == "lifetime":
        needs += " (jax's built-in CPU client: the method is jaxlib's Array's)"
    fields = {"SUITE": f"pjrt-conformance {conformance.__version__}",
              "NODEID": record["nodeid"], "STATUS": record["status"],
              "BACKEND": _describe(doc), "NEEDS": needs}
    out = _template("repro.py.tmpl")
    for key, value in fields.items():  # into a raw docstring: no closing quotes
        out = out.replace(f"@@{key}@@", str(value).replace('"' * 3, "'" * 3))
    return out.replace("@@DATA@@", text)


def _library_words(lib: dict[str, Any]) -> str:
    """The plugin library as the ``needs:`` line names it (no path)."""
    if lib.get("package"):
        dist = f" (pip install {lib['distribution']})" if lib.get("distribution") else ""
        return f"library {lib['file']} of the Python package {lib['package']}{dist}"
    return (f"library {lib.get('file') or '(name not recorded)'}: pass --plugin-library "
            f"PATH or set {ENV}")


def _template(name: str) -> str:
    return resources.files("conformance").joinpath("templates", name).read_text(
        encoding="utf-8")


def shared() -> str:
    """The text of :data:`SHARED`, the checks every script imports from its folder: the
    template with the functions of :data:`conformance.helpers.partitioned.STANDALONE`
    copied in (their source: one implementation of the partitioned C API run and of
    the DeviceAssignmentProto encoder for the suite and the scripts)."""
    code = "\n\n".join(inspect.getsource(getattr(partitioned, name)).rstrip()
                       for name in partitioned.STANDALONE)
    return (_template(SHARED + ".tmpl")
            .replace("@@SUITE@@", f"pjrt-conformance {conformance.__version__}")
            .replace("@@PARTITIONED@@", code))


def _describe(doc: dict[str, Any]) -> str:
    p = doc.get("platform") or {}
    env = doc.get("environment") or {}
    version = " ".join(str(p.get("platform_version", "")).split())
    return f"{p.get('name')} {version} (jaxlib {env.get('jaxlib')})"


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
                          "`python3 repro/<file> [--plugin-library PATH]` runs from any "
                          "folder. A C API plugin's library is, in this order: "
                          f"`--plugin-library PATH`, the environment variable `{ENV}`, "
                          "the plugin's installed Python package; one line says which. "
                          "Exit status, with one line and never a traceback:", "",
                          *[f"- {k}: {v}" for k, v in EXIT_CODES.items()],
                          "- killed by a signal: the backend crashed", "",
                          "| test | status | reproduction |", "|---|---|---|"]
    for record in failures:
        text = script(record, doc)
        if text is None:
            why = ("a program of several partitions recorded without its mesh and "
                   "shardings" if partitions(record) > 1 else
                   "no program, inputs and expected value recorded")
            lines.append(f"| `{record['nodeid']}` | {record['status']} | none: {why}; run "
                         f"`{local_paths.redact(record.get('command'))}` |")
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
