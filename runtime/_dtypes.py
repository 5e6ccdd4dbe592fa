"""Host dtypes that PJRT arrays can hold, and their XLA primitive types."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from runtime._compat import native

_P = native.PrimitiveType

#: numpy dtype -> XLA PrimitiveType for every element type a PJRT array can hold.
DTYPE_TO_PRIMITIVE: dict[np.dtype, object] = {
    np.dtype(np.bool_): _P.PRED,
    np.dtype(np.int8): _P.S8,
    np.dtype(np.int16): _P.S16,
    np.dtype(np.int32): _P.S32,
    np.dtype(np.int64): _P.S64,
    np.dtype(np.uint8): _P.U8,
    np.dtype(np.uint16): _P.U16,
    np.dtype(np.uint32): _P.U32,
    np.dtype(np.uint64): _P.U64,
    np.dtype(np.float16): _P.F16,
    np.dtype(np.float32): _P.F32,
    np.dtype(np.float64): _P.F64,
    np.dtype(np.complex64): _P.C64,
    np.dtype(np.complex128): _P.C128,
    np.dtype(ml_dtypes.bfloat16): _P.BF16,
    np.dtype(ml_dtypes.int4): _P.S4,
    np.dtype(ml_dtypes.uint4): _P.U4,
}
for _name, _prim in [
    ("float8_e4m3fn", "F8E4M3FN"),
    ("float8_e5m2", "F8E5M2"),
    ("float8_e4m3b11fnuz", "F8E4M3B11FNUZ"),
    ("float8_e4m3fnuz", "F8E4M3FNUZ"),
    ("float8_e5m2fnuz", "F8E5M2FNUZ"),
    ("float8_e3m4", "F8E3M4"),
    ("float8_e4m3", "F8E4M3"),
    ("float8_e8m0fnu", "F8E8M0FNU"),
    ("float4_e2m1fn", "F4E2M1FN"),
    ("float6_e2m3fn", "F6E2M3FN"),
    ("float6_e3m2fn", "F6E3M2FN"),
]:
    if hasattr(ml_dtypes, _name) and hasattr(_P, _prim):
        DTYPE_TO_PRIMITIVE[np.dtype(getattr(ml_dtypes, _name))] = getattr(_P, _prim)


def is_supported_dtype(dtype: np.dtype) -> bool:
    """True when ``dtype`` has an XLA element type."""
    return np.dtype(dtype) in DTYPE_TO_PRIMITIVE


def supported_dtype_names() -> list[str]:
    return sorted(d.name for d in DTYPE_TO_PRIMITIVE)


#: XLA PrimitiveType -> numpy dtype (inverse of DTYPE_TO_PRIMITIVE).
PRIMITIVE_TO_DTYPE: dict[object, np.dtype] = {p: d for d, p in DTYPE_TO_PRIMITIVE.items()}


def dtype_to_etype(dtype: object) -> object:
    """The XLA ``PrimitiveType`` of a numpy/ml_dtypes dtype
    (``xla_client.dtype_to_etype``).

    ``dtype``: anything ``np.dtype()`` accepts (``np.float32``, ``"bfloat16"``,
    ``ml_dtypes.float8_e4m3fn``...). Raises TypeError when it is not a dtype and
    ValueError when XLA has no element type for it (object, str, datetime...).
    """
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as err:
        raise TypeError(f"dtype_to_etype: argument 'dtype' must be a numpy dtype, got "
                        f"{dtype!r}") from err
    if dt not in DTYPE_TO_PRIMITIVE:
        raise ValueError(f"dtype_to_etype: argument 'dtype' must be a dtype with an XLA "
                         f"element type ({', '.join(supported_dtype_names())}), got {dt}")
    return DTYPE_TO_PRIMITIVE[dt]


def etype_to_dtype(etype: object) -> np.dtype:
    """The numpy dtype of an XLA ``PrimitiveType`` (``xla_client.etype_to_dtype``).

    Raises TypeError when ``etype`` is not a ``PrimitiveType`` and ValueError for
    element types with no array dtype (TUPLE, TOKEN, OPAQUE_TYPE, ...).
    """
    if not isinstance(etype, _P):
        raise TypeError(f"etype_to_dtype: argument 'etype' must be a PrimitiveType, got "
                        f"{etype!r}")
    if etype not in PRIMITIVE_TO_DTYPE:
        raise ValueError(f"etype_to_dtype: argument 'etype' must be an array element type, "
                         f"got {etype!r}, which has no numpy dtype")
    return PRIMITIVE_TO_DTYPE[etype]
