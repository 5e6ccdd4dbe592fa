"""dtype catalogue and capabilities; tolerances come from :mod:`.ulp`."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from conformance.helpers import ulp


@dataclasses.dataclass(frozen=True)
class DType:
    """One element type under test.

    ``kind``: 'bool', 'int', 'uint', 'float' or 'complex'. ``capability``: the
    certification capability module that gates it (None: core, always required).
    """

    name: str
    dtype: np.dtype
    kind: str
    capability: str | None

    def __str__(self) -> str:
        return self.name


def _d(name: str, kind: str, capability: str | None) -> DType:
    dtype = np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) and not hasattr(
        np, name) else np.dtype(name)
    return DType(name, dtype, kind, capability)


BOOL = [_d("bool", "bool", None)]
INTS = [_d(n, "int", None) for n in ("int8", "int16", "int32", "int64")]
UINTS = [_d(n, "uint", None) for n in ("uint8", "uint16", "uint32", "uint64")]
SUBBYTE_INTS = [_d("int4", "int", "int4"), _d("uint4", "uint", "int4")]
FLOATS = [_d("float16", "float", "f16"), _d("bfloat16", "float", "bf16"),
          _d("float32", "float", None), _d("float64", "float", "f64")]
FP8 = [_d(n, "float", "fp8") for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu") if hasattr(ml_dtypes, n)]
COMPLEX = [_d("complex64", "complex", "complex"), _d("complex128", "complex", "complex")]

#: Every dtype whose host <-> device transfer is checked.
TRANSFER_DTYPES = BOOL + INTS + UINTS + SUBBYTE_INTS + FLOATS + FP8 + COMPLEX
#: dtypes with arithmetic checked by the execute area.
NUMERIC_DTYPES = INTS + UINTS + FLOATS + COMPLEX
BY_NAME = {d.name: d for d in TRANSFER_DTYPES}

def tolerance(dt: DType) -> float:
    """Relative tolerance for ``dt``: 0 for exact kinds (bool, integers), else the
    ``rtol`` of the one tolerance table, :data:`conformance.helpers.ulp.TOLERANCE`
    (KeyError for a float dtype the table lacks)."""
    if dt.kind in ("bool", "int", "uint"):
        return 0.0
    return ulp.rtol(dt.name)


def real_dtype(dt: DType) -> np.dtype:
    """Component dtype of a complex dtype, the dtype itself otherwise."""
    return ml_dtypes.finfo(dt.dtype).dtype if dt.kind == "complex" else dt.dtype


def reference_dtype(dt: DType) -> np.dtype:
    """Wider dtype in which NumPy computes the reference for ``dt``."""
    if dt.kind == "complex":
        return np.dtype(np.complex128)
    if dt.kind == "float":
        return np.dtype(np.float64)
    return dt.dtype


def uint_view_dtype(dtype: np.dtype) -> np.dtype:
    """Unsigned integer dtype of the same width, for bit-level comparison."""
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def is_subbyte(dtype: np.dtype) -> bool:
    return np.dtype(dtype) in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4),
                               np.dtype(ml_dtypes.float4_e2m1fn))
