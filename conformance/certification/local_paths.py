"""No absolute path of the recording machine in a bundle: :func:`redact` rewrites them.

A bundle is read on other machines, so a path of the machine that recorded it says
nothing there and tells about its owner. :func:`redact` rewrites, in any text:

- a file of an installed package (``.../site-packages/jax/_src/array.py``) to its
  path inside the package (``jax/_src/array.py``), and :func:`library_locator` turns a
  plugin library there into the package that holds it (``package
  fastatomstruct_xla_cpu, libpjrt_cpu.so``), which a reproduction imports to find the
  library on the reader's machine;
- a file of this repository's checkout (``/work/main/conformance/x.py``) to its path
  in the repository (``conformance/x.py``);
- any other absolute path under a local root (:data:`ROOTS`: ``/work``, ``/tmp``,
  ``/root``, ``/home``, ``/opt``, ...) or the user's home, current or temporary
  directory or Python prefix to ``<redacted>``.

:func:`redact_tree` applies it to every string of a JSON document (the report, the
results log's records, ``run.json``); :func:`offenders` finds what is left.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Top-level directories whose paths are local to the recording machine.
ROOTS = ("work", "tmp", "root", "home", "opt", "Users", "mnt", "scratch", "private", "var")
REDACTED = "<redacted>"
_CHAR = r"[^\s'\"`,;:()\[\]{}<>|=*?]"
#: A run of spaces inside a path component (``/Users/John Smith/venv``): spaces followed
#: by one more word and the path's next ``/`` (never the start of another path). A folder
#: name of three or more words (``/tmp/a b c/x``) keeps its tail: text after a path is
#: never taken for it (``/tmp/x is missing``).
_SPACE = r"[ \t]+(?=[^\s/'\"`,;:()\[\]{}<>|=*?]+/)"
_PATH = rf"(?:{_CHAR}|{_SPACE})"
#: A path up to an installed package's folder, spaces included anywhere within the line
#: (never before another ``/``: ``/tmp/x and /venv/site-packages/a.py``).
_PACKAGE_PATH = rf"(?:{_CHAR}|[ \t]+(?![ \t/]))"
#: A path starts here: not inside a word or another path, nor right after ``<redacted>``
#: (what :func:`redact` left: ``<redacted>/known.txt`` stays as it is).
_BEFORE = rf"(?<![\w.~-])(?<!{re.escape(REDACTED)})"
_PACKAGES = re.compile(rf"{_BEFORE}/{_PACKAGE_PATH}*/(?:site|dist)-packages/")  # to the last
#: The same path relative, or cut: pytest prints a file under its rootdir relatively
#: (``.venv/lib/python3.11/site-packages/conformance/x.py``), and a traceback kept to its
#: last characters (``records.TRACEBACK_CHARS``) can begin inside one
#: (``3.11/site-packages/jax/...``): a word of path characters, at the start of the text
#: or of a line, or after a blank, quote or bracket, up to an installed package's folder.
_PACKAGES_CUT = re.compile(rf"(?:\A|(?<=[\s\"'(\[=]))(?!/){_CHAR}*/(?:site|dist)-packages/")
_LOCAL = re.compile(rf"{_BEFORE}/(?:{'|'.join(ROOTS)})(?:/{_PATH}*)?(?![\w])")
#: The parameters of a pytest node id (``test_x.py::test_y[/tmp]``): a test id, never a
#: path of this machine, so never rewritten.
_NODE_PARAMS = re.compile(r"(?<=::)[A-Za-z_]\w*\[[^\]\n]*\]")
#: Keys of a JSON document whose string values are pytest node ids (never rewritten).
NODE_ID_KEYS = ("nodeid", "test_id")
#: What :func:`offenders` reports: a local root or an installed package's folder.
FOUND = re.compile(rf"(?<![\w.~>-])/(?:{'|'.join(ROOTS)})/|site-packages|dist-packages")


#: What every rewrite needs in the text first (a root, an installed package's folder);
#: a text without it, nor a prefix or the checkout, is returned as it is, unscanned.
_GATE = re.compile(rf"/(?:{'|'.join(ROOTS)})(?!\w)|(?:site|dist)-packages")


@functools.lru_cache(maxsize=1)
def _repository() -> str:
    return str(Path(__file__).resolve().parents[2]) + "/"


@functools.lru_cache(maxsize=1)
def _checkouts() -> list[str]:
    """The repository's checkout, as written and resolved."""
    return list(dict.fromkeys((_repository(), os.path.realpath(_repository()) + "/")))


def _prefixes() -> list[str]:
    """Local directories (longest first) that become ``<redacted>`` wherever they are
    (computed once per working directory: a bundle's strings are many)."""
    return list(_prefixes_in(os.getcwd()))


@functools.lru_cache(maxsize=4)
def _prefixes_in(cwd: str) -> tuple[str, ...]:
    found = set()
    for p in (os.path.expanduser("~"), cwd, tempfile.gettempdir(), sys.prefix,
              sys.base_prefix):
        p = os.path.realpath(p) if p else ""
        if p.count("/") >= 2 or (p.count("/") == 1 and len(p) > 4):
            found.add(p)
    return tuple(sorted(found, key=len, reverse=True))


def _keep_name(path: str, after: str) -> str:
    """``<redacted>`` for the local ``path``, followed by ``/NAME`` when the path goes on
    past ``after`` (its root or prefix) to a file name with an extension (``known.txt``):
    the file's name says what it was, not where or whose. Under ``/home`` and ``/Users``
    the first folder is a user's name, never kept (``/home/john.smith``)."""
    rest = path[len(after):].strip("/")
    name = rest.rpartition("/")[2]
    owner = after in ("/home", "/Users")
    if "." in name.strip(".") and " " not in name and ("/" in rest or not owner):
        return f"{REDACTED}/{name}"
    return REDACTED


def _outside_node_ids(text: str, rewrite: Any) -> str:
    """``rewrite(part)`` of every part of ``text`` that is not a pytest node id's
    parameters (:data:`_NODE_PARAMS`)."""
    out, last = [], 0
    for m in _NODE_PARAMS.finditer(text):
        out += [rewrite(text[last:m.start()]), m.group(0)]
        last = m.end()
    return "".join(out + [rewrite(text[last:])])


@functools.lru_cache(maxsize=8)
def _patterns(prefixes: tuple[str, ...]) -> tuple[re.Pattern, list[tuple[str, re.Pattern]]]:
    """The compiled patterns of the repository's checkout (anchored at a path boundary:
    ``/data/work/main/x`` is not in a checkout at ``/work/main``) and of ``prefixes``."""
    repo = _repository()
    checkout = "|".join(re.escape(p) for p in dict.fromkeys((repo, os.path.realpath(repo) + "/")))
    return re.compile(rf"{_BEFORE}(?:{checkout})"), [
        (p, re.compile(rf"{_BEFORE}{re.escape(p)}(?:/{_PATH}*)?(?![\w])")) for p in prefixes]


def _redact(text: str) -> str:
    local = _prefixes()
    if not _GATE.search(text) and not any(p in text for p in local + _checkouts()):
        return text
    text = _PACKAGES_CUT.sub("", _PACKAGES.sub("", text))
    checkout, prefixes = _patterns(tuple(local))
    text = checkout.sub("", text)
    for prefix, pattern in prefixes:
        text = pattern.sub(lambda m, p=prefix: _keep_name(m.group(0), p), text)
    return _LOCAL.sub(lambda m: _keep_name(m.group(0), "/" + m.group(0)[1:].split("/")[0]),
                      text)


def redact(text: Any) -> Any:
    """``text`` with every local absolute path rewritten (see the module doc); what is
    not a str is returned as it is. A pytest node id's parameters (``test_y[/tmp]``) are
    kept as they are. Idempotent: ``redact(redact(t)) == redact(t)``."""
    if not isinstance(text, str) or "/" not in text:
        return text
    return _outside_node_ids(text, _redact)


def redact_tree(value: Any) -> Any:
    """A copy of the JSON value ``value`` with :func:`redact` applied to every string
    (dict keys included), except the node ids under :data:`NODE_ID_KEYS`."""
    if isinstance(value, dict):
        return {redact(k): v if k in NODE_ID_KEYS and isinstance(v, str) else redact_tree(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return redact(value)


def library_locator(path: str | None) -> dict[str, str | None] | None:
    """Where a reader's machine holds the plugin library ``path``: ``package`` (the
    dotted import name of the folder holding it inside ``site-packages``, None when
    it is not in an installed package) and ``file`` (its path relative to that package's
    folder; its file name when there is no package). None for no path."""
    if not path:
        return None
    parts = re.split(r"/(?:site|dist)-packages/", str(path).replace("\\", "/"), maxsplit=1)
    if len(parts) == 2 and "/" in parts[1]:
        folder, _, name = parts[1].rpartition("/")
        if all(p.isidentifier() for p in folder.split("/")):
            return {"package": folder.replace("/", "."), "file": name}
    return {"package": None, "file": Path(path).name}


def describe_library(path: str | None) -> str | None:
    """``path`` as a bundle states it: ``package NAME, FILE`` for a library of an
    installed package, else :func:`redact` of it. None for None."""
    where = library_locator(path)
    if where is None:
        return None
    if where["package"]:
        return f"package {where['package']}, {where['file']}"
    return redact(path)


def offenders(text: str) -> list[str]:
    """The local paths left in ``text``: each line (cut at 160 characters) holding
    one of :data:`FOUND`."""
    return [line.strip()[:160] for line in text.splitlines()
            if FOUND.search(_NODE_PARAMS.sub("", line))]


def for_bundle(doc: dict[str, Any]) -> dict[str, Any]:
    """The report ``doc`` as a bundle holds it: :func:`redact_tree` of it, the plugin
    library (``platform.loaded.library_path``) as :func:`describe_library` says it and
    its :func:`library_locator` in ``platform.loaded.library_locator`` (kept when
    ``doc`` is already a bundle's). ``doc`` itself is not changed."""
    loaded = (doc.get("platform") or {}).get("loaded")
    out = redact_tree(doc)
    if isinstance(loaded, dict) and loaded.get("library_path"):
        path = loaded["library_path"]
        out["platform"]["loaded"]["library_locator"] = (
            loaded.get("library_locator") or library_locator(path))
        out["platform"]["loaded"]["library_path"] = (
            path if path.startswith("package ") else describe_library(path))
    return out


def find_library(loaded: dict[str, Any]) -> str | None:
    """The plugin library of ``loaded`` (a report's ``platform.loaded``) on this machine:
    its ``library_path`` when that file exists (a report still in memory), else the file
    :func:`library_locator` recorded inside its installed package (a bundle's report:
    the path is no longer there); None when neither is found here."""
    path = loaded.get("library_path")
    if path and not str(path).startswith("package ") and Path(path).is_file():
        return str(path)
    where = loaded.get("library_locator") or {}
    if not where.get("package") or not where.get("file"):
        return None
    import importlib.util
    try:
        spec = importlib.util.find_spec(where["package"])
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec else []
    if spec is not None and not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / where["file"]
        if candidate.is_file():
            return str(candidate)
    return None

