"""Area stablehlo_ops: spec ops generated from ``programs.stablehlo_catalog``, two oracles.

Every case of :data:`conformance.programs.stablehlo_catalog.CASES` runs in every dtype
it lists, on every device at once (one SPMD executable, replicated inputs). Each result
is checked against the case's NumPy/ml_dtypes/SciPy reference; the StableHLO reference
interpreter (:mod:`conformance.programs.interpreter`) evaluates the same module on the
same inputs and must agree with that reference, or the test raises
``OracleDisagreement`` (a suite defect, status ``fail_error``). A capability dtype the
platform declines cleanly at compile is ``not_supported``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.helpers import assertions as ph
from conformance.helpers import capabilities
from conformance.helpers import dtype_helpers as dh
from conformance.helpers.reproduction import reproduction
from conformance.programs import cache as programs
from conformance.programs import interpreter
from conformance.programs import stablehlo_catalog as catalog

PARAMS = [pytest.param(case, dh.BY_NAME[d], id=f"{case.id}-{d}",
                       marks=capabilities.param(dh.BY_NAME[d]).marks)
          for case in catalog.CASES for d in case.dtypes]


def comparison(case: catalog.OpCase, dt: dh.DType):
    """``compare(got, want, call)`` for ``case`` in ``dt``: bit for bit for ``EXACT`` cases
    and integer/bool dtypes, else within ``rtol_factor`` times the dtype's rtol (absolute
    part scaled by the largest reference magnitude)."""
    def compare(got: np.ndarray, want: np.ndarray, call: str) -> None:
        got, want = case.view(np.asarray(got)), case.view(np.asarray(want))
        if case.tolerance == catalog.EXACT or want.dtype.kind in "biu":
            ph.assert_bitwise_equal(got, want, call=call)
            return
        rtol = case.rtol_factor * dh.tolerance(dt)
        scale = float(np.max(np.abs(want.astype(np.complex128)), initial=1.0))
        ph.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, call=call)
    return compare


@pytest.mark.parametrize("case, dt", PARAMS)
@given(data=st.data())
def test_op(program_cache, case: catalog.OpCase, dt: dh.DType, data) -> None:
    args = case.inputs(data, dt)
    call = f"{case.op} ({case.variant}) in {dt.name}"
    results, text = programs.run_everywhere(
        program_cache, f"stablehlo_ops_{case.op}", case.program(args), args, dt, call,
        n_outputs=case.outputs)
    per_output = results if case.outputs > 1 else [results]
    expected = case.reference(args)
    compare = comparison(case, dt)
    with reproduction(call, program=text, inputs=args):
        interpreter.check_oracles(text, args, expected, compare, call=call)
        for i, (per_device, want) in enumerate(zip(per_output, expected)):
            for device, got in per_device:
                compare(got, want, f"{call}: result {i} on {device}")
