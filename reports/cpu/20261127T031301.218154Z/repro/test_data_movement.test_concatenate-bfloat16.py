#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_data_movement.py::test_concatenate[bfloat16]
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
 "nodeid": "conformance/test_data_movement.py::test_concatenate[bfloat16]",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @jit_data_movement_concatenate attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1x2xbf16>, %arg1: tensor<1x2xbf16>) -> (tensor<2x2xbf16> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<1x2xbf16>, tensor<1x2xbf16>) -> tensor<2x2xbf16>\n    return %0 : tensor<2x2xbf16>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "bfloat16",
   "shape": [
    1,
    2
   ],
   "base64": "f3///w=="
  },
  {
   "dtype": "bfloat16",
   "shape": [
    1,
    2
   ],
   "base64": "f3///w=="
  }
 ],
 "expected": {
  "dtype": "bfloat16",
  "shape": [
   2,
   2
  ],
  "base64": "f3///39///8="
 },
 "assertion": "assert_bitwise_equal",
 "options": {
  "nan_payloads": true
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
