"""Area types: ``PrimitiveType`` <-> dtype mapping and ``Shape`` (the xla_client
API's types).

The mapping is checked against the device: an array transferred with each
dtype reports that dtype back, and its shape builds the matching ``Shape``.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers

DTYPES = [capabilities.param(dt) for dt in dtype_helpers.TRANSFER_DTYPES]


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
