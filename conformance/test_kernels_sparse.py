"""Area kernels_sparse: CSR sparse x dense products (cpu_sparse on CPU, cuSPARSE on CUDA).

The kernel registrations ``cpu_sparse``/``gpu_sparse``.
``jax.experimental.sparse.bcsr_dot_general`` lowers to the platform's sparse kernel
(``cpu_csr_sparse_dense_ffi`` on CPU); the result is compared with
``scipy.sparse.csr_array @ dense`` within the dot-product error bound. The sparsity pattern
(a fixed number of nonzeros, so one signature) and values are drawn by Hypothesis, with
empty rows and columns allowed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy  # scipy.sparse loads on first use (scipy's lazy submodules): collection stays cheap
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers
from conformance.helpers import tolerances
from conformance.programs import compiled_programs
from conformance.helpers import strategies
from conformance.helpers.reproduction import reproduction

ROWS, COLS, NNZ = 6, 5, 8


def _csr_times_dense(shape, rhs_ndim):
    def product(data, indices, indptr, rhs):
        from jax.experimental import sparse

        mat = sparse.BCSR((data, indices, indptr), shape=shape)
        return sparse.bcsr_dot_general(mat, rhs, dimension_numbers=(([1], [0]), ([], [])))
    return product


@pytest.mark.parametrize("rhs_ndim", [1, 2], ids=["matvec", "matmat"])
@pytest.mark.parametrize("dt", [capabilities.param(dtype_helpers.BY_NAME[n])
                                for n in ("float32", "float64", "complex64")])
@given(data=st.data())
def test_csr_times_dense_matches_scipy(program_cache, float_controls, dt, rhs_ndim, data):
    flat = data.draw(st.lists(st.integers(0, ROWS * COLS - 1), min_size=NNZ, max_size=NNZ,
                              unique=True), label="nonzero positions")
    values = data.draw(strategies.finite_arrays(dt, (NNZ,), min_value=-4, max_value=4),
                       label="values")
    rows, cols = np.divmod(np.array(flat), COLS)
    csr = scipy.sparse.csr_array((values, (rows, cols)), shape=(ROWS, COLS))
    csr.sort_indices()
    rhs_shape = (COLS,) if rhs_ndim == 1 else (COLS, 3)
    rhs = data.draw(strategies.finite_arrays(dt, rhs_shape, min_value=-4, max_value=4), label="rhs")
    args = [csr.data.astype(dt.dtype), csr.indices.astype(np.int32),
            csr.indptr.astype(np.int32), rhs]
    call = f"execute(bcsr_dot_general, {dt.name} CSR[{ROWS}, {COLS}] nnz={NNZ} x {list(rhs_shape)})"
    outs, program = compiled_programs.run_everywhere(
        program_cache, f"csr_dot_{rhs_ndim}", _csr_times_dense((ROWS, COLS), rhs_ndim), args, dt,
        call)
    wide = np.complex128 if dt.kind == "complex" else np.float64
    expected = csr.astype(wide) @ rhs.astype(wide)
    mag = abs(csr.astype(wide)) @ np.abs(rhs.astype(wide))
    bound = tolerances.bound("rounding", dt.dtype, magnitude=mag, roundings=COLS + 1,
                             controls=float_controls, name="(k+1)*(eps*(|A|@|B|) + tiny)")
    with reproduction(call, program=program, inputs=args):
        for device, out in outs:
            assertions.assert_within_bound(out, expected.astype(dt.dtype), bound,
                                           call=f"{call} on {device}")
