"""Argument checks whose errors name the argument, the expectation and the value."""

from __future__ import annotations

from collections.abc import Sequence
import reprlib
from typing import Any


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 4, 6, 6, 4
_SHORT.maxstring, _SHORT.maxother = 60, 60


def describe(value: Any) -> str:
    """Short description of a value for error messages: at most 80 characters, nesting
    shown 4 levels deep (``[[[[...]]]]``), so a value nested 100,000 deep or a
    ``__repr__`` that fails is described, never a RecursionError."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, type):
        return f"{type(value).__name__}(shape={tuple(shape)}, dtype={dtype})"
    try:
        text = _SHORT.repr(value)
    except Exception:   # noqa: BLE001 -- a broken or too deep __repr__ of the user's object
        text = f"<{type(value).__name__} object (its repr failed)>"
    return text if len(text) <= 80 else text[:77] + "..."


def bad_type(arg: str, expected: str, value: Any, call: str) -> TypeError:
    return TypeError(f"{call}: argument '{arg}' must be {expected}, got {describe(value)}")


def bad_value(arg: str, expected: str, value: Any, call: str, fix: str = "") -> ValueError:
    msg = f"{call}: argument '{arg}' must be {expected}, got {describe(value)}"
    return ValueError(f"{msg}. {fix}" if fix else msg)


def check_arrays(call: str, arg: str, value: Any, array_type: type,
                 element: str = "an array (ArrayImpl)") -> None:
    """Raise TypeError naming ``arg`` unless ``value`` is a sequence (not str/bytes) whose
    every item is an ``array_type``; an item is named ``arg[i]`` and must be ``element``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{call}: argument '{arg}' must be a sequence of arrays "
                        f"(ArrayImpl), got {describe(value)}")
    for i, a in enumerate(value):
        if not isinstance(a, array_type):
            raise TypeError(f"{call}: argument '{arg}[{i}]' must be {element}, "
                            f"got {describe(a)}")


def check_node(call: str, node_id: Any, num_nodes: Any) -> None:
    """Raise ValueError unless ``num_nodes`` is an int >= 1 and ``node_id`` an int in
    ``[0, num_nodes)`` (the process index and count of a multi-process client)."""
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 1:
        raise bad_value("num_nodes", "an int >= 1", num_nodes, call)
    if isinstance(node_id, bool) or not isinstance(node_id, int) or not 0 <= node_id < num_nodes:
        raise bad_value("node_id", f"an int in [0, {num_nodes})", node_id, call)
