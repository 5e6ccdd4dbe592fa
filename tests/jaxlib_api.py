"""The public jaxlib API that ``runtime`` implements, read from the ```python { .api }```
blocks of jaxlib's API reference: its overview (clients, devices, memories, compile and
execute, custom calls, kernel registrations, plugin loading), its array operations
(``batched_device_put``, shardings, copy semantics, ``reorder_shards``) and its XLA client
operations (client factories, ``Client``, the distributed runtime).

``python -m tests.jaxlib_api OVERVIEW ARRAY_OPERATIONS XLA_CLIENT > tests/jaxlib_api.json``
refreshes the checked-in list from those three pages (text files, in that order);
``test_jaxlib_api`` checks that ``runtime`` has every entry, and that the list matches the
pages named by ``JAXLIB_API_REFERENCE`` when that is set.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

#: Names that live outside runtime.xla_client (the reference's section decides).
MODULE_OF = {"import_from_plugin": "runtime.plugin_support",
             "check_plugin_version": "runtime.plugin_support",
             "registrations": "runtime.lapack", "prepare_lapack_call": "runtime.lapack",
             "gpu_linalg.registrations": "runtime.gpu_linalg",
             "gpu_sparse.registrations": "runtime.gpu_sparse",
             "cpu_sparse.registrations": "runtime.cpu_sparse"}

_DEF = re.compile(r"^(\s*)def ([\w.]+)\(")
_CLASS = re.compile(r"^class (\w+)")
_ARRAY_METHOD = re.compile(r"^# def (\w+)\(self\)")
_ATTR = re.compile(r"^(\w+): ")


def _blocks(text: str) -> list[list[str]]:
    """Lines of each ```python { .api }``` block (usage examples are left out); a
    page without fences is one block."""
    if "```" not in text:
        return [text.splitlines()]
    blocks, current = [], None
    for line in text.splitlines():
        if line.startswith("```python { .api }"):
            current = []
        elif line.startswith("```") and current is not None:
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _signature(lines: list[str], start: int) -> tuple[str, int]:
    """The def starting at ``lines[start]`` on one line, and the index of its last line."""
    sig = ""
    for end in range(start, len(lines)):
        sig += lines[end].strip() + " "
        if re.search(r"\)\s*(->[^:]*)?:", sig):
            break
    return sig, end


def _params(sig: str, keep_self: bool = False) -> list[str]:
    """Parameter names of the one-line def ``sig``."""
    inner = sig[sig.index("(") + 1:]
    depth, names, token = 0, [], ""
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            names.append(token)
            token = ""
        else:
            token += ch
    names.append(token)
    out = []
    for t in names:
        name = t.split(":")[0].split("=")[0].strip().lstrip("*")
        if name and name != "/" and (keep_self or name != "self") and name.isidentifier():
            out.append(name)
    return out


def parse(pages: Sequence[Path]) -> dict[str, dict[str, list[str]]]:
    """{"module:Name" or "module:Class.member": {"params": [...]}} for the reference
    ``pages`` (text files; lines that are only a line number are dropped)."""
    api: dict[str, dict[str, list[str]]] = {}
    for page in pages:
        text = "\n".join(line for line in Path(page).read_text().splitlines()
                         if not re.fullmatch(r"\d+", line))
        for lines in _blocks(text):
            # The pages lost their indentation: a member is a def taking self,
            # a decorated def, or an annotated attribute inside a class.
            cls, decorated, skip_to = None, False, -1
            for i, line in enumerate(lines):
                line = line.strip()
                if i <= skip_to:
                    continue
                if m := _ARRAY_METHOD.match(line):  # "# def is_ready(self) -> bool: ..."
                    api[f"runtime.xla_client:ArrayImpl.{m.group(1)}"] = {"params": []}
                    continue
                if m := _CLASS.match(line):
                    cls = m.group(1)
                    api.setdefault(f"runtime.xla_client:{cls}", {"params": []})
                elif line.startswith("@"):
                    decorated = True
                elif m := _DEF.match(line):
                    name = m.group(2)
                    sig, skip_to = _signature(lines, i)
                    member = cls and (decorated or _params(sig, keep_self=True)[:1] == ["self"])
                    decorated = False
                    if not member:
                        cls = None
                    if name.startswith("_"):
                        continue
                    if member:
                        key = f"runtime.xla_client:{cls}.{name}"
                    else:
                        key = f"{MODULE_OF.get(name, 'runtime.xla_client')}:{name.split('.')[-1]}"
                    api[key] = {"params": _params(sig)}
                elif cls and (m := _ATTR.match(line)) and not line.startswith("#"):
                    api[f"runtime.xla_client:{cls}.{m.group(1)}"] = {"params": []}
    return dict(sorted(api.items()))


if __name__ == "__main__":
    json.dump(parse([Path(a) for a in sys.argv[1:]]), sys.stdout, indent=1)
    sys.stdout.write("\n")
