#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_programs_spmd.py::test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.11.2)
    needs:   numpy, ml_dtypes, jax==0.11.2 (8 partitions over devices [0, 1, 2, 3, 4, 5, 6, 7]: 8 cpu devices)

Runs with no pytest and no import of the conformance suite, from any folder:
`python3 THIS_FILE [--plugin-library PATH]`, with pjrt_repro.py (the checks every
reproduction of the bundle shares) in the same folder. It embeds the drawn inputs, the
program (and for a partitioned program its mesh, PartitionSpecs and partition count:
it runs partitioned, over the same devices) and the expected value the test computed,
and prints expected vs observed (floats with their bits in hex). Where the suite named
the XLA compiler pass that breaks the program, it prints it, and `--disable-pass`
compiles without that pass (on jax's client, one device).

A C API plugin's library is found in this order: --plugin-library PATH, the
environment variable PJRT_CONFORMANCE_PLUGIN_LIBRARY, the plugin's installed Python
package (as `needs:` names it); one line says which was used.

Exit status (one line says why, never a traceback):
  0  fixed: the backend gives the correct result;
  1  present: the defect is still there;
  2  cannot run: no plugin library found, a module missing, too few devices, or an
     error raised while setting up, compiling or running (not the recorded defect).
A crash of the backend kills it by a signal (the shell shows 128 + the signal).
"""
import json
import os
import sys

DATA = json.loads(r'''{
 "check": "execute",
 "nodeid": "conformance/test_programs_spmd.py::test_dynamic_update_slice_of_a_sharded_dimension_clamps_its_start",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": {
  "mesh_shape": [
   8
  ],
  "axis_names": [
   "d"
  ],
  "device_ids": [
   0,
   1,
   2,
   3,
   4,
   5,
   6,
   7
  ],
  "partitions": 8,
  "in_specs": [
   [
    "d"
   ],
   []
  ],
  "out_spec": []
 },
 "program": "module @jit_sharded_dus_clamped_start attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  sdy.mesh @mesh = <[\"d\"=8]> {stablehlo.mesh = {axes = [{name = \"d\", size = 8 : i64}]}}\n  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"d\"}]>}, %arg1: tensor<1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8xf32> {jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<1xf32>\n    %0 = stablehlo.reshape %arg1 : (tensor<1xi32>) -> tensor<i32>\n    %c = stablehlo.constant dense<0> : tensor<i32>\n    %1 = stablehlo.compare LT, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n    %c_0 = stablehlo.constant dense<8> : tensor<i32>\n    %2 = stablehlo.add %0, %c_0 : tensor<i32>\n    %3 = stablehlo.select %1, %2, %0 : tensor<i1>, tensor<i32>\n    %4 = stablehlo.dynamic_update_slice %arg0, %cst, %3 : (tensor<8xf32>, tensor<1xf32>, tensor<i32>) -> tensor<8xf32>\n    return %4 : tensor<8xf32>\n  }\n}\n",
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
 },
 "output_index": null,
 "compiler_pass": null
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import pjrt_repro  # beside this file
    except ImportError as err:
        print(f"cannot run this reproduction: {err} (pjrt_repro.py belongs beside this "
              f"file)", file=sys.stderr)
        sys.exit(2)
    sys.exit(pjrt_repro.run(DATA))
