"""The distribution of per-element ULP errors of a failed comparison, as data.

:func:`conformance.helpers.assertions.assert_ulp_close` attaches it to its
AssertionError (attribute :data:`ULP_ERRORS_ATTRIBUTE`); the plugin records it in the
failure's ``ulp_errors`` and report.html draws it as a histogram.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Lower edges of the ULP-error buckets of :func:`ulp_histogram` and their labels.
_ULP_EDGES = (0, 1, 2, 4, 8, 16, 64, 256, 1024, 2**16, 2**32)
_ULP_LABELS = ("0", "1", "2-3", "4-7", "8-15", "16-63", "64-255", "256-1023", "1K-64K",
               "64K-4G", ">=4G")
#: Attribute of a failed ULP comparison's AssertionError holding :func:`ulp_histogram`.
ULP_ERRORS_ATTRIBUTE = "pjrt_ulp_errors"


def ulp_histogram(dist: np.ndarray, max_ulp: int, *, nonfinite: int = 0) -> dict[str, Any]:
    """The distribution of per-element ULP errors ``dist`` (unsigned integers, any
    shape) for the report: ``labels`` and ``counts`` of log-spaced buckets (trailing
    empty ones dropped; a last ``non-finite`` bucket when ``nonfinite`` mismatches
    involved NaN or infinity), ``limit_index`` (first bucket whose lower edge exceeds
    ``max_ulp``, or None) and ``max_ulp``. Raises ValueError on a negative ``max_ulp``."""
    if max_ulp < 0:
        raise ValueError(f"max_ulp must be >= 0, got {max_ulp}")
    d = np.asarray(dist).astype(np.uint64).ravel()
    edges = np.asarray(_ULP_EDGES, dtype=np.uint64)
    counts = np.bincount(np.searchsorted(edges, d, side="right") - 1,
                         minlength=len(edges)).tolist()
    used = max((i for i, c in enumerate(counts) if c), default=0) + 1
    labels, counts = list(_ULP_LABELS[:used]), counts[:used]
    if nonfinite:
        labels.append("non-finite")
        counts.append(nonfinite)
    limit = next((i for i, e in enumerate(_ULP_EDGES[:used]) if e > max_ulp),
                 used if nonfinite else None)
    return {"labels": labels, "counts": counts, "limit_index": limit, "max_ulp": max_ulp}


def of(err: BaseException) -> dict[str, Any] | None:
    """The histogram attached to ``err`` by ``assert_ulp_close`` (None if none)."""
    found = getattr(err, ULP_ERRORS_ATTRIBUTE, None)
    return found if isinstance(found, dict) else None
