#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_programs_spmd.py::test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start
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
 "nodeid": "conformance/test_programs_spmd.py::test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @jit_sharded_dus_clamped_start attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  sdy.mesh @mesh = <[\"d\"=8]>\n  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"d\"}]>}, %arg1: tensor<1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8xf32> {jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<1xf32>\n    %0 = stablehlo.slice %arg1 [0:1] : (tensor<1xi32>) -> tensor<1xi32>\n    %1 = stablehlo.reshape %0 : (tensor<1xi32>) -> tensor<i32>\n    %c = stablehlo.constant dense<0> : tensor<i32>\n    %2 = stablehlo.compare  LT, %1, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n    %c_0 = stablehlo.constant dense<8> : tensor<i32>\n    %3 = stablehlo.add %1, %c_0 : tensor<i32>\n    %4 = stablehlo.select %2, %3, %1 : tensor<i1>, tensor<i32>\n    %5 = stablehlo.dynamic_update_slice %arg0, %cst, %4 : (tensor<8xf32>, tensor<1xf32>, tensor<i32>) -> tensor<8xf32>\n    return %5 : tensor<8xf32>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    8
   ],
   "base64": "AAAAAAAAgD8AAABAAABAQAAAgEAAAKBAAADAQAAA4EA="
  },
  {
   "dtype": "int32",
   "shape": [
    1
   ],
   "base64": "CAAAAA=="
  }
 ],
 "expected": {
  "dtype": "float32",
  "shape": [
   8
  ],
  "base64": "AAAAAAAAgD8AAABAAABAQAAAgEAAAKBAAADAQAAAgL8="
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
