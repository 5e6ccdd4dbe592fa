"""The size strategies of :mod:`conformance.helpers.strategies`: boundary sizes, element
budgets, seeded large arrays."""

import hypothesis
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.helpers import dtype_helpers
from conformance.helpers import strategies
from conformance.session import hypothesis_profiles


def test_boundary_sizes_straddle_every_block_and_are_all_pinned():
    assert strategies.BOUNDARY_SIZES[:3] == (7, 8, 9)
    assert strategies.BOUNDARY_SIZES[-3:] == (4095, 4096, 4097)
    pinned = {s for pair in strategies.BOUNDARY_PAIRS for s in pair}
    assert pinned == set(strategies.BOUNDARY_SIZES)
    assert max(a * b for a, b in strategies.BOUNDARY_PAIRS) < 40_000


def test_element_budget_follows_the_hypothesis_profile():
    hypothesis_profiles.register(explicit=True)  # the suite's plugin does, in a suite run only
    current = strategies.profile_name()
    try:
        hypothesis.settings.load_profile("nightly")
        assert strategies.profile_name() == "nightly"
        assert strategies.element_budget(ci=2, nightly=5) == 5
        hypothesis.settings.load_profile("ci")
        assert strategies.element_budget(ci=2, nightly=5) == 2
    finally:
        hypothesis.settings.load_profile(current)
    with pytest.raises(ValueError, match="ci=5, nightly=2"):
        strategies.element_budget(ci=5, nightly=2)


@settings(max_examples=60, database=None)
@given(shape=strategies.long_axis_shapes(70_000, max_dims=3))
def test_long_axis_shapes_stay_within_the_budget(shape):
    assert 1 <= len(shape) <= 3 and int(np.prod(shape)) <= 70_000


def test_axis_sizes_reach_the_boundaries_and_validate():
    seen = set()

    @settings(max_examples=300, database=None)
    @given(n=strategies.axis_sizes(5000))
    def draw(n):
        assert 0 <= n <= 5000
        seen.add(n)
    draw()
    assert seen & {4095, 4096, 4097} and seen & {7, 8, 9}
    with pytest.raises(ValueError, match="min_size"):
        strategies.axis_sizes(3, min_size=5)
    with pytest.raises(ValueError, match="budget"):
        strategies.long_axis_shapes(0)


# too_slow and no deadline: large arrays drawn on a loaded machine (as the suite's ci profile).
@settings(max_examples=20, database=None, deadline=None,
          suppress_health_check=[hypothesis.HealthCheck.too_slow])
@given(data=st.data())
def test_seeded_arrays_respect_dtype_range_and_shape(data):
    for name, lo, hi in (("bfloat16", -2.0, 3.0), ("int8", -1000, 1000), ("complex64", -1, 1)):
        dt = dtype_helpers.BY_NAME[name]
        x = data.draw(strategies.seeded_arrays(dt, (257, 3), min_value=lo, max_value=hi))
        assert x.dtype == dt.dtype and x.shape == (257, 3)
        w = x.astype(np.complex128) if dt.kind == "complex" else x.astype(np.float64)
        parts = [w.real, w.imag] if dt.kind == "complex" else [w]
        info = ml_dtypes.iinfo(dt.dtype) if dt.kind == "int" else None
        low, high = (max(lo, info.min), min(hi, info.max)) if info else (lo, hi)
        assert all(np.all(p >= low) and np.all(p <= high) for p in parts)
    x = data.draw(
        strategies.seeded_arrays(dtype_helpers.BY_NAME["float32"], (1000,), min_value=-2,
                                 max_value=2, values=(-1.0, 1.0)))
    assert np.sum(np.abs(x) != 1) <= 8  # at most 8 drawn edge values
    with pytest.raises(ValueError, match="min_value"):
        strategies.seeded_arrays(dtype_helpers.BY_NAME["float32"], (3,), min_value=1, max_value=0)
