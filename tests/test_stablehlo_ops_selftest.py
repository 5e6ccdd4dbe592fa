"""Self-tests of the op coverage matrix, the spec op list, the second oracle and the
generated stablehlo_ops area (issue 18)."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from jax import lax

from conformance.certification.rendering import coverage_md
from conformance.helpers import float_formats
from conformance.programs import compiled_programs
from conformance.programs import coverage, interpreter, mlir_ops, spec_ops_extract
from conformance.programs import stablehlo_catalog
from conformance.programs import stablehlo_text
from conformance.session import outcomes

ISSUE_MISSING = ("reduce_precision", "reverse", "select_and_scatter", "rng_bit_generator",
                 "is_finite", "optimization_barrier", "partition_id", "replica_id",
                 "batch_norm_training", "batch_norm_inference", "batch_norm_grad", "map",
                 "tuple", "get_tuple_element", "if", "after_all", "infeed", "outfeed", "send",
                 "recv", "cholesky", "triangular_solve", "logistic")


def test_spec_op_list_is_data_with_its_source():
    spec = mlir_ops.spec()
    names = [op["name"] for op in spec["ops"]]
    assert len(names) == len(set(names)) >= 95
    assert set(ISSUE_MISSING) <= set(names)
    assert re.fullmatch(r"[0-9a-f]{40}", spec["source"]["commit"])
    known = {t for group in spec["groups"].values() for t in group} | {"token"}
    for op in spec["ops"]:
        assert op["element_types"] and set(op["element_types"]) <= known, op


def test_extractor_reads_element_types_from_the_type_column():
    spec = ("\n## Ops\n\n### is_finite\n\n#### Inputs\n\n| Label | Name | Type |\n|---|---|---|\n"
            "| (I1) | `x` | tensor of floating-point type |\n\n#### Outputs\n\n| Name | Type |\n"
            "|---|---|\n| `y` | tensor of boolean type |\n\n### popcnt\n\n#### Inputs\n\n"
            "| Label | Name | Type |\n|---|---|---|\n| (I1) | `operand` | tensor of integer type |"
            "\n\n## Execution\n")
    ops = {op["name"]: op for op in spec_ops_extract.extract(spec)}
    assert ops["is_finite"]["element_types"] == spec_ops_extract.GROUPS["float"]
    assert "float32" not in ops["popcnt"]["element_types"]
    assert "uint4" in ops["popcnt"]["element_types"]
    with pytest.raises(ValueError, match="spec_text"):
        spec_ops_extract.extract("no sections")


def test_ops_of_walks_the_module_for_ops_and_element_types():
    module = compiled_programs.lower(
        lambda p, x, y: lax.select(p, lax.reduce_precision(x, 4, 3), y),
        [((3,), "bool"), ((3,), "bfloat16"), ((3,), "bfloat16")], "cpu")
    found = mlir_ops.ops_of(module)
    assert ("reduce_precision", "bfloat16") in found
    assert ("select", "bfloat16") in found  # typed by its second operand, not the predicate
    assert not any(op.startswith(("func", "builtin")) for op, _ in found)
    with pytest.raises(ValueError, match="module_text"):
        mlir_ops.ops_of("module { not mlir")


def test_coverage_counts_compared_only_after_a_comparison():
    module = compiled_programs.lower(lambda x: lax.rev(x, (0,)), [((4,), "int8")], "cpu")
    coverage.reset()
    coverage.note_executed(module)
    assert coverage.take("pass")["reverse"]["int8"] == [1, 1, 1]
    coverage.note_executed(module)
    assert coverage.take("skipped")["reverse"]["int8"] == [1, 1, 0]
    coverage.note_compiled(module)
    assert coverage.take("pass")["reverse"]["int8"] == [1, 0, 0]  # never executed
    assert coverage.take("pass") == {}  # take() resets


def test_coverage_matrix_counts_tests_and_lists_gaps_with_reasons():
    matrix: dict = {}
    coverage.add(matrix, {"reverse": {"int8": [1, 1, 1]}, "cholesky": {"float32": [1, 0, 0]}})
    coverage.add(matrix, {"reverse": {"int8": [1, 1, 0]}})
    assert matrix["reverse"]["int8"] == {"compiled": 2, "executed": 2, "compared": 1}
    reasons = {g["op"]: g["reason"] for g in coverage.gaps(matrix, {"if": "not_supported: x"})}
    assert "reverse" not in reasons
    assert reasons["cholesky"] == "compiled but never executed by a test"
    assert reasons["if"].startswith("not compilable on this platform")
    assert reasons["dynamic_iota"] == "not tested yet"  # catalog cases, not run here
    assert reasons["send"].startswith("CPU compile rejects it")
    assert reasons["infeed"].startswith("CPU compiles it, but execution blocks")
    assert reasons["replica_id"] == "not tested yet"  # nothing in matrix, no reason listed
    section = coverage.section(matrix)
    assert section["coverage_summary"]["spec_ops_compared"] == 1
    assert "| reverse | int8 |" in "\n".join(coverage_md.markdown(section))
    with pytest.raises(ValueError, match="compiled, executed"):
        coverage.add(matrix, {"reverse": {"int8": [1]}})


def test_interpreter_agrees_with_numpy_and_a_wrong_reference_is_a_suite_defect():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    module = compiled_programs.lower(lambda v: lax.rev(v, (0, 1)), [x], "cpu")

    def exact(got, want, call):
        np.testing.assert_array_equal(got, want, err_msg=call)
    got = interpreter.check_oracles(module, [x], [x[::-1, ::-1]], exact, call="rev")
    assert np.array_equal(got[0], x[::-1, ::-1])
    with pytest.raises(interpreter.OracleDisagreement, match="suite defect"):
        interpreter.check_oracles(module, [x], [x[::-1]], exact, call="rev")
    err = interpreter.OracleDisagreement("x")
    assert outcomes.status(err, when="call", outcome="failed") == "fail_error"
    assert err.attribution == "suite"


@pytest.mark.parametrize("fill", ["false", "true", "pattern"])
def test_interpreter_reads_boolean_results_of_every_shape(fill):
    """A boolean result, splat or not, is read whole: on jaxlib 0.8.0 a splat ``i1`` result
    read through numpy's buffer view gave garbage past the first byte (the seven
    OracleDisagreements of that bundle: is_finite, reverse, map, tuple,
    optimization_barrier of bools)."""
    x = {"false": np.zeros((3, 5), bool), "true": np.ones((3, 5), bool),
         "pattern": np.eye(3, 5, dtype=bool)}[fill]
    module = compiled_programs.lower(lambda v: lax.rev(v, (0, 1)), [x], "cpu")
    got = interpreter.evaluate(module, [x])
    assert got is not None and got[0].dtype == np.bool_ and got[0].shape == (3, 5)
    assert np.array_equal(got[0], x[::-1, ::-1]), got[0]
    finite = np.array([[1, np.inf, 0, np.nan, 2]] * 3, dtype=np.float64)
    module = compiled_programs.lower(lambda v: lax.is_finite(v), [finite], "cpu")
    assert np.array_equal(interpreter.evaluate(module, [finite])[0], np.isfinite(finite))


def test_the_device_is_judged_even_when_the_oracles_disagree():
    """Oracles agree: a wrong device result fails. They disagree (a wrong NumPy reference):
    a device matching either oracle leaves the suite's OracleDisagreement, a device
    matching neither is still the device's wrong result, the disagreement reported too."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    module = compiled_programs.lower(lambda v: lax.rev(v, (0, 1)), [x], "cpu")
    right, wrong_ref, garbage = x[::-1, ::-1], x[::-1], x + 100

    def exact(got, want, call):
        np.testing.assert_array_equal(got, want, err_msg=call)

    def devices(*outs):
        return [[(f"dev:{i}", o) for i, o in enumerate(outs)]]
    interpreter.check_oracles(module, [x], [right], exact, call="rev",
                              device_results=devices(right, right))
    with pytest.raises(AssertionError, match="on dev:1"):
        interpreter.check_oracles(module, [x], [right], exact, call="rev",
                                  device_results=devices(right, garbage))
    for agreeing in (right, wrong_ref):  # matches the interpreter, or the wrong NumPy
        with pytest.raises(interpreter.OracleDisagreement, match="suite defect"):
            interpreter.check_oracles(module, [x], [wrong_ref], exact, call="rev",
                                      device_results=devices(agreeing, agreeing))
    with pytest.raises(AssertionError, match="(?s)dev:1 matches neither oracle.*"
                                             "oracles disagree, a suite defect") as info:
        interpreter.check_oracles(module, [x], [wrong_ref], exact, call="rev",
                                  device_results=devices(right, garbage))
    assert not isinstance(info.value, interpreter.OracleDisagreement)
    assert "dev:0" not in str(info.value).split("(and the oracles")[0]


def test_interpreter_declines_what_it_cannot_evaluate():
    spd = np.eye(3, dtype=np.float32) * 2
    # would abort the process
    assert interpreter.evaluate(stablehlo_text.cholesky(spd), [spd]) is None
    bf = np.ones(3, ml_dtypes.bfloat16)
    assert interpreter.evaluate(stablehlo_text.unary("logistic", bf), [bf]) is None


def test_catalog_references_on_known_properties():
    operand = np.array([[1, 5, 2], [5, 0, 3]], np.int32)  # a tie of maxima: 5 and 5
    source = np.array([[10, 20]], np.int32)
    out = stablehlo_catalog.select_and_scatter_reference(operand, source, (2, 2))
    assert out[0, 1] == 30 and out.sum() == 30  # both windows pick the first 5
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3))
    y, mean, var = stablehlo_catalog.batch_norm_reference(
        "training", [x, np.ones(3), np.zeros(3)], epsilon=0.0)
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=0), 1, rtol=1e-9)
    assert {c.op for c in stablehlo_catalog.CASES} >= {"reduce_precision", "reverse", "cholesky",
                                                       "triangular_solve", "batch_norm_grad", "map"}


def test_broken_reduce_precision_fails_and_coverage_is_in_the_report(run_suite):
    result, doc = run_suite("hlo-reduce-precision-toward-zero", "-k",
                            "test_op and reduce_precision-e5m10-float32")
    assert doc is not None, result.stdout.str()[-2000:]
    statuses = {r["status"] for r in doc["results"] if "reduce_precision" in r["nodeid"]}
    assert statuses == {"fail_wrong_result"}, statuses
    cell = doc["coverage"]["reduce_precision"]["float32"]
    assert cell["compiled"] >= 1 and cell["compared"] >= 1
    assert "is_finite" in {g["op"] for g in doc["coverage_gaps"]}


def test_reduce_precision_reference_follows_the_spec_rule():
    rng = np.random.default_rng(1)
    normal = (rng.uniform(-6e4, 6e4, 4096) * 2.0 ** rng.integers(-14, 0, 4096)).astype(
        np.float32)
    normal = normal[np.abs(normal) >= np.finfo(np.float16).tiny]
    got = float_formats.reduce_precision(normal, 5, 10)
    np.testing.assert_array_equal(got, normal.astype(np.float16).astype(np.float32))
    bf = float_formats.reduce_precision(normal.astype(np.float64), 8, 7)
    np.testing.assert_array_equal(bf, normal.astype(ml_dtypes.bfloat16).astype(np.float64))
    edge = np.array([2e-6, -2e-6, 7e4, -7e4, np.nan, np.inf], np.float32)
    out = float_formats.reduce_precision(edge, 5, 10)  # float16's subnormals flush to zero
    assert out[0] == 0 and not np.signbit(out[0]) and np.signbit(out[1]) and out[1] == 0
    assert out[2] == np.inf and out[3] == -np.inf and np.isnan(out[4]) and out[5] == np.inf
    with pytest.raises(TypeError, match="'x'"):
        float_formats.reduce_precision(np.zeros(2, np.int32), 5, 10)
    with pytest.raises(ValueError, match="exponent_bits"):
        float_formats.reduce_precision(np.zeros(2, np.float32), 0, 10)


@pytest.mark.parametrize("mutant, selection, op", [
    # hlo-composite-operands-swapped is killed the same way (python -m tests.mutants)
    ("hlo-dynamic-pad-low-as-high", "dynamic_pad-low-high-interior-int32", "dynamic_pad")])
def test_broken_text_only_ops_fail(run_suite, mutant, selection, op):
    result, doc = run_suite(mutant, "-k", f"test_op and {selection}")
    assert doc is not None, result.stdout.str()[-2000:]
    statuses = {r["status"] for r in doc["results"] if op in r["nodeid"]}
    assert statuses == {"fail_wrong_result"}, statuses


def test_gap_references_and_rng_sample_check():
    from conformance.programs import rng_and_ids
    from conformance.programs import stablehlo_catalog_gaps

    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    padded = stablehlo_catalog_gaps.pad_reference(x, np.int32(-1), (1, 0), (0, 2), (1, 1))
    assert padded.shape == (4, 7) and padded[1, 0] == 0 and padded[1, 1] == -1
    assert padded[3, 4] == 5 and padded[0].tolist() == [-1] * 7
    conv = stablehlo_catalog_gaps.conv_reference(np.ones((1, 1, 4)), np.ones((1, 1, 3)), (1, 1))
    assert conv.ravel().tolist() == [2, 3, 3, 2]
    deq, q = stablehlo_catalog_gaps.quantize_reference(
        np.array([0.25, 0.75, -100.0, 100.0], np.float32), 0.5, 3)
    assert q.tolist() == [3, 5, -128, 127] and deq.tolist() == [0.0, 1.0, -65.5, 62.0]
    rng = np.random.default_rng(0)
    ok = rng.uniform(2, 5, (64, 64)).astype(np.float32)
    rng_and_ids.check_rng_sample(ok, "UNIFORM", 2, 5, (64, 64), np.float32, call="t")
    for bad, dist in ((np.zeros((64, 64), np.float32), "NORMAL"),  # SPMD zeros
                      (ok + 0.5, "UNIFORM"), (ok.astype(np.float64), "UNIFORM")):
        with pytest.raises(AssertionError):
            rng_and_ids.check_rng_sample(bad, dist, 2, 5, (64, 64), np.float32, call="t")
    normal = rng.normal(3, 2, (64, 64))
    rng_and_ids.check_rng_sample(normal, "NORMAL", 3, 2, (64, 64), np.float64, call="t")
    with pytest.raises(AssertionError, match="standard deviation"):
        rng_and_ids.check_rng_sample(normal * 1.5, "NORMAL", 3 * 1.5, 2, (64, 64), np.float64,
                                     call="t")
    with pytest.raises(ValueError, match="distribution"):
        rng_and_ids.check_rng_sample(normal, "GAMMA", 0, 1, (64, 64), np.float64, call="t")


def test_collective_permute_becomes_a_broadcast_over_all_partitions():
    from conformance.programs import rng_and_ids

    line = ('%1 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.'
            "channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]>"
            " : tensor<2x2xi64>}> : (tensor<2xi32>) -> tensor<2xi32>")
    out = rng_and_ids.as_collective_broadcast(line, 2)
    assert '"stablehlo.collective_broadcast"(%arg1)' in out and "source_target" not in out
    assert "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>" in out
    assert "channel_handle<handle = 1, type = 1>" in out
    with pytest.raises(ValueError, match="module_text"):
        rng_and_ids.as_collective_broadcast("%1 = stablehlo.add %a, %b", 2)
