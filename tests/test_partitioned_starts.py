"""The dynamic starts of generated programs run partitioned (issue 41 item 7):
``dag_strategy.inputs(..., avoid=...)`` keeps in range only the starts of the two
cataloged SPMD partitioner defects' configurations (a dynamic_update_slice whose update is
one element along the dimension, a dynamic_slice of 2 or more elements along it); every
other start is drawn inside, at and past its dimension, as in an unpartitioned program, so
XLA's clamping is checked under partitioning too. Before, every dynamic_slice and
dynamic_update_slice start of a partitioned program was drawn in range: the statistics
below then count no clamped start at all and fail.

Also the one slice the sharded programs no longer draw: a slice of a pad that is one
element inside its high padding (``programs(..., padding_slices=False)``; XLA's
partitioner aborts its compile, ``xla-spmd-slice-of-high-padding-crash``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from conformance import test_programs_spmd
from conformance.programs import dag_strategy
from runtime import versions

DUS_DEFECT, DS_DEFECT = dag_strategy.START_DEFECTS
N = 8   # devices: test_spmd_generated_programs' shapes at the default --cpu-devices


@st.composite
def _partitioned(draw, family: str, avoid: tuple[str, ...]):
    """(program, idx) as test_spmd_generated_programs draws them on N devices."""
    shapes = [(N * draw(st.integers(1, 2)), N * draw(st.integers(1, 3)))
              for _ in range(draw(st.integers(1, 2)))]
    program = draw(dag_strategy.programs(family, budget=12 * N * N, max_ops=20,
                                         param_shapes=shapes, strided_slices=False,
                                         padding_slices=False))
    _, idx = dag_strategy.inputs(draw, program, avoid=avoid)
    return program, idx


def _drawn(strategy, count: int) -> list:
    """``count`` derandomized draws of ``strategy`` (the same ones every run)."""
    out: list = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out


def _starts(program, idx):
    """(op, d, s, in range) of each dimension of each dynamic_slice and
    dynamic_update_slice: d the operand's dimension, s the slice or update size, in range
    when the start (a negative one counted from the end, as jax does) needs no clamp."""
    for n in program.nodes:
        if n.op == "dynamic_update_slice":
            dims, sizes = n.shape, program.nodes[n.args[1]].shape
        elif n.op == "dynamic_slice":
            dims, sizes = program.nodes[n.args[0]].shape, n.shape
        else:
            continue
        for k, d, s in zip(n.attr("starts"), dims, sizes):
            start = int(idx[k]) + d if idx[k] < 0 else int(idx[k])
            yield n.op, d, s, 0 <= start <= d - s


def _needs_range(op: str, d: int, s: int, avoid: tuple[str, ...]) -> bool:
    """The configurations of the defects: an update of one element, a slice of 2 or more
    elements but not the whole dimension."""
    return (op == "dynamic_update_slice" and s == 1 and DUS_DEFECT in avoid) or \
        (op == "dynamic_slice" and 2 <= s < d and DS_DEFECT in avoid)


def _kind(d: int, s: int) -> str:
    return "one" if s == 1 else "whole" if s == d else "part"


@pytest.mark.parametrize("avoid", [dag_strategy.START_DEFECTS, (DUS_DEFECT,)],
                         ids=["jaxlib<0.12", "jaxlib>=0.12"])
def test_partitioned_programs_draw_clamped_starts_outside_the_defects(avoid):
    """Over 300 derandomized partitioned programs of the three families: every start of
    an avoided configuration is in range, and of the other starts at least a fifth need
    a clamp, among them starts of a dynamic_update_slice of 2 or more elements (not the
    whole dimension: a real window) and of a one-element dynamic_slice (with only the
    dynamic_update_slice defect avoided, as on jaxlib 0.12: also of a dynamic_slice of 2
    or more elements)."""
    seen: dict[tuple[str, str], list[bool]] = {}
    for family in ("integer", "data_movement", "float"):
        for program, idx in _drawn(_partitioned(family, avoid), 100):
            for op, d, s, inside in _starts(program, idx):
                needs = _needs_range(op, d, s, avoid)
                assert inside or not needs, (op, d, s, idx.tolist(), program.source())
                if not needs:
                    seen.setdefault((op, _kind(d, s)), []).append(inside)
    free = [inside for v in seen.values() for inside in v]
    clamped = {key: v.count(False) for key, v in seen.items()}
    assert len(free) >= 100 and free.count(False) >= len(free) / 5, (len(free), clamped)
    assert clamped.get(("dynamic_update_slice", "part"), 0) > 0, clamped
    assert clamped.get(("dynamic_slice", "one"), 0) > 0, clamped
    assert clamped.get(("dynamic_slice", "whole"), 0) > 0, clamped
    if DS_DEFECT not in avoid:
        assert clamped.get(("dynamic_slice", "part"), 0) > 0, clamped


def test_avoided_starts_name_each_configuration_and_reject_other_ids():
    """A dynamic_update_slice of a one-element update along dimension 1 only, a
    dynamic_slice of f32[8, 6] to 1x3: its dimension 1 only, and one to 8x2 (the whole
    of dimension 0): its dimension 1 only."""
    from conformance.programs.dag import Node, Program

    nodes = (Node("param", (), (("index", 0),), (8, 6), "float32"),
             Node("slice", (0,), (("limit", (2, 1)), ("start", (0, 0)), ("strides", (1, 1))),
                  (2, 1), "float32"),
             Node("dynamic_update_slice", (0, 1), (("starts", (3, 4)),), (8, 6), "float32"),
             Node("dynamic_slice", (2,), (("starts", (5, 6)),), (1, 3), "float32"),
             Node("dynamic_slice", (2,), (("starts", (7, 0)),), (8, 2), "float32"))
    program = Program("float", nodes, (3, 4))
    assert dag_strategy.avoided_starts(program, dag_strategy.START_DEFECTS) == [
        (4, 6, 1), (6, 6, 3), (0, 6, 2)]
    assert dag_strategy.avoided_starts(program, (DUS_DEFECT,)) == [(4, 6, 1)]
    assert dag_strategy.avoided_starts(program, ()) == []
    for bad in (["xla-spmd-pad-interior-sharded-result"], DUS_DEFECT):
        with pytest.raises(ValueError, match="avoid"):
            dag_strategy.avoided_starts(program, bad)
        with pytest.raises(ValueError, match="avoid"):
            dag_strategy.inputs(lambda s, label=None: s.example(), program, avoid=bad)


def test_the_spmd_area_avoids_the_defects_the_catalog_does_not_measure_fixed():
    """jaxlib's CPU client: the dynamic_slice defect only before 0.12.0 (the catalog's
    first_fixed), the dynamic_update_slice one always; a plugin library or another
    platform: both (the XLA it was built from is unknown)."""
    want = dag_strategy.START_DEFECTS if Version(versions.JAXLIB_VERSION) < Version("0.12.0") \
        else (DUS_DEFECT,)
    assert test_programs_spmd._start_defects("cpu", False) == want
    assert test_programs_spmd._start_defects("cpu", True) == dag_strategy.START_DEFECTS
    assert test_programs_spmd._start_defects("cuda", False) == dag_strategy.START_DEFECTS


def test_partitioned_programs_draw_no_one_element_slice_of_a_high_padding():
    """The slice rule of the program builder, its draws scripted: of a pad of i16[2, 2]
    with high padding 1 along dimension 0 (result i16[3, 2]), the slice [2:3, 0:2] (one
    element, inside the high padding) is drawn only with ``padding_slices`` (as the
    unpartitioned areas draw); [1:3, 0:2] (across the last element) and, of a pad with
    low padding 1, [0:1, 0:1] (inside the low padding) are drawn either way."""
    from conformance.programs.dag import Node

    def builder(padding_slices, script):
        draws = iter(script)   # start, limit, stride per dimension, as the rule draws them
        b = dag_strategy._Builder(lambda strategy, label=None: next(draws), "data_movement",
                                  budget=64)
        b.padding_slices = padding_slices
        b.nodes = [Node("param", (), (("index", 0),), (2, 2), "int16"),
                   Node("pad", (0,), (("config", ((0, 1, 0), (0, 0, 0))), ("value", 7)),
                        (3, 2), "int16"),
                   Node("pad", (0,), (("config", ((1, 0, 0), (0, 0, 0))), ("value", 7)),
                        (3, 2), "int16")]
        return b

    in_high = [2, 3, 1, 0, 2, 1]      # [2:3, 0:2] of node 1
    across = [1, 3, 1, 0, 2, 1]       # [1:3, 0:2] of node 1
    in_low = [0, 1, 1, 0, 1, 1]       # [0:1, 0:1] of node 2
    for allowed in (False, True):
        assert (builder(allowed, in_high).apply("slice", 1) is not None) == allowed
        assert builder(allowed, across).apply("slice", 1) is not None
        assert builder(allowed, in_low).apply("slice", 2) is not None
