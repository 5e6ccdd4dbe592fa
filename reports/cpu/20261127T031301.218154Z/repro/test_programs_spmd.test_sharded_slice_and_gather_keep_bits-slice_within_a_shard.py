#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_programs_spmd.py::test_sharded_slice_and_gather_keep_bits[slice_within_a_shard]
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
 "nodeid": "conformance/test_programs_spmd.py::test_sharded_slice_and_gather_keep_bits[slice_within_a_shard]",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @jit_sharded_move_slice_within_a_shard attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  sdy.mesh @mesh = <[\"d\"=8]>\n  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"d\"}, {}]>}) -> (tensor<1x4xf32> {jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {\n    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<8x4xf32>) -> tensor<1x4xf32>\n    return %0 : tensor<1x4xf32>\n  }\n}\n",
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
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
