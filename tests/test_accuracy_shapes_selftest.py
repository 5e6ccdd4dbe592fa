"""test_float_accuracy_in_ulp reaches a tile remainder and a row's vector tail.

Its 8 ``ci`` examples of shape (64,) reached neither a flat index 127 mod 128 nor a row
longer than 8 and not a multiple of 8, so the output mutants ``out-tile-remainder-128``
and ``out-row-tail-8`` survived its float32 cases (docs/ci.md). Here the test's own body
runs in-process under ``ci``'s settings on a fake backend whose results are the correctly
rounded values made wrong where each of those mutants makes them wrong (their own masks,
:mod:`tests.mutants.outputs`): it must fail, and pass on the correct results. On the
(64,) draws both fakes passed.
"""

import functools

import hypothesis
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import test_kernels_elementwise
from conformance.helpers import mpmath_reference, strategies
from conformance.programs import compiled_programs
from conformance.session.hypothesis_profiles import PROFILES
from tests.mutants import outputs
from tests.mutants.base import wrong_at

SHAPES = test_kernels_elementwise.ACCURACY_SHAPES
SHAPE_OF = test_kernels_elementwise.ACCURACY_SHAPE_OF
#: The catalog's masks of the two mutants (tests/mutants/outputs.py), None: correct results.
MASKS = {"out-tile-remainder-128": functools.partial(outputs.tile_remainder, 128),
         "out-row-tail-8": functools.partial(outputs.row_tail, 8)}
#: The cases both mutants target (``test_float_accuracy_in_ulp and float32``).
FLOAT32 = [c for c in test_kernels_elementwise.ACCURACY_CASES
           if c.values[1].name == "float32"]
#: ``ci``'s examples (8, derandomized), stopping at the first failure (as the mutant
#: runner's ``selftest-first-failure``): no shrinking.
CI_FIRST_FAILURE = {**PROFILES["ci"], "report_multiple_bugs": False,
                    "phases": [hypothesis.Phase.explicit, hypothesis.Phase.reuse,
                               hypothesis.Phase.generate]}


def _run_accuracy_test(op, dt, pick, monkeypatch) -> list[tuple[int, ...]]:
    """test_float_accuracy_in_ulp's body for ``op``/``dt`` under ``ci``'s settings, on a
    backend returning the correctly rounded results made wrong where ``pick`` says (None:
    nowhere); the shapes it ran."""
    shapes = []

    def fake_run_everywhere(program_cache, name, fn, args, dt_, call, *, n_outputs=1):
        out = mpmath_reference.correctly_rounded(name, args, dt_.dtype)
        shapes.append(out.shape)
        mask = None if pick is None else pick(None, args, out)
        return [("fake:0", out if mask is None else wrong_at(out, mask))], "fake program"

    monkeypatch.setattr(compiled_programs, "run_everywhere", fake_run_everywhere)
    body = test_kernels_elementwise.test_float_accuracy_in_ulp.hypothesis.inner_test

    @settings(**CI_FIRST_FAILURE)
    @given(data=st.data())
    def run(data):
        body(None, op, dt, data)
    run()
    return shapes


@pytest.mark.parametrize("mutant", sorted(MASKS))
@pytest.mark.parametrize("op,dt", FLOAT32)
def test_float32_accuracy_fails_a_backend_wrong_only_at_the_mutants_elements(
        op, dt, mutant, monkeypatch):
    with pytest.raises(AssertionError, match="differs from expected"):
        _run_accuracy_test(op, dt, MASKS[mutant], monkeypatch)


@pytest.mark.parametrize("op,dt", FLOAT32)
def test_float32_accuracy_passes_the_correct_results_on_one_shape(op, dt, monkeypatch):
    shapes = _run_accuracy_test(op, dt, None, monkeypatch)
    assert len(shapes) == CI_FIRST_FAILURE["max_examples"]
    assert set(shapes) == {SHAPE_OF[(op.name, dt.name)]}  # one compile a case


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_accuracy_shape_has_a_tile_remainder_and_a_row_tail(shape):
    out = np.zeros(shape, np.float32)
    for name, pick in MASKS.items():
        mask = pick(None, [out], out)
        assert mask is not None and mask.any(), (name, shape)
    assert out.size <= 258
    assert any(shape[-1] + d in strategies.BOUNDARY_SIZES for d in (-1, 1)), shape


def test_every_dtype_gets_every_shape_and_nightly_draws_them_all(monkeypatch):
    by_dtype = {}
    for case in test_kernels_elementwise.ACCURACY_CASES:
        op, dt = case.values
        by_dtype.setdefault(dt.name, set()).add(SHAPE_OF[(op.name, dt.name)])
    assert all(s == set(SHAPES) for s in by_dtype.values()), by_dtype

    op, dt = FLOAT32[0].values
    seen = set()

    @settings(max_examples=200, database=None, derandomize=True)
    @given(data=st.data())
    def draw(data):
        seen.add(data.draw(test_kernels_elementwise.accuracy_shapes(op, dt)))

    monkeypatch.setattr(strategies, "profile_name", lambda: "ci")
    draw()
    assert seen == {SHAPE_OF[(op.name, dt.name)]}
    seen.clear()
    monkeypatch.setattr(strategies, "profile_name", lambda: "nightly")
    draw()
    assert seen == set(SHAPES)
