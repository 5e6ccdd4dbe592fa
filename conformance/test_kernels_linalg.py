"""Area kernels_linalg: the platform's factorizations (LAPACK on CPU, cuSOLVER on CUDA).

Compiled and run through the xla_client API (``Client.compile_and_load``,
``LoadedExecutable``; the kernels are custom calls of the kernel registrations
``lapack``/``gpu_linalg``), every device at once. Each factorization is
checked the way LAPACK's own test suite checks it: a reconstruction residual
and an orthogonality residual, as the ratio ``||R||_1 / (n * ||A||_1 * eps)``
against LAPACK's threshold 30; and against ``scipy.linalg`` where the result
is unique (LU pivots, Cholesky factor, singular values, symmetric
eigenvalues). Inputs: random, batched, singular (LU) and ill-conditioned
(Hilbert matrices, Cholesky).

Schur and Hessenberg exist in jax only for the CPU; on another platform their
tests skip with the lowering error (informational tier).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy  # scipy.linalg loads on first use (scipy's lazy submodules): collection stays cheap
from hypothesis import given
from hypothesis import strategies as st
from jax import lax
from jax import numpy as jnp
from jax.scipy import linalg as jsl

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.helpers.reproduction import reproduction

DTYPES = [capabilities.param(dtype_helpers.BY_NAME[n]) for n in ("float32", "float64", "complex64")]
SHAPES = ((3, 3), (8, 8), (2, 5, 5))


def _residual(dt: dtype_helpers.DType) -> tolerances.Bound:
    """LAPACK's residual test of ``dt`` (its eps and threshold): ``tolerances.bound``."""
    return tolerances.bound("residual", dt.dtype)


def _norm1(a: np.ndarray) -> float:
    return float(np.max(np.abs(a).sum(axis=-2))) if a.size else 0.0


def _h(a: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(a, -1, -2))


def _matrix(data, dt: dtype_helpers.DType, shape: tuple[int, ...]) -> np.ndarray:
    """A generic matrix: uniform in [-1, 1) from a drawn seed. Arrays drawn element by
    element shrink to low-rank patterns (zeros, repeats) where pivots are not unique;
    the structured cases (singular, ill-conditioned) are built explicitly instead."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a = rng.uniform(-1, 1, shape)
    if dt.kind == "complex":
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(dt.dtype)


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _run(program_cache, name, fn, args, dt, call, n_outputs):
    try:
        return compiled_programs.run_everywhere(program_cache, name, fn, args, dt, call,
                                                n_outputs=n_outputs)
    except NotImplementedError as err:  # jax has no lowering of this op for the platform
        pytest.skip(f"{call}: jax cannot lower it for this platform: {err}")


def _draw_and_run(program_cache, data, dt, name, fn, n_outputs, *, shapes=None, make=None):
    """Draw a shape (from ``shapes``, default SHAPES) and a matrix (``make`` turns it into
    the operand, e.g. symmetric), run ``fn`` on every device: (a, shape, call, outs, program)."""
    shape = data.draw(st.sampled_from(shapes or SHAPES), label="shape")
    a = _matrix(data, dt, shape)
    a = make(a) if make is not None else a
    call = f"execute({name}, {dt.name}{list(shape)})"
    outs, program = _run(program_cache, name, fn, [a], dt, call, n_outputs)
    return a, shape, call, outs, program


# Programs as module-level functions: the program cache keys on the function object.
_svd = functools.partial(jnp.linalg.svd, full_matrices=False)
_eig = functools.partial(lax.linalg.eig, compute_left_eigenvectors=False)
_hessenberg = functools.partial(jsl.hessenberg, calc_q=True)
_SOLVERS = {lower: (lambda tri, rhs, lower=lower: lax.linalg.triangular_solve(
    tri, rhs, left_side=True, lower=lower)) for lower in (False, True)}


def _per_device(outs):
    """[(device, (out0, out1, ...))] from run_everywhere's per-output lists."""
    return [(pairs[0][0], tuple(o for _, o in pairs)) for pairs in zip(*outs)]


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_lu_with_partial_pivoting(program_cache, dt, data):
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    a = _matrix(data, dt, shape)
    if data.draw(st.booleans(), label="singular"):
        a[..., -1, :] = a[..., 0, :]  # two equal rows: singular, must still factor
    call = f"execute(lu, {dt.name}{list(shape)})"
    outs, program = _run(program_cache, "lu", lax.linalg.lu, [a], dt, call, 3)
    n = shape[-1]
    with reproduction(call, program=program, inputs=[a]):
        for device, (lu, pivots, perm) in _per_device(outs):
            where = f"{call} on {device}"
            w = _wide(lu)
            lower = np.tril(w, -1) + np.eye(n)
            upper = np.triu(w)
            permuted = np.take_along_axis(_wide(a), perm[..., :, None].astype(np.intp), axis=-2)
            assertions.assert_residual_ratio(permuted - lower @ upper, _norm1(_wide(a)), n=n,
                                             bound=_residual(dt), what="P A - L U", call=where)
            # LAPACK pivots complex matrices on |re| + |im|, so there |L| <= sqrt(2).
            limit = tolerances.bound("pivot", dt.dtype).threshold
            assert np.max(np.abs(lower), initial=0) <= limit, (
                f"max |L| = {np.max(np.abs(lower)):.4g} > {limit:.4g}: not partial pivoting "
                f"[{where}]")
            for index in np.ndindex(*shape[:-2]):
                if np.linalg.matrix_rank(_wide(a)[index]) == n:  # pivots unique when regular
                    _, piv = scipy.linalg.lu_factor(_wide(a)[index])
                    assertions.assert_exact(
                        pivots[index].astype(np.int32), piv.astype(np.int32),
                        call=f"{where} pivots vs scipy.linalg.lu_factor {index}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_qr(program_cache, dt, data):
    a, shape, call, outs, program = _draw_and_run(program_cache, data, dt, "qr", jnp.linalg.qr,
                                                  2, shapes=SHAPES + ((6, 4),))
    n = max(shape[-2:])
    with reproduction(call, program=program, inputs=[a]):
        for device, (q, r) in _per_device(outs):
            where = f"{call} on {device}"
            assertions.assert_residual_ratio(_wide(a) - _wide(q) @ _wide(r), _norm1(_wide(a)), n=n,
                                             bound=_residual(dt), what="A - Q R", call=where)
            assertions.assert_residual_ratio(
                _h(_wide(q)) @ _wide(q) - np.eye(q.shape[-1]), 1.0, n=n, bound=_residual(dt),
                what="Q^H Q - I", call=where)
            assertions.assert_exact(np.tril(r, -1), np.zeros_like(r),
                                    call=f"{where}: R upper triangular")


def _spd(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    return (a @ _h(a) + n * np.eye(n)).astype(a.dtype)


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_cholesky(program_cache, dt, data):
    a, shape, call, outs, program = _draw_and_run(program_cache, data, dt, "cholesky",
                                                  jnp.linalg.cholesky, 1, make=_spd)
    n = shape[-1]
    reference = np.stack([scipy.linalg.cholesky(_wide(a)[i], lower=True)
                          for i in np.ndindex(*shape[:-2])]).reshape(shape)
    with reproduction(call, program=program, inputs=[a]):
        for device, l in outs:
            where = f"{call} on {device}"
            assertions.assert_residual_ratio(
                _wide(a) - _wide(l) @ _h(_wide(l)), _norm1(_wide(a)), n=n, bound=_residual(dt),
                what="A - L L^H", call=where)
            assertions.assert_residual_ratio(_wide(l) - reference, _norm1(reference), n=n,
                                             bound=_residual(dt), what="L - scipy.linalg.cholesky",
                                             call=where, threshold=_residual(dt).threshold * n)


@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME["float64"])])
def test_cholesky_of_ill_conditioned_hilbert_matrix(program_cache, dt):
    """Hilbert(8): condition number 1.5e10, still positive definite in float64."""
    a = scipy.linalg.hilbert(8)
    call = "execute(cholesky, float64 Hilbert(8))"
    outs, program = _run(program_cache, "cholesky", jnp.linalg.cholesky, [a], dt, call, 1)
    with reproduction(call, program=program, inputs=[a]):
        for device, l in outs:
            assertions.assert_residual_ratio(a - l @ l.T, _norm1(a), n=8, bound=_residual(dt),
                                             what="A - L L^T", call=f"{call} on {device}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_svd(program_cache, float_controls, dt, data):
    a, shape, call, outs, program = _draw_and_run(program_cache, data, dt, "svd", _svd, 3,
                                                  shapes=SHAPES + ((6, 4),))
    n = max(shape[-2:])
    reference = np.stack([scipy.linalg.svdvals(_wide(a)[i])
                          for i in np.ndindex(*shape[:-2])]).reshape(shape[:-2] + (-1,))
    with reproduction(call, program=program, inputs=[a]):
        for device, (u, s, vh) in _per_device(outs):
            where = f"{call} on {device}"
            recon = (_wide(u) * s.astype(np.float64)[..., None, :]) @ _wide(vh)
            assertions.assert_residual_ratio(
                _wide(a) - recon, _norm1(_wide(a)), n=n, bound=_residual(dt), what="A - U S V^H",
                call=where)
            assertions.assert_residual_ratio(
                _h(_wide(u)) @ _wide(u) - np.eye(u.shape[-1]), 1.0, n=n, bound=_residual(dt),
                what="U^H U - I", call=where)
            assertions.assert_within_bound(s, reference.astype(s.dtype), tolerances.bound(
                "rounding", s.dtype, magnitude=reference[..., :1],
                roundings=_residual(dt).threshold * n, controls=float_controls,
                name="30*n*eps*sigma_max"), call=f"{where} vs svdvals")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_eigh(program_cache, float_controls, dt, data):
    a, shape, call, outs, program = _draw_and_run(
        program_cache, data, dt, "eigh", jnp.linalg.eigh, 2,
        make=lambda m: ((m + _h(m)) / 2).astype(dt.dtype))
    n = shape[-1]
    reference = np.stack([scipy.linalg.eigvalsh(_wide(a)[i]) for i in np.ndindex(*shape[:-2])]
                         ).reshape(shape[:-1])
    with reproduction(call, program=program, inputs=[a]):
        for device, (w, v) in _per_device(outs):
            where = f"{call} on {device}"
            vw = _wide(v)
            assertions.assert_residual_ratio(
                _wide(a) @ vw - vw * w.astype(np.float64)[..., None, :], _norm1(_wide(a)), n=n,
                bound=_residual(dt), what="A V - V diag(w)", call=where)
            assertions.assert_residual_ratio(_h(vw) @ vw - np.eye(n), 1.0, n=n, bound=_residual(dt),
                                             what="V^H V - I", call=where)
            assertions.assert_within_bound(w, reference.astype(w.dtype), tolerances.bound(
                "rounding", w.dtype, magnitude=_norm1(_wide(a)),
                roundings=_residual(dt).threshold * n, controls=float_controls,
                name="30*n*eps*||A||"), call=f"{where} vs eigvalsh")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_triangular_solve(program_cache, dt, data):
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    lower = data.draw(st.booleans(), label="lower")
    m = _matrix(data, dt, shape)
    n = shape[-1]
    t = ((np.tril(m) if lower else np.triu(m)) + 2 * np.eye(n)).astype(dt.dtype)
    b = _matrix(data, dt, shape[:-1] + (2,))
    solve = _SOLVERS[lower]
    call = f"execute(triangular_solve lower={lower}, {dt.name}{list(shape)})"
    outs, program = _run(program_cache, f"triangular_solve_{lower}", solve, [t, b], dt, call, 1)
    with reproduction(call, program=program, inputs=[t, b]):
        for device, x in outs:
            resid = _wide(t) @ _wide(x) - _wide(b)
            floor = _residual(dt).atol  # a flushed solution of tiny right-hand sides
            assertions.assert_residual_ratio(resid, _norm1(_wide(t)) * max(_norm1(_wide(x)), floor),
                                             n=n, bound=_residual(dt), what="T X - B",
                                             call=f"{call} on {device}")


@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_general_eigendecomposition(program_cache, dt, data):
    a, shape, call, outs, program = _draw_and_run(program_cache, data, dt, "eig", _eig, 2)
    n = shape[-1]
    with reproduction(call, program=program, inputs=[a]):
        for device, (w, vr) in _per_device(outs):
            v = vr.astype(np.complex128)
            assertions.assert_residual_ratio(
                _wide(a) @ v - v * w.astype(np.complex128)[..., None, :], _norm1(_wide(a)), n=n,
                bound=_residual(dt), what="A V - V diag(w)", call=f"{call} on {device}")


@pytest.mark.informational
@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_schur(program_cache, dt, data):
    shape = data.draw(st.sampled_from(((3, 3), (8, 8))), label="shape")
    a = _matrix(data, dt, shape)
    call = f"execute(schur, {dt.name}{list(shape)})"
    outs, program = _run(program_cache, "schur", lax.linalg.schur, [a], dt, call, 2)
    n = shape[-1]
    with reproduction(call, program=program, inputs=[a]):
        for device, (t, z) in _per_device(outs):
            where = f"{call} on {device}"
            zw = _wide(z)
            assertions.assert_residual_ratio(
                _wide(a) - zw @ _wide(t) @ _h(zw), _norm1(_wide(a)), n=n, bound=_residual(dt),
                what="A - Z T Z^H", call=where)
            assertions.assert_residual_ratio(_h(zw) @ zw - np.eye(n), 1.0, n=n, bound=_residual(dt),
                                             what="Z^H Z - I", call=where)
            below = np.tril(t, -2 if dt.kind != "complex" else -1)  # real: 2x2 blocks allowed
            assertions.assert_exact(below, np.zeros_like(below),
                                    call=f"{where}: T quasi-triangular")


@pytest.mark.informational
@pytest.mark.parametrize("dt", DTYPES)
@given(data=st.data())
def test_hessenberg(program_cache, dt, data):
    shape = data.draw(st.sampled_from(((3, 3), (8, 8))), label="shape")
    a = _matrix(data, dt, shape)
    call = f"execute(hessenberg, {dt.name}{list(shape)})"
    outs, program = _run(program_cache, "hessenberg", _hessenberg, [a], dt, call, 2)
    n = shape[-1]
    with reproduction(call, program=program, inputs=[a]):
        for device, (h, q) in _per_device(outs):
            where = f"{call} on {device}"
            qw = _wide(q)
            assertions.assert_residual_ratio(
                _wide(a) - qw @ _wide(h) @ _h(qw), _norm1(_wide(a)), n=n, bound=_residual(dt),
                what="A - Q H Q^H", call=where)
            assertions.assert_residual_ratio(_h(qw) @ qw - np.eye(n), 1.0, n=n, bound=_residual(dt),
                                             what="Q^H Q - I", call=where)
            assertions.assert_exact(np.tril(h, -2), np.zeros_like(h),
                                    call=f"{where}: H upper Hessenberg")


#: Sides past LAPACK's blocking: its block size nb is 32 or 64 (ILAENV for GETRF, GEQRF,
#: POTRF, GEHRD), and the blocked paths start at 2 * nb; 65 and 129 take a partial last block.
BLOCKED_SIDES = (65, 129)
BLOCKED = {"lu": (lax.linalg.lu, 3), "qr": (jnp.linalg.qr, 2),
           "cholesky": (jnp.linalg.cholesky, 1), "hessenberg": (_hessenberg, 2)}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.informational]
                                              if n == "hessenberg" else [])
                                  for n in BLOCKED])  # hessenberg: CPU only (see test_hessenberg)
@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n]) for n in ("float32",
                                                                                       "float64")])
@given(data=st.data())
def test_decompositions_past_lapack_block_sizes(program_cache, name, dt, data):
    """LU, QR, Cholesky and Hessenberg of 65x65 and 129x129 matrices (LAPACK's blocked
    code paths, with a partial last block): the reconstruction and orthogonality residual
    ratios of the small-size tests (LAPACK's threshold 30), L's pivoting bound and the
    triangular/Hessenberg structure."""
    n = data.draw(st.sampled_from(BLOCKED_SIDES), label="side")
    a = _matrix(data, dt, (n, n))
    if name == "cholesky":
        a = _spd(a)
    fn, n_outputs = BLOCKED[name]
    call = f"execute({name}, {dt.name}[{n}, {n}])"
    outs, program = _run(program_cache, name, fn, [a], dt, call, n_outputs)
    outs = outs if n_outputs > 1 else [outs]
    aw, res = _wide(a), _residual(dt)
    with reproduction(call, program=program, inputs=[a]):
        for device, results in _per_device(outs):
            where = f"{call} on {device}"
            w = [_wide(r) for r in results]
            if name == "lu":
                lower, upper = np.tril(w[0], -1) + np.eye(n), np.triu(w[0])
                permuted = aw[results[2].astype(np.intp)]
                assertions.assert_residual_ratio(permuted - lower @ upper, _norm1(aw), n=n,
                                                 bound=res, what="P A - L U", call=where)
                assert np.max(np.abs(lower)) <= tolerances.bound("pivot", dt.dtype).threshold, (
                    f"max |L| = {np.max(np.abs(lower)):.4g} > 1: not partial pivoting [{where}]")
                continue
            if name == "cholesky":
                assertions.assert_residual_ratio(aw - w[0] @ _h(w[0]), _norm1(aw), n=n, bound=res,
                                                 what="A - L L^H", call=where)
                assertions.assert_exact(np.triu(results[0], 1), np.zeros_like(results[0]),
                                        call=f"{where}: L lower triangular")
                continue
            q, r = (w[0], w[1]) if name == "qr" else (w[1], w[0])
            product = q @ r if name == "qr" else q @ r @ _h(q)
            assertions.assert_residual_ratio(aw - product, _norm1(aw), n=n, bound=res,
                                             what="A - Q R" if name == "qr" else "A - Q H Q^H",
                                             call=where)
            assertions.assert_residual_ratio(_h(q) @ q - np.eye(n), 1.0, n=n, bound=res,
                                             what="Q^H Q - I", call=where)
            below = np.tril(r, -1 if name == "qr" else -2)
            assertions.assert_exact(
                below, np.zeros_like(below),
                call=f"{where}: {'R upper triangular' if name == 'qr' else 'H upper Hessenberg'}")
