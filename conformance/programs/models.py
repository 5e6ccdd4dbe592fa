"""Model workloads written in jax: what users run, as one compiled program each.

Every model is a jax function of float arrays (parameters and data, drawn from a
seeded NumPy generator: no downloads) returning a tuple of results; the same function
is lowered at float32 for the device under test and at float64 for the reference.
Every matmul and convolution asks for ``Precision.HIGHEST`` (float32 arithmetic: a
backend may not trade it for TF32 or bf16 passes). :attr:`Model.reduction` is the
longest reduction (terms summed into one result) of the program, which sets the
oracle's factor (:mod:`conformance.programs.model_oracle`).

- ``mlp_training_step``: 2-layer MLP (64 -> 128 -> 16, batch 32, tanh), MSE loss, the
  gradients by ``jax.value_and_grad`` and an SGD-with-momentum update;
- ``transformer_block``: pre-layernorm block at seq 128, width 256 (4 heads of 64,
  causal softmax attention, GELU MLP 256 -> 512 -> 256, residuals), forward and the
  backward pass (``jax.vjp`` with a drawn cotangent) to the input and every weight;
  under the ``nightly`` profile at seq 512, width 512 (8 heads, MLP 1024);
- ``conv_block``: 3x3 convolution (NHWC 4x16x16x8 -> 16 channels), batch norm with batch
  statistics, ReLU, 2x2 max pooling, forward and gradients of a drawn linear loss;
- ``rnn_scan``: an Elman RNN (hidden 64, input 16, batch 8) over 32 steps with
  ``lax.scan``, the final state and the gradients of a drawn linear loss.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

HIGHEST = "highest"


@dataclasses.dataclass(frozen=True)
class Model:
    """A workload: ``fn(*args)`` returns a tuple of arrays named ``outputs``;
    ``args(rng)`` draws its float32 arguments; ``reduction``: its longest reduction."""

    name: str
    fn: Callable[..., Any]
    args: Callable[[np.random.Generator], list[np.ndarray]]
    outputs: tuple[str, ...]
    reduction: int
    #: (args, reduction) at the size the ``nightly`` profile runs, or None (the same size).
    nightly: tuple[Callable[[np.random.Generator], list[np.ndarray]], int] | None = None


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _mm(a, b):
    import jax.numpy as jnp
    return jnp.matmul(a, b, precision=HIGHEST)


# ---- MLP training step ------------------------------------------------------------------
def _mlp_loss(w1, b1, w2, b2, x, y):
    import jax.numpy as jnp
    h = jnp.tanh(_mm(x, w1) + b1)
    out = _mm(h, w2) + b2
    return jnp.mean((out - y) ** 2)


def mlp_training_step(w1, b1, w2, b2, m1, m2, x, y):
    """One SGD-with-momentum step (lr 0.1, momentum 0.9) of the MLP on (x, y): loss,
    the four gradients, the new momenta of w1/w2 and the new weights."""
    import jax
    loss, (g1, gb1, g2, gb2) = jax.value_and_grad(_mlp_loss, argnums=(0, 1, 2, 3))(
        w1, b1, w2, b2, x, y)
    m1n, m2n = 0.9 * m1 + g1, 0.9 * m2 + g2
    return loss, g1, gb1, g2, gb2, m1n, m2n, w1 - 0.1 * m1n, w2 - 0.1 * m2n


def _mlp_args(rng: np.random.Generator, batch: int = 32) -> list[np.ndarray]:
    return [_normal(rng, (64, 128), 64 ** -0.5), _normal(rng, (128,), 0.1),
            _normal(rng, (128, 16), 128 ** -0.5), _normal(rng, (16,), 0.1),
            _normal(rng, (64, 128), 0.01), _normal(rng, (128, 16), 0.01),
            _normal(rng, (batch, 64), 1.0), _normal(rng, (batch, 16), 1.0)]


# ---- transformer block --------------------------------------------------------------------
#: Sequence length, width, heads (of 64) and MLP width; the nightly profile runs the block
#: at seq 512 and width 512 (8 heads, MLP 1024): the sizes come from the arguments.
SEQ, WIDTH, HEADS, HIDDEN = 128, 256, 4, 512
NIGHTLY_SEQ, NIGHTLY_WIDTH = 512, 512


def _layernorm(x, g, b):
    import jax.numpy as jnp
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def _block(x, g1, b1, wqkv, wo, g2, b2, w1, w2):
    import jax
    import jax.numpy as jnp
    seq, width = x.shape
    n_heads = width // 64
    h = _layernorm(x, g1, b1)
    q, k, v = jnp.split(_mm(h, wqkv), 3, axis=-1)
    heads = lambda t: t.reshape(seq, n_heads, 64).transpose(1, 0, 2)  # noqa: E731
    q, k, v = heads(q), heads(k), heads(v)
    s = jnp.einsum("hqd,hkd->hqk", q, k, precision=HIGHEST) / float(np.sqrt(64))
    causal = np.tril(np.ones((seq, seq), bool))
    s = jnp.where(causal, s, -1e30)
    a = jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v, precision=HIGHEST)
    x = x + _mm(a.transpose(1, 0, 2).reshape(seq, width), wo)
    return x + _mm(jax.nn.gelu(_mm(_layernorm(x, g2, b2), w1), approximate=True), w2)


def transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, w2, cotangent):
    """The block's output and the gradients of ``sum(out * cotangent)`` with respect to
    the input and every weight (the backward pass)."""
    import jax
    out, vjp = jax.vjp(_block, x, g1, b1, wqkv, wo, g2, b2, w1, w2)
    return (out, *vjp(cotangent))


def _transformer_args(rng: np.random.Generator, seq: int = SEQ,
                      w: int = WIDTH) -> list[np.ndarray]:
    """The block's arguments at sequence ``seq`` and width ``w`` (MLP width 2w)."""
    hidden = 2 * w
    return [_normal(rng, (seq, w), 1.0), 1 + _normal(rng, (w,), 0.1), _normal(rng, (w,), 0.1),
            _normal(rng, (w, 3 * w), w ** -0.5), _normal(rng, (w, w), w ** -0.5),
            1 + _normal(rng, (w,), 0.1), _normal(rng, (w,), 0.1),
            _normal(rng, (w, hidden), w ** -0.5), _normal(rng, (hidden, w), hidden ** -0.5),
            _normal(rng, (seq, w), 1.0)]


def _transformer_nightly_args(rng: np.random.Generator) -> list[np.ndarray]:
    return _transformer_args(rng, NIGHTLY_SEQ, NIGHTLY_WIDTH)


# ---- conv block ---------------------------------------------------------------------------
def _conv(x, k, gamma, beta):
    import jax
    import jax.numpy as jnp
    from jax import lax
    y = lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 precision=HIGHEST)
    mu = jnp.mean(y, axis=(0, 1, 2))
    var = jnp.mean((y - mu) ** 2, axis=(0, 1, 2))
    y = jax.nn.relu((y - mu) / jnp.sqrt(var + 1e-5) * gamma + beta)
    return lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def conv_block(x, k, gamma, beta, cotangent):
    """conv -> batch norm (batch statistics) -> relu -> 2x2 max pool, and the gradients
    of ``sum(out * cotangent)`` to the input, kernel, scale and offset."""
    import jax
    out, vjp = jax.vjp(_conv, x, k, gamma, beta)
    return (out, *vjp(cotangent))


def _conv_args(rng: np.random.Generator) -> list[np.ndarray]:
    return [_normal(rng, (4, 16, 16, 8), 1.0), _normal(rng, (3, 3, 8, 16), 72 ** -0.5),
            1 + _normal(rng, (16,), 0.1), _normal(rng, (16,), 0.1),
            _normal(rng, (4, 8, 8, 16), 1.0)]


# ---- RNN through lax.scan -------------------------------------------------------------------
def _rnn(w, u, b, xs, h0):
    import jax.numpy as jnp
    from jax import lax

    def step(h, x):
        h = jnp.tanh(_mm(h, w) + _mm(x, u) + b)
        return h, h
    h, hs = lax.scan(step, h0, xs)
    return h, hs


def rnn_scan(w, u, b, xs, h0, cotangent):
    """The final state of a 32-step Elman RNN and the gradients of ``sum(hs * cotangent)``
    (every step's state) to the weights, the inputs and the initial state."""
    import jax
    import jax.numpy as jnp
    (h, hs), vjp = jax.vjp(_rnn, w, u, b, xs, h0)
    return (h, *vjp((jnp.zeros_like(h), cotangent)))


def _rnn_args(rng: np.random.Generator) -> list[np.ndarray]:
    return [_normal(rng, (64, 64), 0.9 * 64 ** -0.5), _normal(rng, (16, 64), 16 ** -0.5),
            _normal(rng, (64,), 0.1), _normal(rng, (32, 8, 16), 1.0), _normal(rng, (8, 64), 0.5),
            _normal(rng, (32, 8, 64), 1.0)]


MODELS = {m.name: m for m in [
    Model("mlp_training_step", mlp_training_step, _mlp_args,
          ("loss", "g_w1", "g_b1", "g_w2", "g_b2", "m_w1", "m_w2", "w1", "w2"), 128),
    Model("transformer_block", transformer_block, _transformer_args,
          ("out", "d_x", "d_g1", "d_b1", "d_wqkv", "d_wo", "d_g2", "d_b2", "d_w1", "d_w2"),
          HIDDEN, (_transformer_nightly_args, 2 * NIGHTLY_WIDTH)),
    Model("conv_block", conv_block, _conv_args,
          ("out", "d_x", "d_kernel", "d_gamma", "d_beta"), 4 * 16 * 16),
    Model("rnn_scan", rnn_scan, _rnn_args, ("h", "d_w", "d_u", "d_b", "d_xs", "d_h0"), 32 * 8),
]}


def data_parallel_step(w1, b1, w2, b2, m1, m2, x, y):
    """:func:`mlp_training_step` on a batch that the caller shards over the mesh: the
    gradient sums over the batch need the partitioner's cross-device all-reduce."""
    return mlp_training_step(w1, b1, w2, b2, m1, m2, x, y)


def data_parallel_args(rng: np.random.Generator, devices: int) -> list[np.ndarray]:
    """The MLP's arguments with a batch of 8 rows per device."""
    return _mlp_args(rng, batch=8 * devices)
