"""JSON text from files the suite does not control, where nesting depth is no crash.

``json.loads`` raises RecursionError (not a ValueError) for an array or object nested
deeper than the interpreter's recursion limit (``'[' * 100000``), which every reader of
a report, profile, log or durations file would otherwise let escape as a traceback.
"""

from __future__ import annotations

import json
from typing import Any


class TooDeep(json.JSONDecodeError):
    """JSON nested deeper than the decoder can follow (a json.JSONDecodeError)."""


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``; raises json.JSONDecodeError (a ValueError) for text that is
    not JSON, :class:`TooDeep` (one) for JSON nested too deeply to decode."""
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep("nested too deeply", text if isinstance(text, str)
                      else text.decode("utf-8", "replace"), 0) from None
