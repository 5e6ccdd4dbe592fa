"""The structural rewriter of mutants and broken backends (tests/mutants/stablehlo_rewrite.py) on
programs lowered by the installed jax, and the loud failure of a no-op rewrite."""

import numpy as np
import pytest
from jax.sharding import Mesh

from conformance.programs import compiled_programs, sharded_programs
from tests.mutants import CATALOG, stablehlo_rewrite, rewrite_log, runner
from tests.mutants.catalog import parse_targets
from tests.mutants.runner import rewrites


@pytest.fixture(scope="module")
def client():
    from runtime._client import Client
    from runtime._compat import native

    return Client(native.make_cpu_client(num_devices=2))


def _collective(client, name):
    """(fn, x, in sharding, out sharding, expected, out shape, lowered text) of the suite's
    ``name`` collective over a 1-D mesh of the client's 2 devices."""
    from runtime.xla_bridge import client_platform

    mesh = Mesh(np.array(client.local_devices()), ("d",))
    fn, x, in_s, out_s, expected, shape = sharded_programs.collective_case(
        mesh, "d", sharded_programs.COLLECTIVES[name], (2, 2), np.int32, np.random.default_rng(0))
    text = sharded_programs.lower(fn, [x], [in_s], out_s, client_platform(client))
    return fn, x, in_s, out_s, expected, shape, text


def _op_names(text):
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir

    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        return [op.name for op in stablehlo_rewrite.walk(module.operation)]


def _run(client_class, client, case):
    from runtime import xla_client as xc

    fn, x, in_s, out_s, _, shape, _ = case
    broken = client_class(client._native) if client_class else client
    out, problem, _, _ = sharded_programs.ShardedRunner(broken, xc).run(
        "c", fn, [x], [in_s], out_s, shape)
    return out, problem


COLLECTIVE_MUTANTS = [("broken-all-reduce", "all_reduce"), ("coll-all-reduce-max", "all_reduce"),
                      ("coll-reduce-scatter-max", "reduce_scatter"),
                      ("coll-permute-nowhere", "collective_permute")]


@pytest.mark.parametrize("mutant,collective", COLLECTIVE_MUTANTS)
def test_collective_mutants_break_programs_lowered_by_this_jax(client, mutant, collective):
    case = _collective(client, collective)
    text = case[-1]
    assert f"stablehlo.{collective}" in _op_names(text)
    changed = stablehlo_rewrite.apply(text, CATALOG[mutant].client.mutation, mutant)
    assert changed is not None and changed != text
    healthy, problem = _run(None, client, case)
    assert not problem, problem
    np.testing.assert_array_equal(healthy, case[4])
    out, problem = _run(CATALOG[mutant].client, client, case)
    assert problem or not np.array_equal(out, case[4]), (
        f"{mutant} computes the right {collective} on a program lowered by this jax")


def test_all_reduce_alone_removes_the_collective_whatever_its_replica_groups_syntax(client):
    # jax 0.12 prints replica_groups as #stablehlo.replica_group_mesh_axes<...>, earlier
    # releases as dense<[[0, 1]]>: the rewrite does not read either.
    text = _collective(client, "all_reduce")[-1]
    changed = stablehlo_rewrite.apply(text, CATALOG["broken-all-reduce"].client.mutation,
                                      "broken-all-reduce")
    assert "stablehlo.all_reduce" in _op_names(text)
    assert "stablehlo.all_reduce" not in _op_names(changed)


def test_aliasing_mutant_drops_the_donation_of_a_lowered_program(client):
    from runtime.xla_bridge import client_platform

    text = compiled_programs.lower(lambda a: a + 1, [np.ones(4, np.float32)],
                                   client_platform(client), donate=(0,))
    changed = stablehlo_rewrite.apply(
        text, CATALOG["broken-aliasing"].client.mutation, "broken-aliasing")
    assert "tf.aliasing_output" in text and "tf.aliasing_output" not in changed


def test_a_rewrite_that_selects_but_changes_nothing_raises_naming_the_mutant(client):
    text = _collective(client, "all_reduce")[-1]
    idle = stablehlo_rewrite.Mutation(stablehlo_rewrite.named("stablehlo.all_reduce"),
                                      lambda op: None)
    with pytest.raises(stablehlo_rewrite.NoOpRewrite,
                       match="mutant idle-mutant: .*stablehlo.all_reduce"):
        stablehlo_rewrite.apply(text, idle, "idle-mutant")


def test_a_rewrite_that_selects_nothing_leaves_the_program_alone(client):
    text = _collective(client, "all_reduce")[-1]
    mutation = CATALOG["hlo-logistic-as-tanh"].client.mutation
    assert stablehlo_rewrite.apply(text, mutation, "hlo-logistic-as-tanh") is None


def test_rewriter_rejects_bad_arguments():
    with pytest.raises(TypeError, match="'computation'"):
        stablehlo_rewrite.apply(None, CATALOG["broken-all-reduce"].client.mutation, "x")
    with pytest.raises(ValueError, match="'names'"):
        stablehlo_rewrite.named("all_reduce")
    with pytest.raises(ValueError, match="'outcome'"):
        rewrite_log.record("x", "p", "maybe")


def test_rewrite_log_calls_a_run_that_changed_nothing_a_no_op(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(rewrite_log.ENV, str(log))
    assert "changed none of the 0 programs" in rewrite_log.problem(log, "m")
    rewrite_log.record("m", "p1", rewrite_log.SKIPPED)
    assert rewrite_log.problem(log, "m").startswith("NoOpRewrite: mutant m:")
    rewrite_log.record("m", "p2", rewrite_log.CHANGED)
    assert rewrite_log.problem(log, "m") is None
    rewrite_log.record("m", "p3", rewrite_log.FAILED, "ValueError: x")
    assert rewrite_log.problem(log, "m").startswith("RewriteError: mutant m:")


def test_every_program_rewriting_mutant_is_checked_by_the_runner():
    rewriting = [n for n, m in CATALOG.items() if rewrites(m)]
    assert {"broken-all-reduce", "broken-aliasing", "coll-permute-nowhere",
            "hlo-add-to-subtract", "hlo-dynamic-pad-low-as-high"} <= set(rewriting)
    assert all(isinstance(CATALOG[n].client.mutation, stablehlo_rewrite.Mutation)
               for n in rewriting)


def test_a_no_op_mutant_run_is_an_error_not_a_kill_or_a_survivor():
    # logistic -> tanh over programs with no logistic: its rewrite selects nothing
    mutant = CATALOG["hlo-logistic-as-tanh"]
    outcome = runner.run(mutant.name, mutant.kind,
                         parse_targets("test_execute: test_elementwise and add-int32"),
                         2, rewrites=True)
    assert outcome.error and outcome.error.startswith(
        "NoOpRewrite: mutant hlo-logistic-as-tanh:"), outcome
    assert not outcome.killed and outcome.statuses, outcome
