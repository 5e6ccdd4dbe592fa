"""JSON text from files the suite does not control, where nesting depth is no crash.

``json.loads`` raises RecursionError (not a ValueError) for an array or object nested
deeper than the interpreter's recursion limit (``'[' * 100000``), which every reader of
a report, profile, log or durations file would otherwise let escape as a traceback.
Nor is a number of more digits than Python converts to an int (``sys.int_info``: 4300),
which ``json.loads`` raises as a bare ValueError that no reader expects. And JSON that
does decode, nested a few hundred levels deep, still ended in a RecursionError in the
code that walked it (``rerender``, jsonschema), so nesting deeper than :data:`MAX_DEPTH`
is refused as well: the suite's own files nest at most 11 levels (a results log line).
"""

from __future__ import annotations

import json
from typing import Any

#: Deepest nesting of arrays and objects accepted (the suite writes at most 11 levels).
MAX_DEPTH = 64


class TooDeep(json.JSONDecodeError):
    """JSON nested deeper than :data:`MAX_DEPTH` or than the decoder can follow (a
    json.JSONDecodeError)."""

    def __str__(self) -> str:   # no position: the decoder does not say where it was
        return self.msg


class NumberTooLong(json.JSONDecodeError):
    """A JSON integer of more digits than Python converts (a json.JSONDecodeError)."""

    def __str__(self) -> str:   # no position: the decoder does not say where it was
        return self.msg


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``; raises json.JSONDecodeError (a ValueError) for text that is
    not JSON, :class:`TooDeep` (one) for JSON nested more than :data:`MAX_DEPTH` levels,
    :class:`NumberTooLong` (one) for an integer too long to convert."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise TooDeep("nested too deeply", _text(text), 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as err:   # int('9' * 5000): Python's int-string conversion limit
        raise NumberTooLong(f"a number too long to read ({str(err).split(';')[0]})",
                            _text(text), 0) from None
    if not _within(doc, MAX_DEPTH):
        raise TooDeep(f"nested too deeply (more than {MAX_DEPTH} levels)", _text(text), 0)
    return doc


def _within(doc: Any, limit: int) -> bool:
    """True when ``doc`` nests arrays and objects at most ``limit`` levels deep (walked
    without recursion)."""
    stack = [(doc, 1)] if isinstance(doc, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        for value in node.values() if isinstance(node, dict) else node:
            if isinstance(value, (dict, list)):
                stack.append((value, depth + 1))
    return True


def _text(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
