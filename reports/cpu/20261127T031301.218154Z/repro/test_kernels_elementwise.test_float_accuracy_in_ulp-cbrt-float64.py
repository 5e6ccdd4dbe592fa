#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_elementwise.py::test_float_accuracy_in_ulp[cbrt-float64]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.8.0)
    needs:   numpy, ml_dtypes, jax==0.8.0

Runs with no pytest and no import of the conformance suite: `python3 THIS_FILE`, with
pjrt_repro.py (the checks every reproduction of the bundle shares) in the same folder.
It embeds the drawn inputs, the program and the expected value the test computed,
prints expected vs observed, and exits 1 while the defect is present, 0 when the
backend is correct, 2 when a module it needs is missing; a crash of the backend
ends it non-zero too (killed by a signal).
"""
import json
import os
import sys

DATA = json.loads(r'''{
 "check": "execute",
 "nodeid": "conformance/test_kernels_elementwise.py::test_float_accuracy_in_ulp[cbrt-float64]",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @jit_cbrt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<64xf64>) -> (tensor<64xf64> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.cbrt %arg0 : tensor<64xf64>\n    return %0 : tensor<64xf64>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float64",
   "shape": [
    64
   ],
   "base64": "980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw/3zSJsbFrLD/fNImxsWssP980ibGxayw8="
  }
 ],
 "expected": {
  "dtype": "float64",
  "shape": [
   64
  ],
  "base64": "J3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8neC8+qyHjLyd4Lz6rIeMvJ3gvPqsh4y8="
 },
 "assertion": "assert_ulp_close",
 "options": {
  "max_ulp": 9,
  "atol": 2.2250738585072014e-308,
  "signed_zeros": false
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
