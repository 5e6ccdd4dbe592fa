"""Nesting-depth guards for StableHLO text and XLA shapes, checked before jaxlib sees them.

jaxlib 0.10.2's MLIR parser and XLA's compiler recurse once per nesting level on the
thread's stack, and crash the process (SIGSEGV) when the stack runs out instead of
raising. Measured on the main thread (8 MiB stack), CPU client: a tuple type nested
about 850 deep crashes ``compile_and_load``, ``case`` regions nested about 210 deep
crash it, a dense literal nested about 13000 deep crashes the parser, and XLA shape
text nested 10000 deep crashes ``Shape(s)``. The limits here sit well below those
(thread stacks smaller than 8 MiB may crash sooner) and far above what programs use:

- :data:`MAX_TUPLE_DEPTH` (64): tuples in tuples (XLA shapes); in StableHLO text, ``<``
  nesting (``tuple<tuple<tensor<f32>>>`` is 3 deep; other types and attributes are 1-2).
- :data:`MAX_REGION_DEPTH` (64): ``{`` nesting: the module, functions, regions (bodies of
  ``while``, ``case``...) and the attribute dictionaries inside them.
- :data:`MAX_NESTING_DEPTH` (1024): brackets of any kind (``( [ { <``) inside one another,
  e.g. the ``[`` of a dense literal, one per dimension (numpy arrays have at most 64).

The scan skips string literals and ``//`` comments. MLIR bytecode is not scanned (its
nesting is not visible without parsing it).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

MAX_TUPLE_DEPTH = 64
MAX_REGION_DEPTH = 64
MAX_NESTING_DEPTH = 1024

#: What the scan skips: string literals, ``//`` comments and the ``->`` of function types.
_SKIPPED = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|//[^\n]*|->')
_OPENERS = "([{<"
_MLIR_BYTECODE = b"ML\xefR"


def _table(pairs: str) -> np.ndarray:
    """Byte -> +1 for each opener of ``pairs`` ("{}", "<>"...), -1 for its closer."""
    out = np.zeros(256, np.int8)
    for opener, closer in zip(pairs[::2], pairs[1::2]):
        out[ord(opener)], out[ord(closer)] = 1, -1
    return out


#: (what, limit, +1/-1 per byte) for each kind of nesting, in the order they are reported.
_KINDS = [("regions and attribute dictionaries ({...})", MAX_REGION_DEPTH, _table("{}")),
          ("tuple types and other types or attributes (<...>)", MAX_TUPLE_DEPTH,
           _table("<>")),
          ("brackets ((), [], {}, <>; a dense literal has one [ per dimension)",
           MAX_NESTING_DEPTH, _table("()[]{}<>"))]
_IS_BRACKET = _KINDS[-1][2] != 0


def _too_deep(arg: str, call: str, what: str, limit: int, depth: int, line: int
              ) -> ValueError:
    return ValueError(f"{call}: argument '{arg}' must have {what} nested at most {limit} "
                      f"deep, got {depth} deep (past the limit at line {line}; deeper "
                      f"nesting crashes jaxlib's parser or compiler)")


def check_module_nesting(computation: Any, call: str, arg: str = "computation") -> None:
    """Raise ValueError naming ``arg`` when the StableHLO text ``computation`` nests
    ``{`` (regions, attribute dictionaries; the module's and each function's own braces
    count) deeper than :data:`MAX_REGION_DEPTH`, ``<`` (types and attributes: a tuple
    type nested N deep around a tensor is N + 1 deep) deeper than :data:`MAX_TUPLE_DEPTH`,
    or brackets of any kind deeper than :data:`MAX_NESTING_DEPTH`. Bytes are scanned as
    text unless they are MLIR bytecode (not checked). Cheap: text with fewer brackets than
    the limits is not scanned, and the scan is vectorized (about 0.03 s per MB)."""
    if isinstance(computation, (bytes, bytearray, memoryview)):
        data = bytes(computation)
        if data.startswith(_MLIR_BYTECODE):
            return
        text = data.decode("utf-8", "replace")
    else:
        text = computation
    if (text.count("{") <= MAX_REGION_DEPTH and text.count("<") <= MAX_TUPLE_DEPTH
            and sum(text.count(c) for c in _OPENERS) <= MAX_NESTING_DEPTH):
        return  # too few brackets to reach any limit
    # Skipped spans hold no newline, so line numbers survive their removal.
    data = np.frombuffer(_SKIPPED.sub("", text).encode("utf-8", "replace"), np.uint8)
    where = np.flatnonzero(_IS_BRACKET[data])
    brackets = data[where]
    for what, limit, table in _KINDS:
        steps = table[brackets].astype(np.int64)
        level = np.cumsum(steps)
        # A closer without its opener counts as nothing (the depth never goes below 0).
        level -= np.minimum(np.minimum.accumulate(level), 0)
        over = level > limit
        if over.any():
            first = int(where[int(np.argmax(over))])
            line = int(np.count_nonzero(data[:first] == ord("\n"))) + 1
            raise _too_deep(arg, call, what, limit, int(level.max()), line)


def check_shape_text(s: str, call: str, arg: str = "s") -> None:
    """Raise ValueError naming ``arg`` when XLA shape text ``s`` nests tuples (``(``)
    deeper than :data:`MAX_TUPLE_DEPTH`."""
    if s.count("(") <= MAX_TUPLE_DEPTH:
        return
    depth = deepest = 0
    where = -1
    for m in re.finditer(r"[()]", s):
        depth += 1 if m.group() == "(" else -1 if depth else 0
        deepest = max(deepest, depth)
        if depth > MAX_TUPLE_DEPTH and where < 0:
            where = m.start()
    if where >= 0:
        raise _too_deep(arg, call, "tuple shapes ((...))", MAX_TUPLE_DEPTH, deepest,
                        s.count("\n", 0, where) + 1)


def tuple_depth(shape: Any, stop: int = MAX_TUPLE_DEPTH + 1) -> int:
    """How deep the native ``Shape`` ``shape`` nests tuples (0 for an array shape);
    counting stops at ``stop``."""
    if stop <= 0 or not shape.is_tuple():
        return 0
    best = 1
    for sub in shape.tuple_shapes():
        best = max(best, 1 + tuple_depth(sub, stop - 1))
        if best >= stop:
            break
    return best
