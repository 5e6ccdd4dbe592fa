#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_stablehlo_ops.py::test_op[dynamic_broadcast_in_dim-lead-2-bfloat16]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.12.0.1)
    needs:   numpy, ml_dtypes, jax==0.12.0.1

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
 "nodeid": "conformance/test_stablehlo_ops.py::test_op[dynamic_broadcast_in_dim-lead-2-bfloat16]",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @stablehlo_ops {\n  func.func public @main(%arg0: tensor<7xbf16>) -> (tensor<2x7xbf16>) {\n    %s = stablehlo.constant dense<[2, 7]> : tensor<2xi64>\n    %0 = stablehlo.dynamic_broadcast_in_dim %arg0, %s, dims = [1] : (tensor<7xbf16>, tensor<2xi64>) -> tensor<2x7xbf16>\n    return %0 : tensor<2x7xbf16>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "bfloat16",
   "shape": [
    7
   ],
   "base64": "AQABAAEAAQABAAEAAQA="
  }
 ],
 "expected": {
  "dtype": "bfloat16",
  "shape": [
   2,
   7
  ],
  "base64": "AQABAAEAAQABAAEAAQABAAEAAQABAAEAAQABAA=="
 },
 "assertion": "assert_bitwise_equal",
 "options": {
  "nan_payloads": false
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
