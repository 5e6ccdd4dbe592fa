#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_elementwise.py::test_float_special_values[cbrt-bfloat16]
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
 "nodeid": "conformance/test_kernels_elementwise.py::test_float_special_values[cbrt-bfloat16]",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_cbrt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<18xbf16>) -> (tensor<18xbf16> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.cbrt %arg0 : tensor<18xbf16>\n    return %0 : tensor<18xbf16>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "bfloat16",
   "shape": [
    18
   ],
   "base64": "AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/"
  }
 ],
 "expected": {
  "dtype": "bfloat16",
  "shape": [
   18
  ],
  "base64": "AAAAgIA/gL9LP6E/uT/4v8tUy9SAKoCqSylLqYA/gH+A/8B/"
 },
 "assertion": "assert_ulp_close",
 "options": {
  "max_ulp": 2,
  "atol": 0.0,
  "signed_zeros": false
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
