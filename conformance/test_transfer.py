"""Area transfer: host -> device -> host round trips are bit-exact (the xla_client API's
``Client.buffer_from_pyval``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import shape_helpers
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction

DTYPES = [capabilities.param(d) for d in dtype_helpers.TRANSFER_DTYPES]


def _round_trip(client, host, device, dt, **kwargs):
    call = f"buffer_from_pyval(x: {host.dtype}{list(host.shape)}, device={device})"
    with capabilities.gated(dt, call):
        buf = client.buffer_from_pyval(host, device, **kwargs)
        back = np.asarray(buf)
    return buf, back, call


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_round_trip_bit_exact(client, device, dt, data):
    x = data.draw(strategies.bit_patterns(dt, strategies.shapes()), label="x")
    before = x.copy()
    buf, back, call = _round_trip(client, x, device, dt)
    with reproduction(call, inputs=[x]):
        assertions.assert_bitwise_equal(back, x, call=call)
        assert buf.devices() == {device}, f"out.devices()={buf.devices()}, but should be " \
                                          f"{{{device}}} [{call}]"
        assertions.assert_bitwise_equal(x, before, call=f"caller's array after {call}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_round_trip_any_layout(client, device, dt, data):
    x = data.draw(strategies.bit_patterns(dt, strategies.shapes(min_dims=1, min_side=1)), label="x")
    layout = data.draw(strategies.layouts(), label="layout")
    view = shape_helpers.with_layout(x, layout)
    _, back, call = _round_trip(client, view, device, dt)
    with reproduction(call + f" with {layout} layout", inputs=[x]):
        assertions.assert_bitwise_equal(back, x, call=f"{call} [{layout} layout]")


@pytest.mark.parametrize(
    "dt", [capabilities.param(d) for d in dtype_helpers.FLOATS + dtype_helpers.COMPLEX])
def test_special_values_bit_exact(client, device, dt):
    real = dtype_helpers.real_dtype(dt)
    finfo = ml_dtypes.finfo(real)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]
    if finfo is not None:
        vals += [float(finfo.max), float(finfo.min), float(finfo.smallest_subnormal),
                 float(finfo.tiny)]
    x = np.array(vals, dtype=np.float64).astype(dt.dtype)
    raw = x.view(dtype_helpers.uint_view_dtype(real)) if dt.kind != "complex" else None
    if raw is not None:  # a NaN with a non-default payload and the sign bit set
        nan_bits = np.array([np.nan], dtype=real).view(raw.dtype)[0] | np.array(
            1, dtype=raw.dtype)
        x = np.concatenate([x, np.array([nan_bits], dtype=raw.dtype).view(real),
                            -np.array([np.nan], dtype=real)])
    _, back, call = _round_trip(client, x, device, dt)
    assertions.assert_bitwise_equal(back, x, call=call)


@pytest.mark.parametrize("dt",
                         [capabilities.param(d) for d in dtype_helpers.INTS + dtype_helpers.UINTS])
def test_integer_extremes(client, device, dt):
    info = np.iinfo(dt.dtype)
    x = np.array([info.min, info.min + 1, -1 if dt.kind == "int" else 1, 0, info.max - 1,
                  info.max], dtype=dt.dtype)
    _, back, call = _round_trip(client, x, device, dt)
    assertions.assert_bitwise_equal(back, x, call=call)


@given(pv=strategies.python_values())
def test_python_values(client, device, pv):
    call = f"buffer_from_pyval({pv.value!r}, device={device})"
    buf = client.buffer_from_pyval(pv.value, device)
    assertions.assert_bitwise_equal(np.asarray(buf), pv.expected, call=call)


def test_large_array_64mib(client, device):
    n = (64 << 20) // 4
    x = np.random.default_rng(0).integers(0, 2**31 - 1, size=n, dtype=np.int32)
    call = f"buffer_from_pyval(int32[{n}] (64 MiB), device={device})"
    buf = client.buffer_from_pyval(x, device)
    back = np.asarray(buf)
    assertions.assert_bitwise_equal(back, x, call=call)
    size = buf.on_device_size_in_bytes()
    assert size >= x.nbytes, (f"on_device_size_in_bytes()={size}, but should be >= "
                              f"{x.nbytes} [{call}]")
    buf.delete()


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 0, 5)], ids=shape_helpers.fmt_shape)
def test_zero_size_and_scalar(client, device, shape):
    x = np.zeros(shape, np.float32)
    buf = client.buffer_from_pyval(x, device)
    call = f"buffer_from_pyval(float32{list(shape)}, device={device})"
    assertions.assert_shape(buf.shape, shape, call=call)
    assertions.assert_bitwise_equal(np.asarray(buf), x, call=call)
