#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_elementwise.py::test_float_special_values[atan2-bfloat16]
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
 "nodeid": "conformance/test_kernels_elementwise.py::test_float_special_values[atan2-bfloat16]",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_atan2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<324xbf16>, %arg1: tensor<324xbf16>) -> (tensor<324xbf16> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.atan2 %arg0, %arg1 : tensor<324xbf16>\n    return %0 : tensor<324xbf16>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "bfloat16",
   "shape": [
    324
   ],
   "base64": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAgACAAIAAgACAAIAAgACAAIAAgACAAIAAgACAAIAAgACAgD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gL+Av4C/gL+Av4C/gL+Av4C/gL+Av4C/gL+Av4C/gL+Av4C/AD8APwA/AD8APwA/AD8APwA/AD8APwA/AD8APwA/AD8APwA/AEAAQABAAEAAQABAAEAAQABAAEAAQABAAEAAQABAAEAAQABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBA6MDowOjA6MDowOjA6MDowOjA6MDowOjA6MDowOjA6MDowOjAf39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f/9//3//f/9//3//f/9//3//f/9//3//f/9//3//f/9//3//gACAAIAAgACAAIAAgACAAIAAgACAAIAAgACAAIAAgACAAIAAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAAQABAAEAAQABAAEAAQABAAEAAQABAAEAAQABAAEAAQABAAEAAYABgAGAAYABgAGAAYABgAGAAYABgAGAAYABgAGAAYABgAGAgT+BP4E/gT+BP4E/gT+BP4E/gT+BP4E/gT+BP4E/gT+BP4E/gH+Af4B/gH+Af4B/gH+Af4B/gH+Af4B/gH+Af4B/gH+Af4B/gP+A/4D/gP+A/4D/gP+A/4D/gP+A/4D/gP+A/4D/gP+A/4D/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/"
  },
  {
   "dtype": "bfloat16",
   "shape": [
    324
   ],
   "base64": "AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/AAAAgIA/gL8APwBAQEDowH9/f/+AAICAAQABgIE/gH+A/8B/"
  }
 ],
 "expected": {
  "dtype": "bfloat16",
  "shape": [
   324
  ],
  "base64": "AABJQAAASUAAAAAAAABJQAAASUAAAElAAABJQAAAAABJQMB/AIBJwACAScAAgACAAIBJwACAScAAgEnAAIBJwACAAIBJwMB/yT/JP0k/F0COP+0+pT5AQAAASUDJP8k/yT/JP0g/AABJQMB/yb/Jv0m/F8COv+2+pb5AwACAScDJv8m/yb/Jv0i/AIBJwMB/yT/JP+0+K0BJP3s+KT5FQAAASUDJP8k/yT/JP+w+AABJQMB/yT/JP44/AkCqP0k/Fz84QAAASUDJP8k/yT/JP40/AABJQMB/yT/JP6A/8j+0P3w/ST8wQAAASUDJP8k/yT/JP6A/AABJQMB/yb/Jv7i/27/Av6e/l78XwOmAScDJv8m/yb/Jv7e/AIBJwMB/yT/JP8k/yT/JP8k/yT/JP0k/F0DJP8k/yT/JP8k/AABJQMB/yb/Jv8m/yb/Jv8m/yb/Jv0m/F8DJv8m/yb/Jv8m/AIBJwMB/yT/JP4AASUAAAQAAAABJQAAASUBJPxdAyD/KPwAAAABJQMB/yb/Jv4CAScAAgQCAAIBJwACAScBJvxfAyL/KvwCAAIBJwMB/yT/JPwEASUACAAAAAABJQAAASUAAAElAST8XQAEAAABJQMB/yb/JvwGAScACgACAAIBJwACAScAAgEnASb8XwAGAAIBJwMB/yT/JP0o/F0COP+8+pj5AQAAASUDJP8k/yT/JP0k/AABJQMB/yT/JP8k/yT/JP8k/yT/JP8k/yT/JP8k/yT/JP8k/ST8XQMB/yb/Jv8m/yb/Jv8m/yb/Jv8m/yb/Jv8m/yb/Jv8m/Sb8XwMB/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/"
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
