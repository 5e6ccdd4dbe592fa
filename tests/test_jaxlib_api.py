"""Every public name of jaxlib's API reference (``tests/jaxlib_api.json``: the xla_client API,
the array API, custom calls, kernel registrations, plugin loading, the distributed runtime)
exists in ``runtime`` with the documented parameters."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import types
from pathlib import Path
from typing import Any

import pytest

from tests import jaxlib_api

API_FILE = Path(__file__).with_name("jaxlib_api.json")
API = json.loads(API_FILE.read_text())
#: The reference pages the list is read from (os.pathsep-separated, in the order
#: :mod:`tests.jaxlib_api` takes them); unset, the comparison is skipped.
REFERENCE = "JAXLIB_API_REFERENCE"


def resolve(key: str, import_module=importlib.import_module) -> Any:
    """The object named by ``module:Name.member``; AttributeError/ImportError if absent."""
    module, _, path = key.partition(":")
    obj: Any = import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def parameter_names(obj: Any) -> set[str] | None:
    """Parameter names of a callable (Python or nanobind), None when unknown."""
    fn = obj.fget if isinstance(obj, property) else obj
    try:
        params = inspect.signature(fn).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in params):
            return None  # **kwargs takes any keyword
        return {p.name for p in params}
    except (TypeError, ValueError):
        pass
    doc = getattr(fn, "__doc__", None) or ""
    names: set[str] = set()
    for sig in re.findall(r"^\w+\((.*)\)", doc, flags=re.M):  # one line per overload
        if re.search(r"(^|, )/($|,)", sig):
            return None  # positional-only: the names are not part of the API
        names |= set(re.findall(r"(?:^|, )\*{0,2}(\w+)(?=:|,|$| =)", sig))
    return names or None


def missing(api: dict[str, dict[str, list[str]]], import_module=importlib.import_module
            ) -> list[str]:
    """Entries of ``api`` that runtime lacks, or whose parameters it lacks."""
    out = []
    for key, entry in api.items():
        try:
            obj = resolve(key, import_module)
        except (AttributeError, ImportError):
            out.append(f"{key}: not found")
            continue
        names = parameter_names(obj) if entry["params"] else None
        lost = [p for p in entry["params"] if names is not None and p not in names
                and p != "kwargs"]
        if lost:
            out.append(f"{key}: no parameter {', '.join(lost)}")
    return out


def test_runtime_has_every_jaxlib_api_name():
    assert len(API) > 100
    assert missing(API) == []


def test_checked_in_list_matches_the_reference():
    pages = [p for p in os.environ.get(REFERENCE, "").split(os.pathsep) if p]
    if not pages:
        pytest.skip(f"{REFERENCE} names no API reference pages")
    assert jaxlib_api.parse([Path(p) for p in pages]) == API, (
        "tests/jaxlib_api.json is stale: run python -m tests.jaxlib_api PAGE... "
        "> tests/jaxlib_api.json")


def test_missing_detects_a_removed_name_and_parameter():
    """Self-test: a runtime without a documented name, or without one of its parameters,
    fails."""
    real = importlib.import_module("runtime.xla_client")
    fake = types.ModuleType("runtime.xla_client")
    fake.__dict__.update({k: v for k, v in vars(real).items() if k != "execution_stream_id"})
    fake.make_cpu_client = lambda asynchronous=True: None  # lost every other parameter
    fake_import = lambda name: fake if name == "runtime.xla_client" else (  # noqa: E731
        importlib.import_module(name))
    found = missing(API, fake_import)
    assert "runtime.xla_client:execution_stream_id: not found" in found
    assert any(f.startswith("runtime.xla_client:make_cpu_client: no parameter distributed_client")
               for f in found)
    assert len(found) == 2


def test_parser_reads_members_signatures_and_unfenced_pages(tmp_path):
    pages = [tmp_path / "overview.md", tmp_path / "array-operations.md", tmp_path / "xla-client.md"]
    pages[0].write_text(
        "```python { .api }\nclass Thing:\nsize: int\ndef grow(\nself,\nby: int = 1,\n"
        ") -> None: ...\n@staticmethod\ndef make(kind: str) -> Thing: ...\n"
        "def top_level(a, b=2): ...\n```\n```python\ndef example(): ...\n```\n")
    pages[1].write_text(
        "def batched_block_until_ready(x: Sequence[Any]) -> None:\n"
        "# def is_ready(self) -> bool: ...\n")
    pages[2].write_text("")
    assert jaxlib_api.parse(pages) == {
        "runtime.xla_client:ArrayImpl.is_ready": {"params": []},
        "runtime.xla_client:Thing": {"params": []},
        "runtime.xla_client:Thing.grow": {"params": ["by"]},
        "runtime.xla_client:Thing.make": {"params": ["kind"]},
        "runtime.xla_client:Thing.size": {"params": []},
        "runtime.xla_client:batched_block_until_ready": {"params": ["x"]},
        "runtime.xla_client:top_level": {"params": ["a", "b"]},
    }
