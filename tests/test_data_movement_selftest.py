"""Self-tests of the data_movement area, the replicated ``rng`` check and the
``reduce_precision`` ties: their helpers, and each check failing on a broken backend
(mutants of ``tests/mutants/moved_bits.py``) while the healthy one passes."""

import math

import hypothesis

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import dtype_helpers
from conformance.helpers import float_formats
from conformance.helpers import moved_bytes
from conformance.helpers import strategies
from tests.mutants import CATALOG  # imported once, before pytester snapshots sys.modules


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_grid_shapes_are_non_square_and_within_budget(data):
    budget = data.draw(st.integers(10, 50_000))
    shape = data.draw(strategies.grid_shapes(budget, min_dims=2, max_dims=3))
    assert 2 <= len(shape) <= 3 and min(shape) >= 1
    assert math.prod(shape) <= budget, shape
    assert len(set(shape)) > 1, shape


@pytest.mark.parametrize("side", [127, 129, 1025, 4097])
def test_grid_shapes_reach_both_sides_of_tile_boundaries(side):
    found = hypothesis.find(strategies.grid_shapes(40_000), lambda s: side in s,
                            settings=settings(max_examples=2000, database=None))
    assert side in found


def test_grid_shapes_reject_bad_bounds():
    with pytest.raises(ValueError, match="grid_shapes"):
        strategies.grid_shapes(1, min_dims=2, max_dims=2)
    with pytest.raises(ValueError, match="grid_shapes"):
        strategies.grid_shapes(100, min_dims=3, max_dims=2)


def _bits(a: np.ndarray) -> set[int]:
    return set(
        np.ascontiguousarray(a).view(dtype_helpers.uint_view_dtype(a.dtype)).reshape(-1).tolist())


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64"])
def test_special_bit_patterns_hold_nan_payloads_and_subnormals(name):
    dt = dtype_helpers.BY_NAME[name]
    sp = strategies.special_bit_patterns(dt)
    finfo = ml_dtypes.finfo(dt.dtype)
    with np.errstate(invalid="ignore"):  # signaling NaNs
        wide = sp.astype(np.float64)
    assert np.any((wide != 0) & (np.abs(wide) < float(finfo.tiny))), "no subnormal"
    assert np.any(np.signbit(wide) & (wide == 0)), "no -0.0"
    assert np.isinf(wide).sum() == 2
    nans = sp[np.isnan(wide)]
    quiet = _bits(np.array([np.nan], dt.dtype))
    assert len(_bits(nans) - quiet) >= 6, "too few NaN payloads"  # signaling, payloads, -NaN


@pytest.mark.parametrize("dt", dtype_helpers.TRANSFER_DTYPES, ids=str)
@settings(max_examples=3, database=None, deadline=None)
@given(data=st.data())
def test_seeded_bit_patterns_hold_every_special_pattern(dt, data):
    sp = strategies.special_bit_patterns(dt)
    x = data.draw(strategies.seeded_bit_patterns(dt, (7, 65)))
    assert x.dtype == dt.dtype and x.shape == (7, 65)
    if dt.kind == "complex":
        parts = dtype_helpers.real_dtype(dt)
        got = {tuple(p) for p in x.reshape(-1).view(parts).view(
            dtype_helpers.uint_view_dtype(parts)).reshape(-1, 2).tolist()}
        want = {tuple(p) for p in sp.view(parts).view(dtype_helpers.uint_view_dtype(parts)).reshape(
            -1, 2).tolist()}
        assert want <= got
    elif dt.kind == "bool" or dtype_helpers.is_subbyte(dt.dtype):
        assert set(sp.astype(np.int8).tolist()) <= set(x.reshape(-1).astype(np.int8).tolist())
    else:
        assert _bits(sp) <= _bits(x)


@settings(max_examples=5, database=None)
@given(data=st.data())
def test_seeded_bit_patterns_small_arrays_are_all_special(data):
    x = data.draw(strategies.seeded_bit_patterns(dtype_helpers.BY_NAME["float32"], (2,)))
    assert _bits(x) <= _bits(strategies.special_bit_patterns(dtype_helpers.BY_NAME["float32"]))
    empty = data.draw(strategies.seeded_bit_patterns(dtype_helpers.BY_NAME["int8"], (0, 3)))
    assert empty.shape == (0, 3)


def test_moved_bytes_pad_matches_numpy_and_keeps_nan_payloads():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    config = ((1, 2, 0), (0, 3, 0))
    want = np.pad(x, ((1, 2), (0, 3)), constant_values=-5)
    np.testing.assert_array_equal(moved_bytes.pad(x, np.array(-5, np.int32), config), want)
    interior = moved_bytes.pad(np.array([1, 2, 3], np.int8), np.array(0, np.int8),
                               ((-1, 1, 2),))
    np.testing.assert_array_equal(interior, [0, 0, 2, 0, 0, 3, 0])
    nan = np.array([0x7FA00001], np.uint32).view(np.float32)
    out = moved_bytes.pad(nan, np.array(nan[0]), ((1, 0, 0),))
    assert _bits(out) == {0x7FA00001}
    with pytest.raises(ValueError, match="'config'"):
        moved_bytes.pad(x, np.array(0, np.int32), ((0, 0, 0),))
    with pytest.raises(ValueError, match="'value'"):
        moved_bytes.pad(x, np.array(0, np.int8), config)
    with pytest.raises(ValueError, match="removes more"):
        moved_bytes.pad(x, np.array(0, np.int32), ((-2, -2, 0), (0, 0, 0)))
    with pytest.raises(ValueError, match="'b'"):
        moved_bytes.from_bytes(np.zeros((3, 2), np.uint8), np.float32)


def test_bitwise_mismatch_message_shows_hex_bits():
    want = np.array([0x7FA00001, 1], np.uint32).view(np.float32)
    got = np.array([0x7FC00000, 1], np.uint32).view(np.float32)
    with pytest.raises(AssertionError, match=r"bits 0x7fc00000 vs 0x7fa00001"):
        assertions.assert_bitwise_equal(got, want, call="c")
    z = np.array([1 + 1j], np.complex64)
    with pytest.raises(AssertionError, match=r"bits \(0x3f800000, 0x3f800000\) vs "
                                             r"\(0x3f800000, 0x00000000\)"):
        assertions.assert_bitwise_equal(z, np.array([1 + 0j], np.complex64), call="c")


@pytest.mark.parametrize("target, mantissa", [("bfloat16", 7), ("float16", 10)])
def test_exact_ties_round_half_to_even_like_ml_dtypes(target, mantissa):
    """Ties built from float32 normals round as ml_dtypes' conversions do (half to even),
    in the spec reference and in a real narrow type; even ties round down, odd ones up."""
    rng = np.random.default_rng(0)
    x = (rng.uniform(1, 2, 512) * 2.0 ** rng.integers(-10, 10, 512)).astype(np.float32)
    for odd in (False, True):
        ties = float_formats.exact_ties(x, mantissa, np.full(x.shape, odd))
        exponent = 8 if target == "bfloat16" else 5
        got = float_formats.reduce_precision(ties, exponent, mantissa)
        want = ties.astype(dtype_helpers.BY_NAME[target].dtype).astype(np.float32)
        np.testing.assert_array_equal(got, want)
        assert np.all((np.abs(got) > np.abs(ties)) == odd)  # even: down, odd: up
        assert not np.any(got == ties)  # every element was a tie, none representable


def test_exact_ties_reject_bad_arguments():
    with pytest.raises(TypeError, match="'x'"):
        float_formats.exact_ties(np.zeros(2, np.int32), 3, np.zeros(2, bool))
    with pytest.raises(ValueError, match="mantissa_bits"):
        float_formats.exact_ties(np.zeros(2, np.float16), 10, np.zeros(2, bool))


# Each mutant with the smallest selection that kills it; the healthy CPU client passes it.
BROKEN = [
    ("out-moved-bit-flip-last-device", "test_data_movement and test_transpose and uint8", 2,
     "bits 0x"),
    ("out-moved-swap-remainder-rows", "test_data_movement and test_transpose and int32", 2,
     "(bitwise)"),
    ("out-moved-canonical-nans", "test_data_movement and test_reverse and float32", 2,
     "expected=np.float32(nan) (bits 0x"),
    ("out-flush-subnormals", "test_data_movement and test_transpose and float32", 2,
     "bits 0x"),
    # Every area's operands above 1,024 elements, moved on the device (programs/moves.py).
    ("out-moved-bit-flip-last-device",
     "test_every_reduction_at_block_boundaries and 65537 or test_one_mib_shards and 1d-x "
     "or test_fft_of_lengths_with_large_prime_factors and rfft-float32-4099", 2, "bits 0x"),
    ("out-moved-swap-remainder-rows", "test_dot_general_at_block_boundaries and 7x4097x9",
     2, "(bitwise)"),
    ("out-rng-zeros-last-device", "test_rng_in_replicated_program and UNIFORM-float32", 1,
     "1 of 1 devices returned no valid draw"),
    ("out-reduce-precision-ties-away", "test_op and reduce_precision-e8m7-float32", 2,
     "differs from expected"),
]


@pytest.mark.parametrize("mutant, select, devices, fragment", BROKEN,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_check_fails_on_broken_backend(suite_runs, mutant, select, devices, fragment):
    """Every test of the selection fails with a wrong result on the mutant, its message
    holding ``fragment`` (a shared child that stops at each test's first failing example)."""
    assert CATALOG[mutant].kind == "output"
    result = suite_runs.run(mutant, "-k", select, devices=devices, first_failure=True)
    doc = result.doc
    assert doc is not None, result.stdout.str()[-3000:]
    statuses = {r["status"] for r in doc["results"]}
    assert statuses == {"fail_wrong_result"}, (statuses, result.stdout.str()[-3000:])
    assert any(fragment in f["message"] for f in doc["failures"]), \
        [f["message"][:400] for f in doc["failures"]]


@pytest.mark.parametrize("devices", sorted({b[2] for b in BROKEN}))
def test_the_same_checks_pass_on_the_healthy_client(suite_runs, devices):
    """jaxlib's CPU client passes every selection of ``BROKEN`` (one child per device
    count, the selections joined with ``or``; each selection holds tests: the broken
    runs above assert a wrong result in every one)."""
    select = " or ".join(f"({b[1]})" for b in BROKEN if b[2] == devices)
    healthy = suite_runs.run("cpu", "-k", select, devices=devices)
    doc = healthy.doc
    assert doc is not None and doc["results"], healthy.stdout.str()[-3000:]
    assert {r["status"] for r in doc["results"]} == {"pass"}, healthy.stdout.str()[-3000:]


@settings(max_examples=25, deadline=None)
@given(shape=strategies.shapes(min_dims=1, max_dims=3, min_side=1))
def test_moves_of_match_numpy_and_carry_the_sharding(shape):
    """The byte references of transpose, broadcast_in_dim and reverse equal NumPy's own
    ops on plain integers; the result PartitionSpec follows the moved dimensions."""
    from conformance.programs import moves

    x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    spec = tuple(f"a{i}" for i in range(len(shape)))
    got = {m.name: m for m in moves.moves_of(shape)}
    assert set(got) == ({"transpose"} if len(shape) >= 2 else set()) | {
        "broadcast_in_dim", "reverse"}
    if "transpose" in got:
        np.testing.assert_array_equal(got["transpose"].expected(x), x.T)
        assert got["transpose"].result_spec(spec) == spec[::-1]
    np.testing.assert_array_equal(got["broadcast_in_dim"].expected(x), np.stack([x, x]))
    assert got["broadcast_in_dim"].result_spec(spec) == (None,) + spec
    np.testing.assert_array_equal(got["reverse"].expected(x), np.flip(x))
    for m in got.values():
        assert m.expected(x).shape == m.result_shape


def test_moves_reject_bad_arguments_and_leave_small_operands_alone():
    from conformance.programs import moves

    with pytest.raises(ValueError, match="'shape'"):
        moves.moves_of(())
    m = moves.moves_of((3, 4))[0]
    with pytest.raises(ValueError, match="'x'"):
        m.expected(np.zeros((4, 3), np.int32))
    with pytest.raises(ValueError, match="'spec'"):
        m.result_spec(("x",))
    # At most MIN_ELEMENTS elements: the data_movement area's sizes, no program is run.
    moves.check_moves(None, np.zeros(moves.MIN_ELEMENTS, np.float32), None, "c")
