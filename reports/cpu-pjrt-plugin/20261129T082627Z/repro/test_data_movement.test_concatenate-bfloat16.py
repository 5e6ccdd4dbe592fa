#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_data_movement.py::test_concatenate[bfloat16]
    status:  fail_wrong_result
    backend: cpu PJRT C API cpu (jaxlib 0.10.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin library libpjrt_cpu.so of the Python package fastatomstruct_xla_cpu (pip install fastatomstruct-xla-cpu)

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
 "nodeid": "conformance/test_data_movement.py::test_concatenate[bfloat16]",
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
 "sharding": null,
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
