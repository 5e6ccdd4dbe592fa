#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_stablehlo_ops.py::test_op[batch_norm_training-last-feature-float16]
    status:  fail_wrong_result
    backend: cpu PJRT C API
cpu (jaxlib 0.10.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin /work/main/.venv/lib/python3.11/site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so

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
 "nodeid": "conformance/test_stablehlo_ops.py::test_op[batch_norm_training-last-feature-float16]",
 "via": "capi",
 "library_path": "/work/main/.venv/lib/python3.11/site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
 "client_options": {
  "cpu_device_count": 8
 },
 "platform": "cpu",
 "devices": 8,
 "program": "module @stablehlo_ops {\n  func.func public @main(%arg0: tensor<2x5x4xf16>, %arg1: tensor<4xf16>, %arg2: tensor<4xf16>) -> (tensor<2x5x4xf16>, tensor<4xf16>, tensor<4xf16>) {\n    %0:3 = \"stablehlo.batch_norm_training\"(%arg0, %arg1, %arg2) {epsilon = 0.001 : f32, feature_index = 2 : i64} : (tensor<2x5x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x5x4xf16>, tensor<4xf16>, tensor<4xf16>)\n    return %0#0, %0#1, %0#2 : tensor<2x5x4xf16>, tensor<4xf16>, tensor<4xf16>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float16",
   "shape": [
    2,
    5,
    4
   ],
   "base64": "wEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEHAQcBBwEE="
  },
  {
   "dtype": "float16",
   "shape": [
    4
   ],
   "base64": "AAAAAAAAAAA="
  },
  {
   "dtype": "float16",
   "shape": [
    4
   ],
   "base64": "AAAAAAAAAAA="
  }
 ],
 "expected": {
  "dtype": "float16",
  "shape": [
   2,
   5,
   4
  ],
  "base64": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
 },
 "assertion": "assert_allclose",
 "options": {
  "rtol": 0.128,
  "atol": 0.128
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
