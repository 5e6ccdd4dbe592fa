"""Area types: ``PrimitiveType`` <-> dtype mapping and ``Shape`` (seed 000 Types).

The mapping is checked against the device: an array transferred with each
dtype reports that dtype back, and its shape builds the matching ``Shape``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers as dh

DTYPES = [capabilities.param(dt) for dt in dh.TRANSFER_DTYPES]


@pytest.mark.parametrize("dt", DTYPES)
def test_primitive_type_round_trip(client, xc, device, dt):
    etype = xc.dtype_to_etype(dt.dtype)
    assert isinstance(etype, xc.PrimitiveType), f"dtype_to_etype({dt.name}) -> {etype!r}"
    assert xc.etype_to_dtype(etype) == dt.dtype, (
        f"etype_to_dtype(dtype_to_etype({dt.name}))={xc.etype_to_dtype(etype)}, but should be "
        f"{dt.dtype}")
    shape = xc.Shape.array_shape(etype, (2, 3))
    assert shape.xla_element_type() == etype and shape.numpy_dtype() == dt.dtype, (
        f"Shape.array_shape({etype!r}, (2, 3)) has element type {shape.xla_element_type()!r} "
        f"and dtype {shape.numpy_dtype()}, but should be {etype!r} and {dt.dtype}")
    # The device agrees: an array of this dtype keeps it across a round trip.
    with capabilities.gated(dt, f"buffer_from_pyval({dt.name})"):
        arr = client.buffer_from_pyval(np.zeros((2, 3), dt.dtype), device)
        assert np.dtype(arr.dtype) == dt.dtype, (
            f"array dtype {arr.dtype}, but should be {dt.dtype} [{device}]")


def test_every_array_primitive_type_has_a_dtype(xc):
    """The mapping is complete: only the non-array types lack a dtype."""
    lacking = {name for name, p in xc.PrimitiveType.__members__.items() if _no_dtype(xc, p)}
    assert lacking <= {"PRIMITIVE_TYPE_INVALID", "TUPLE", "OPAQUE_TYPE", "TOKEN", "BUFFER"}, (
        f"PrimitiveTypes without a numpy/ml_dtypes dtype: {sorted(lacking)}")


def _no_dtype(xc, p) -> bool:
    try:
        xc.etype_to_dtype(p)
    except ValueError:
        return True
    return False


@given(dims=st.lists(st.integers(0, 64), max_size=6),
       dt=st.sampled_from([d.dtype for d in dh.TRANSFER_DTYPES]))
def test_array_shape_dimensions_and_rank(xc, dims, dt):
    shape = xc.Shape.array_shape(dt, dims)
    assert shape.dimensions() == tuple(dims), (
        f"Shape.array_shape({dt}, {dims}).dimensions()={shape.dimensions()}")
    assert shape.rank() == len(dims) and shape.is_array() and not shape.is_tuple()
    assert isinstance(shape, xc.Shape)
    layout = list(range(len(dims)))[::-1]
    assert xc.Shape.array_shape(dt, dims, layout).dimensions() == tuple(dims)


def test_shape_parses_text(xc):
    shape = xc.Shape("f32[2,3]")
    assert shape.dimensions() == (2, 3) and shape.numpy_dtype() == np.float32


@pytest.mark.parametrize("call, arg", [
    (lambda xc: xc.dtype_to_etype(np.dtype("U3")), "dtype"),
    (lambda xc: xc.dtype_to_etype(object), "dtype"),
    (lambda xc: xc.etype_to_dtype(xc.PrimitiveType.TUPLE), "etype"),
    (lambda xc: xc.etype_to_dtype(11), "etype"),
    (lambda xc: xc.Shape.array_shape("not a dtype", (2,)), "type"),
    (lambda xc: xc.Shape.array_shape(np.float32, (-1,)), "dims_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, "23"), "dims_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, (2, 3), (0, 0)), "layout_seq"),
    (lambda xc: xc.Shape.array_shape(np.float32, (2, 3), None, [True]), "dynamic_dimensions"),
    (lambda xc: xc.Shape("f32[2,"), "s"),
    (lambda xc: xc.Shape(3), "s"),
], ids=["str-dtype", "object", "tuple-etype", "int-etype", "bad-type", "negative-dim",
        "str-dims", "bad-layout", "dynamic-length", "bad-text", "int-text"])
def test_types_reject_bad_input(xc, call, arg):
    with pytest.raises((TypeError, ValueError), match=f"argument '{arg}'"):
        call(xc)
