#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_data_movement.py::test_pad[float8_e5m2]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.12.0.1)
    needs:   numpy, ml_dtypes, jax==0.12.0.1

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
 "nodeid": "conformance/test_data_movement.py::test_pad[float8_e5m2]",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_data_movement_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1x7xf8E5M2>, %arg1: tensor<f8E5M2>) -> (tensor<1x8xf8E5M2> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.pad %arg0, %arg1, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<1x7xf8E5M2>, tensor<f8E5M2>) -> tensor<1x8xf8E5M2>\n    return %0 : tensor<1x8xf8E5M2>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float8_e5m2",
   "shape": [
    1,
    7
   ],
   "base64": "S+PsZn5hqg=="
  },
  {
   "dtype": "float8_e5m2",
   "shape": [],
   "base64": "/A=="
  }
 ],
 "expected": {
  "dtype": "float8_e5m2",
  "shape": [
   1,
   8
  ],
  "base64": "S+PsZn5hqvw="
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
