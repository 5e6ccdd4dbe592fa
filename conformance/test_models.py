"""Area models: training steps, attention, a conv net and a scan, as users run them.

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable.execute_sharded``). Each model of
:mod:`conformance.programs.models` (an MLP training step with an optimizer update, a
transformer block forward and backward at seq 128 and width 256, a conv + batch norm
+ relu + pooling block, an RNN through ``lax.scan``) is one float32 program, run on
every device at once; a data-parallel MLP training step runs with its batch sharded
over a mesh of all devices, so its gradients need the partitioner's all-reduce. The MLP
step also runs in mixed precision (:mod:`conformance.programs.mixed_models`: bfloat16
weights and activations, float32 accumulation), tier ``capability:bf16``.
Parameters and data come from a drawn seed (no downloads).

Oracle (:mod:`conformance.programs.model_oracle`, docs/programs.md): the float64
evaluation of the same model; every output within ``ceil(sqrt(n))`` times XLA:CPU's
own float32 error on the same inputs plus ``n * eps * max|ref|``, ``n`` the model's
longest reduction.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import strategies
from conformance.helpers.reproduction import placement, reproduction
from conformance.programs import compiled_programs
from conformance.programs import mixed_models
from conformance.programs import model_oracle, models
from conformance.programs import sharded_programs

#: Examples per model: each one compiles nothing new but runs a whole model three times
#: (device, float64 and float32 references). 2 under ``ci`` (8 examples a test), 10 under
#: ``dev`` (25), 50 under ``nightly`` (500): the models are the suite's only tests of
#: some fusion patterns, so a random-seed run draws them more often.
EXAMPLES = 50 if settings.default.max_examples >= 500 else \
    10 if settings.default.max_examples >= 25 else 2


@pytest.mark.parametrize("name", list(models.MODELS))
@settings(max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_model(program_cache, name, seed):
    """The model on every device, against its float64 evaluation."""
    model = models.MODELS[name]
    make, reduction = model.nightly if model.nightly and \
        strategies.profile_name() == "nightly" else (model.args, model.reduction)
    _run_and_check(program_cache, name, model, make(np.random.default_rng(seed)), seed,
                   reduction, "float32", None)


@capabilities.requires("bf16")
@pytest.mark.parametrize("name", list(mixed_models.MIXED))
@settings(max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1))
def test_mixed_precision_model(program_cache, name, seed):
    """The model in mixed precision (bfloat16 weights and activations, float32 matmul
    accumulation) on every device, against its float64 evaluation: XLA:CPU's own error
    at the same precisions as scale, the floor plus one bfloat16 rounding."""
    mixed = mixed_models.MIXED[name]
    model = mixed.model
    _run_and_check(program_cache, name, model, model.args(np.random.default_rng(seed)), seed,
                   model.reduction, mixed.low, mixed.low)


def _run_and_check(program_cache, name: str, model, args: list, seed: int, reduction,
                   dtype: str, low: str | None) -> None:
    """Run ``model`` on ``args`` on every device (``dtype``: the dtype whose capability
    gates it) and hold every output to its float64 evaluation
    (:func:`conformance.programs.model_oracle.check`; ``low``: a mixed-precision model's
    low dtype, None for a float32 model)."""
    call = f"execute({name}, seed {seed})"
    outs, text = compiled_programs.run_everywhere(program_cache, f"model_{name}", model.fn, args,
                                                  dtype_helpers.BY_NAME[dtype], call,
                                                  n_outputs=len(model.outputs))
    ref, cpu = model_oracle.reference_outputs(f"model_{name}", model.fn, args)
    with reproduction(call, program=text, inputs=args):
        for d in range(len(outs[0])):
            device = outs[0][d][0]
            model_oracle.check([o[d][1] for o in outs], ref, cpu, model.outputs,
                               reduction, f"{call} on {device}", low)


@pytest.fixture(scope="session")
def runner(client, xc, program_cache):
    return sharded_programs.ShardedRunner(client, xc, program_cache)


@settings(max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_data_parallel_training_step(client, runner, seed, data):
    """The MLP training step with its batch sharded over every device (parameters
    replicated, results replicated): the batch sums of the gradients cross devices."""
    devices = client.local_devices()
    order = data.draw(st.permutations(range(len(devices))), label="device order")
    mesh = Mesh(np.array([devices[i] for i in order]), ("batch",))
    args = models.data_parallel_args(np.random.default_rng(seed), len(devices))
    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    shardings = [replicated] * 6 + [batch, batch]
    names = models.MODELS["mlp_training_step"].outputs
    ref, cpu = model_oracle.reference_outputs(f"data_parallel_{len(devices)}",
                                              models.data_parallel_step, args)
    call = f"execute_sharded(data-parallel MLP step, batch {args[6].shape[0]} over " \
           f"{len(devices)} devices, seed {seed})"
    results, text = runner.run_outputs(f"data_parallel_{len(devices)}",
                                       models.data_parallel_step, args, shardings, replicated,
                                       [np.shape(r) for r in ref])
    with reproduction(call, program=text, inputs=args,
                      sharding=placement(shardings, replicated)):
        for (_, problem) in results:
            assert not problem, f"{problem} [{call}]"
        model_oracle.check([r for r, _ in results], ref, cpu, names,
                           max(models.MODELS["mlp_training_step"].reduction,
                               args[6].shape[0]), call)
