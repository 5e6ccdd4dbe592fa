#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_programs_spmd.py::test_sharded_slice_and_gather_keep_bits[gather_within_a_shard]
    status:  fail_wrong_result
    backend: cpu PJRT C API cpu (jaxlib 0.10.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin library libpjrt_cpu.so of the Python package fastatomstruct_xla_cpu (pip install fastatomstruct-xla-cpu) (8 partitions over devices [0, 1, 2, 3, 4, 5, 6, 7]: 8 cpu devices)

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
 "nodeid": "conformance/test_programs_spmd.py::test_sharded_slice_and_gather_keep_bits[gather_within_a_shard]",
 "via": "capi",
 "library": {
  "package": "fastatomstruct_xla_cpu",
  "file": "libpjrt_cpu.so",
  "distribution": "fastatomstruct-xla-cpu",
  "sha256": "0a0fe56ca17be9efc7b942e89e534e5e0ad4a0f1e369b66d27b62184509015b9"
 },
 "client_options": {
  "cpu_device_count": 8
 },
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
    "d",
    null
   ]
  ],
  "out_spec": []
 },
 "program": "module @jit_sharded_move_gather_within_a_shard attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  sdy.mesh @mesh = <[\"d\"=8]> {stablehlo.mesh = {axes = [{name = \"d\", size = 8 : i64}]}}\n  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"d\"}, {}]>}) -> (tensor<1x4xf32> {jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {\n    %c = stablehlo.constant dense<0> : tensor<1xi32>\n    %0 = call @_take(%arg0, %c) : (tensor<8x4xf32>, tensor<1xi32>) -> tensor<1x4xf32>\n    return %0 : tensor<1x4xf32>\n  }\n  func.func private @_take(%arg0: tensor<8x4xf32>, %arg1: tensor<1xi32>) -> tensor<1x4xf32> {\n    %c = stablehlo.constant dense<0> : tensor<i32>\n    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>\n    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>\n    %c_0 = stablehlo.constant dense<8> : tensor<i32>\n    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>\n    %3 = stablehlo.add %arg1, %2 : tensor<1xi32>\n    %4 = call @_where(%1, %3, %arg1) : (tensor<1xi1>, tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>\n    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<1xi32>) -> tensor<1x1xi32>\n    %c_1 = stablehlo.constant dense<7> : tensor<1xi32>\n    %c_2 = stablehlo.constant dense<0> : tensor<i32>\n    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x1xi32>\n    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>\n    %8 = stablehlo.broadcast_in_dim %c_1, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>\n    %9 = stablehlo.compare LE, %5, %8, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>\n    %10 = stablehlo.and %7, %9 : tensor<1x1xi1>\n    %c_3 = stablehlo.constant dense<true> : tensor<i1>\n    %11 = stablehlo.reduce(%10 init: %c_3) applies stablehlo.and across dimensions = [1] : (tensor<1x1xi1>, tensor<i1>) -> tensor<1xi1>\n    %12 = \"stablehlo.gather\"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<1x1xi32>) -> tensor<1x4xf32>\n    %13 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<1xi1>) -> tensor<1x4xi1>\n    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4xf32>\n    %15 = stablehlo.select %13, %12, %14 : tensor<1x4xi1>, tensor<1x4xf32>\n    return %15 : tensor<1x4xf32>\n  }\n  func.func private @_where(%arg0: tensor<1xi1>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> tensor<1xi32> {\n    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<1xi1>, tensor<1xi32>\n    return %0 : tensor<1xi32>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    8,
    4
   ],
   "base64": "AAAAgAEAAIABAIB/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8="
  }
 ],
 "expected": {
  "dtype": "float32",
  "shape": [
   1,
   4
  ],
  "base64": "AAAAgAEAAIABAIB/AACAPw=="
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
