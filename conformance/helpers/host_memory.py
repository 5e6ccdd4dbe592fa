"""Host arrays for the transfer areas: alignment, pinned sizes, and aliasing seen from
the host.

A host -> device put under a copying ``HostBufferSemantics`` (or with
``force_copy``) must leave the device array independent of the caller's array;
``ZERO_COPY`` may alias it. Whether it did is observed by overwriting the host
array after the put and reading the device array back (:func:`observe_put`).
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import hypothesis
import numpy as np

from conformance.helpers import assertions

#: Byte offsets from a 64-byte boundary: 0 (aligned) and 4 (element-aligned for every
#: dtype of at most 4 bytes, but on no 8-, 16-, 32- or 64-byte boundary).
ALIGNMENTS = {"aligned64": 0, "unaligned": 4}

_PAGE = 4096
_MIB = 1 << 20


def hypothesis_profile() -> str:
    """Name of the Hypothesis profile in force (``ci``, ``dev``, ``nightly``...): the one
    place the transfer areas read it."""
    return hypothesis.settings._current_profile or "default"


def transfer_sizes(itemsize: int, profile: str | None = None) -> dict[str, int]:
    """Element counts of the pinned transfer sizes for ``itemsize``-byte elements: empty,
    one element, under a page, 1 MiB, and 64 MiB in the ``nightly`` profile only.

    ``profile`` defaults to :func:`hypothesis_profile`. Raises ValueError for an
    itemsize that is not a positive divisor of 4096.
    """
    if itemsize < 1 or _PAGE % itemsize:
        raise ValueError(f"transfer_sizes: argument 'itemsize' must divide {_PAGE}, got "
                         f"{itemsize}")
    sizes = {"empty": 0, "one": 1, "under-page": _PAGE // itemsize - 3, "1MiB": _MIB // itemsize}
    if (profile or hypothesis_profile()) == "nightly":
        sizes["64MiB"] = 64 * _MIB // itemsize
    return sizes


def host_buffer(n: int, dtype: Any, *, offset: int) -> np.ndarray:
    """A writable 1-D host array of ``n`` elements of ``dtype`` starting ``offset`` bytes
    past a 64-byte boundary, filled with a pattern (element i holds i mod 251 + 1, never 0).

    Raises ValueError for a negative ``n`` or an ``offset`` outside [0, 64) that is not a
    multiple of the itemsize.
    """
    dtype = np.dtype(dtype)
    if n < 0:
        raise ValueError(f"host_buffer: argument 'n' must be >= 0, got {n}")
    if not 0 <= offset < 64 or offset % dtype.itemsize:
        raise ValueError(f"host_buffer: argument 'offset' must be a multiple of "
                         f"{dtype.itemsize} in [0, 64), got {offset}")
    raw = np.empty(n * dtype.itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start:start + n * dtype.itemsize].view(dtype)
    out[...] = (np.arange(n) % 251 + 1).astype(dtype)
    return out


def misalignment(x: np.ndarray) -> int:
    """Bytes by which ``x``'s data pointer is past a 64-byte boundary."""
    return x.ctypes.data % 64


class Seen(enum.Enum):
    """What a device array shows after its host source was overwritten."""

    COPY = "copy"            # the values at the time of the put
    ALIASED = "aliased"      # the overwritten values: the device array is the host memory
    #                          (or, where the put was not awaited, read it after returning)
    UNOBSERVABLE = "n/a"     # an empty array: nothing to overwrite
    CORRUPT = "corrupt"      # neither: a wrong or torn transfer


class PutObservation(NamedTuple):
    """:func:`observe_put`'s result: what was seen, and every shard's values (flattened
    and concatenated) as read back and as put."""

    seen: Seen
    back: np.ndarray
    before: np.ndarray


def overwrite(x: np.ndarray) -> None:
    """Overwrite every element of ``x`` in place with a value it did not hold (the bits
    inverted), so an alias of ``x`` shows a change in every element."""
    raw = x.reshape(-1).view(np.uint8)
    np.invert(raw, out=raw)


def observe_put(put: Any, x: np.ndarray, *, wait: bool = True) -> PutObservation:
    """Run ``put(x)``, wait for the transfer when ``wait`` (not for
    IMMUTABLE_ONLY_DURING_CALL: ``x`` is free once the call returns), overwrite ``x``,
    and classify what every addressable shard of the result holds.

    ``put``: a callable returning a device array (single-device or sharded); its shards
    are read back and compared with ``x[shard.index]`` before and after the overwrite.
    Aliasing must be all or nothing: shards that show some overwritten elements and
    some old ones are CORRUPT.
    """
    before = x.copy()
    out = put(x)
    if wait:
        out.block_until_ready()
    overwrite(x)
    shards = [(s.index, np.asarray(s.data)) for s in out.addressable_shards]
    back = _flat([held for _, held in shards], x.dtype)
    then, now = (_flat([a[index] for index, _ in shards], x.dtype) for a in (before, x))
    if then.size == 0:
        seen = Seen.UNOBSERVABLE if back.size == 0 else Seen.CORRUPT
    elif _same_bits(back, then):
        seen = Seen.COPY
    elif _same_bits(back, now):
        seen = Seen.ALIASED
    else:
        seen = Seen.CORRUPT
    return PutObservation(seen, back, then)


def _flat(pieces: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate([np.asarray(p).reshape(-1) for p in pieces]) if pieces else \
        np.zeros(0, dtype)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def may_alias(semantics: Any, force_copy: bool) -> bool:
    """Whether a host -> device put under ``semantics`` (a ``HostBufferSemantics``) may
    leave the device array aliasing the host array: only ZERO_COPY without force_copy."""
    return semantics.name == "ZERO_COPY" and not force_copy


def check_put_detaches(put: Any, x: np.ndarray, semantics: Any, force_copy: bool,
                       call: str) -> Seen:
    """Put ``x`` with ``put(x)``, overwrite ``x``, and check the device array: unchanged
    after a copying put; unchanged or wholly the new values (aliased) after ZERO_COPY
    without force_copy. Returns what was seen; raises AssertionError naming ``call``."""
    __tracebackhide__ = True
    obs = observe_put(put, x, wait=semantics.name != "IMMUTABLE_ONLY_DURING_CALL")
    if obs.seen is Seen.CORRUPT:  # the message shows the first differing element
        assertions.assert_bitwise_equal(obs.back, obs.before, call=f"{call}, then overwriting x")
    assert obs.seen is not Seen.ALIASED or may_alias(semantics, force_copy), (
        f"out shows the values written to x after the put returned (out aliases x, or read "
        f"it late), but {semantics.name} with force_copy={force_copy} must copy [{call}]")
    return obs.seen
