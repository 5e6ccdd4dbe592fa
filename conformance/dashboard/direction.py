"""Which way is better for a benchmark: from its asv ``unit`` (and, for ratios, its name
and docstring).

The convention accepted, first match wins:

1. A unit that says so: ``"... (lower is better)"`` / ``"... (higher is better)"``
   (e.g. ``"ratio (lower is better)"``, the unit string the benchmarks use for time
   ratios).
2. A throughput: a unit containing ``"/s"`` (``GB/s``, ``GFLOP/s``): higher is better.
3. A time: ``"seconds"``: lower is better. ``"bytes"`` (memory): lower is better.
4. A ratio (unit starting with ``"ratio"``, or a name ``track_ratio_*``): a docstring
   that says ``"higher is better"`` makes it higher; otherwise the repository's
   convention ``track_ratio_<what>_vs_<reference>`` = measured time / reference time
   applies: lower is better.
5. Anything else: lower is better (asv's own convention: a larger value is a
   regression).
"""

from __future__ import annotations

import re

LOWER, HIGHER = "lower", "higher"
_SAYS = re.compile(r"\b(lower|higher) is better\b", re.IGNORECASE)


def is_ratio(unit: str, name: str = "") -> bool:
    """True when ``unit`` is a ratio unit (``"ratio"``, ``"ratio (lower is better)"``)
    or the method of ``name`` is ``track_ratio_*``."""
    return unit.strip().lower().startswith("ratio") or \
        name.rsplit(".", 1)[-1].startswith("track_ratio_")


def better(unit: str, name: str = "", doc: str = "") -> str:
    """:data:`LOWER` or :data:`HIGHER`: which way a value of asv ``unit`` of benchmark
    ``name`` (docstring ``doc``) is better, by the rules of the module doc. Never
    raises."""
    said = _SAYS.search(unit or "")
    if said:
        return said.group(1).lower()
    if "/s" in (unit or ""):
        return HIGHER
    if unit in ("seconds", "bytes"):
        return LOWER
    if is_ratio(unit or "", name):
        said = _SAYS.search(doc or "")
        return said.group(1).lower() if said else LOWER
    return LOWER


def words(unit: str, name: str = "") -> tuple[str, str]:
    """(worse, better) words for a change of a value of ``unit``: ``("slower",
    "faster")`` for times and throughputs, ``("worse", "better")`` otherwise."""
    if unit == "seconds" or "/s" in unit:
        return "slower", "faster"
    return "worse", "better"
