#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_programs.py::test_nested_dynamic_slice_clamps_each_start
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.10.2)
    needs:   numpy, ml_dtypes, jax==0.10.2

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
 "nodeid": "conformance/test_programs.py::test_nested_dynamic_slice_clamps_each_start",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_nested_dynamic_slice attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<2x1xf32> {jax.result_info = \"result\"}) {\n    %c = stablehlo.constant dense<0> : tensor<i32>\n    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n    %c_0 = stablehlo.constant dense<8> : tensor<i32>\n    %1 = stablehlo.add %arg1, %c_0 : tensor<i32>\n    %2 = stablehlo.select %0, %1, %arg1 : tensor<i1>, tensor<i32>\n    %c_1 = stablehlo.constant dense<0> : tensor<i32>\n    %3 = stablehlo.dynamic_slice %arg0, %2, %c_1, sizes = [3, 1] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<3x1xf32>\n    %c_2 = stablehlo.constant dense<0> : tensor<i32>\n    %4 = stablehlo.compare LT, %arg2, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n    %c_3 = stablehlo.constant dense<3> : tensor<i32>\n    %5 = stablehlo.add %arg2, %c_3 : tensor<i32>\n    %6 = stablehlo.select %4, %5, %arg2 : tensor<i1>, tensor<i32>\n    %c_4 = stablehlo.constant dense<0> : tensor<i32>\n    %7 = stablehlo.dynamic_slice %3, %6, %c_4, sizes = [2, 1] : (tensor<3x1xf32>, tensor<i32>, tensor<i32>) -> tensor<2x1xf32>\n    return %7 : tensor<2x1xf32>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    8,
    8
   ],
   "base64": "AAAAAAAAgD8AAABAAABAQAAAgEAAAKBAAADAQAAA4EAAAABBAAAQQQAAIEEAADBBAABAQQAAUEEAAGBBAABwQQAAgEEAAIhBAACQQQAAmEEAAKBBAACoQQAAsEEAALhBAADAQQAAyEEAANBBAADYQQAA4EEAAOhBAADwQQAA+EEAAABCAAAEQgAACEIAAAxCAAAQQgAAFEIAABhCAAAcQgAAIEIAACRCAAAoQgAALEIAADBCAAA0QgAAOEIAADxCAABAQgAAREIAAEhCAABMQgAAUEIAAFRCAABYQgAAXEIAAGBCAABkQgAAaEIAAGxCAABwQgAAdEIAAHhCAAB8Qg=="
  },
  {
   "dtype": "int32",
   "shape": [],
   "base64": "AAAAAA=="
  },
  {
   "dtype": "int32",
   "shape": [],
   "base64": "AgAAAA=="
  }
 ],
 "expected": {
  "dtype": "float32",
  "shape": [
   2,
   1
  ],
  "base64": "AAAAQQAAgEE="
 },
 "assertion": "assert_exact",
 "options": {},
 "output_index": null,
 "compiler_pass": {
  "pass": "algsimp",
  "reason": "the program passes with xla_disable_hlo_passes=algsimp, 8 passes tried"
 }
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
