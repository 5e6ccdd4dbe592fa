#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float16-argmin]
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
 "nodeid": "conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float16-argmin]",
 "via": "capi",
 "library_path": "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
 "client_options": {},
 "platform": "gpu",
 "devices": 8,
 "program": "module @jit_argmin_0 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1025xf16>) -> (tensor<i64> {jax.result_info = \"result\"}) {\n    %0 = call @argmin(%arg0) : (tensor<1025xf16>) -> tensor<i64>\n    return %0 : tensor<i64>\n  }\n  func.func private @argmin(%arg0: tensor<1025xf16>) -> tensor<i64> {\n    %0 = stablehlo.iota dim = 0 : tensor<1025xi64>\n    %cst = stablehlo.constant dense<0x7C00> : tensor<f16>\n    %c = stablehlo.constant dense<0> : tensor<i64>\n    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<1025xf16>, tensor<1025xi64>, tensor<f16>, tensor<i64>) -> (tensor<f16>, tensor<i64>)\n     reducer(%arg1: tensor<f16>, %arg3: tensor<f16>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {\n      %2 = stablehlo.compare LT, %arg1, %arg3, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %4 = stablehlo.or %2, %3 : tensor<i1>\n      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n      %7 = stablehlo.and %5, %6 : tensor<i1>\n      %8 = stablehlo.or %4, %7 : tensor<i1>\n      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f16>\n      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>\n      stablehlo.return %9, %10 : tensor<f16>, tensor<i64>\n    }\n    return %1#1 : tensor<i64>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float16",
   "shape": [
    1025
   ],
   "base64": "ADwAAAAAALwAvAC8ALwAvAC8ADwAAAA8AAAAAAA8ADwAAAAAAAAAPAC8ADwAPAC8AAAAPAAAALwAPAA8ADwAvAC8AH4AfgAAALwAvAAAAAAAAAC8ALwAvAC8ADwAAAAAALwAAAA8AAAAAAA8ADwAPAAAADwAPAAAADwAPAA8AAAAPAC8AAAAPAA8AAAAAAC8AAAAAAA8ADwAvAA8AAAAAAA8AAAAvAC8ADwAAAAAAAAAPAAAALwAPAC8ALwAPAAAALwAvAAAADwAAAA8ALwAvAA8ADwAvAC8ADwAAAAAALwAPAAAADwAPAA8ALwAPAC8AAAAAAA8ALwAPAC8AAAAAAA8ALwAPAA8ADwAvAA8ADwAvAAAAAAAvAAAAAAAPAA8AAAAAAAAADwAvAAAALwAAAA8AAAAAAA8AAAAPAC8AAAAPAA8AAAAAAAAAAAAvAA8ALwAAAC8ADwAPAA8ADwAPAC8ALwAvAA8ADwAPAA8ADwAPAC8ALwAPAC8ADwAPAA8AAAAvAAAADwAAAA8AAAAPAC8AAAAvAC8ADwAPAC8ADwAPAC8AAAAAAAAAAAAvAA8ADwAvAA8ADwAvAAAAAAAvAA8ADwAvAC8ALwAPAC8AAAAPAA8ALwAvAAAADwAAAC8AAAAAAC8AAAAPAA8ALwAAAA8ALwAvAC8ALwAPAC8ALwAvAC8ADwAvAA8AAAAPAAAADwAPAC8AAAAAAC8AAAAAAAAADwAPAAAADwAPAAAAAAAvAAAALwAAAC8ADwAPAC8ADwAAAC8ADwAPAC8AAAAPAA8AAAAPAA8ALwAvAC8AAAAvAC8ALwAAAAAALwAPAA8AAAAPAA8ALwAvAA8AAAAvAAAAAAAAAAAALwAAAAAADwAPAA8ALwAvAA8ALwAAAA8AAAAPAC8AAAAAAAAAAAAPAA8ALwAvAC8ALwAPAC8ADwAvAA8AAAAPAAAADwAPAA8AAAAPAA8ALwAAAC8ALwAPAC8ADwAPAC8ADwAAAA8ADwAAAAAADwAAAA8ALwAPAAAADwAAAC8ALwAAAA8ALwAAAAAALwAAAA8ADwAPAAAAAAAPAC8ADwAvAAAADwAAAC8AAAAAAA8AAAAPAA8ALwAvAAAAAAAAAA8ALwAvAA8AAAAPAC8ADwAPAC8ALwAvAAAADwAPAC8AAAAAAA8ALwAPAA8ADwAvAC8AAAAvAC8ALwAvAA8ADwAAAA8AAAAvAC8ALwAPAAAALwAvAA8ALwAAAA8AAAAPAA8ALwAvAC8AAAAvAC8ADwAPAA8AAAAAAA8AAAAvAC8ADwAvAA8AAAAAAA8ADwAAAAAADwAAAAAADwAPAC8AAAAPAC8AAAAAAC8ADwAPAAAADwAvAAAALwAAAC8ADwAPAC8ADwAPAC8ADwAPAA8ADwAvAAAADwAPAC8AAAAAAA8AAAAAAAAAAAAvAA8AAAAvAC8AAAAPAC8ADwAvAC8AAAAPAC8ADwAvAA8ALwAPAC8AAAAvAA8AAAAPAAAAAAAAAA8AAAAPAC8AAAAvAA8ALwAPAA8ALwAvAA8AAAAAAA8ALwAvAAAADwAvAAAAAAAvAAAAAAAAAC8AAAAPAC8ALwAPAC8ADwAAAA8AAAAPAAAAAAAAAC8ALwAPAAAAAAAvAA8ADwAAAC8ADwAAAA8ALwAAAA8ALwAvAAAADwAPAA8AAAAAAAAADwAvAC8ADwAvAC8ADwAvAA8ADwAvAAAALwAAAAAADwAPAC8ALwAPAC8ALwAAAC8ADwAPAC8AAAAAAC8AAAAPAAAALwAvAAAAAAAvAAAALwAAAA8ALwAPAC8AAAAPAC8ADwAAAAAALwAvAA8AAAAPAA8AAAAPAAAALwAvAAAALwAvAAAAAAAAAAAADwAPAA8ALwAvAAAAAAAPAA8ADwAvAC8ALwAvAA8AAAAPAC8AAAAvAC8ADwAPAC8AAAAPAAAADwAvAC8ALwAAAC8ALwAAAAAALwAAAA8ADwAvAA8AAAAAAAAADwAvAAAADwAAAAAALwAPAC8ALwAvAAAAAAAAAA8AAAAPAC8ALwAvAAAADwAvAC8AAAAPAC8ADwAPAAAALwAAAA8ADwAvAA8AAAAPAA8ADwAPAA8AAAAPAAAADwAvAC8AAAAPAA8ALwAPAAAADwAAAA8ALwAAAA8ADwAvAC8ALwAPAC8AAAAPAA8ALwAAAA8AAAAvAA8AAAAPAA8AAAAPAA8ADwAAAAAADwAPAAAADwAvAA8ALwAPAAAAAAAvAAAALwAAAA8ALwAvAA8ALwAvAC8AAAAAAAAALwAPAC8ADwAPAC8ALwAAAC8AAAAAAAAADwAPAC8AAAAPAA8ADwAAAAAAAAAAAC8AAAAvAAAADwAPAA8ALwAvAAAADwAvAA8ALwAAAC8ADwAPAAAADwAAAA8ALwAvAC8AAAAPAA8ADwAvAA8ALwAAAAAAAAAAAAAALwAPAA8AAAAAAC8AAAAPAA8ADwAvAC8ADwAvAC8AAAAvAA8ALwAAAAAALwAAAC8ADwAAAC8ADwAPAC8AAAAvAAAAAAAvAC8AAAAvAA8ADwAPAA8ADwAAAAAALwAvAC8ADwAAAA8AAAAAAAAADwAAAAAAAAAPAA8AAAAAAC8AAAAvAAAALwAAAAAAAAAAAC8ALwAAAA8AAAAAAAAADwAAAAAAAAAAAA8ALwAAAC8ADwAAAC8ALwAPAAAADwAvAC8AAAAvAAAAAAAvAC8ADwAPAAAADwAAAA8ALwAAAC8AAAAPA=="
  }
 ],
 "expected": {
  "dtype": "int32",
  "shape": [],
  "base64": "IQAAAA=="
 },
 "assertion": "assert_exact",
 "options": {}
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
