#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float32-argmin]
    status:  fail_wrong_result
    backend: gpu cuda 13000 (jaxlib 0.11.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin /opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so

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
 "nodeid": "conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float32-argmin]",
 "via": "capi",
 "library_path": "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
 "client_options": {},
 "platform": "gpu",
 "devices": 8,
 "program": "module @jit_argmin_0 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<16xf32>) -> (tensor<i64> {jax.result_info = \"result\"}) {\n    %0 = call @argmin(%arg0) : (tensor<16xf32>) -> tensor<i64>\n    return %0 : tensor<i64>\n  }\n  func.func private @argmin(%arg0: tensor<16xf32>) -> tensor<i64> {\n    %0 = stablehlo.iota dim = 0 : tensor<16xi64>\n    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>\n    %c = stablehlo.constant dense<0> : tensor<i64>\n    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<16xf32>, tensor<16xi64>, tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<i64>)\n     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {\n      %2 = stablehlo.compare LT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %4 = stablehlo.or %2, %3 : tensor<i1>\n      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n      %7 = stablehlo.and %5, %6 : tensor<i1>\n      %8 = stablehlo.or %4, %7 : tensor<i1>\n      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>\n      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>\n      stablehlo.return %9, %10 : tensor<f32>, tensor<i64>\n    }\n    return %1#1 : tensor<i64>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    16
   ],
   "base64": "AAAAAAAAwH8AAMB/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
  }
 ],
 "expected": {
  "dtype": "int32",
  "shape": [],
  "base64": "AQAAAA=="
 },
 "assertion": "assert_exact",
 "options": {}
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
