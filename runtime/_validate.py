"""Argument checks whose errors name the argument, the expectation and the value."""

from __future__ import annotations

from typing import Any


def describe(value: Any) -> str:
    """Short description of a value for error messages."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__}(shape={tuple(shape)}, dtype={dtype})"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def bad_type(arg: str, expected: str, value: Any, call: str) -> TypeError:
    return TypeError(f"{call}: argument '{arg}' must be {expected}, got {describe(value)}")


def bad_value(arg: str, expected: str, value: Any, call: str, fix: str = "") -> ValueError:
    msg = f"{call}: argument '{arg}' must be {expected}, got {describe(value)}"
    return ValueError(f"{msg}. {fix}" if fix else msg)
