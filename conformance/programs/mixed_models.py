"""Mixed-precision model workloads: bfloat16 weights and activations, float32 accumulation.

As users train in bfloat16: the parameters, the data, the activations and the optimizer
state are bfloat16; every matmul takes bfloat16 operands and asks for a float32 result
(``preferred_element_type=float32``: the accumulator a bfloat16 matmul needs), to which
the bias is added in float32 before the activation is rounded to bfloat16 again; the loss
is reduced in float32. The gradients (``jax.value_and_grad``: bfloat16, the parameters'
dtype) and the update are what jax derives from that.

The same function, given float64 arguments, computes everything in float64 (the
accumulation type follows the operands: float32 for bfloat16, else their own), which is the
oracle's reference (:mod:`conformance.programs.model_oracle`).

- ``mlp_training_step_bf16``: :func:`conformance.programs.models.mlp_training_step`'s MLP
  (64 -> 128 -> 16, batch 32, tanh, MSE, SGD with momentum) in mixed precision.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from conformance.programs import models

HIGHEST = models.HIGHEST


@dataclasses.dataclass(frozen=True)
class MixedModel:
    """A :class:`conformance.programs.models.Model` with its precisions: ``low`` (the
    dtype of its parameters and activations) and ``accumulate`` (its matmuls' result
    type)."""

    model: models.Model
    low: str
    accumulate: str


def _mm(a, b):
    """``a @ b`` with a float32 result for bfloat16 operands (their own dtype otherwise)."""
    import jax.numpy as jnp
    from jax import lax
    acc = jnp.float32 if a.dtype == jnp.bfloat16 else a.dtype
    return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), precision=HIGHEST,
                           preferred_element_type=acc)


def _loss(w1, b1, w2, b2, x, y):
    import jax.numpy as jnp
    h = jnp.tanh(_mm(x, w1) + b1)            # float32 (bias promoted), then bfloat16
    out = _mm(h.astype(w1.dtype), w2) + b2
    return jnp.mean((out - y) ** 2)


def mlp_training_step(w1, b1, w2, b2, m1, m2, x, y):
    """One SGD-with-momentum step (lr 0.1, momentum 0.9) of the mixed-precision MLP: the
    float32 loss, the four bfloat16 gradients, the new momenta and weights (bfloat16)."""
    import jax
    loss, (g1, gb1, g2, gb2) = jax.value_and_grad(_loss, argnums=(0, 1, 2, 3))(
        w1, b1, w2, b2, x, y)
    m1n, m2n = 0.9 * m1 + g1, 0.9 * m2 + g2
    return loss, g1, gb1, g2, gb2, m1n, m2n, w1 - 0.1 * m1n, w2 - 0.1 * m2n


def _mlp_args(rng: np.random.Generator) -> list[np.ndarray]:
    return [a.astype(ml_dtypes.bfloat16) for a in models.MODELS["mlp_training_step"].args(rng)]


MIXED = {m.model.name: m for m in [
    MixedModel(models.Model("mlp_training_step_bf16", mlp_training_step, _mlp_args,
                            models.MODELS["mlp_training_step"].outputs, 128),
               "bfloat16", "float32"),
]}
