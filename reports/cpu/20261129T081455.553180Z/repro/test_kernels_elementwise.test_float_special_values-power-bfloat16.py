#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_elementwise.py::test_float_special_values[power-bfloat16]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.8.0)
    needs:   numpy, ml_dtypes, jax==0.8.0

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
 "nodeid": "conformance/test_kernels_elementwise.py::test_float_special_values[power-bfloat16]",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_power attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<324xbf16>, %arg1: tensor<324xbf16>) -> (tensor<324xbf16> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.power %arg0, %arg1 : tensor<324xbf16>\n    return %0 : tensor<324xbf16>\n  }\n}\n",
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
  "base64": "gD+APwAAgH8AAAAAAACAfwAAgH8AAIB/AACAfwAAAACAf8B/gD+APwCAgP8AAAAAAICAfwAAgH8AAIB/AACAfwAAAACAf8B/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4A/gD+AP4C/gL/A/4A/gL/A/4A/gD/A/8D/wP/A/8D/gD+AP8B/gD+APwA/AEA1P4A+AD4YQwAAgH+AP4A/gD+AP/8+AACAf8B/gD+APwBAAD+1P4BAAEHXO4B/AACAP4A/gD+APwFAgH8AAMB/gD+AP0BAqz7ePxBB2EG2OYB/AACAP4A/gD+AP0JAgH8AAMB/gD+AP+jADb7A/1JCv8PA/4B/AADA/8D/wP/A/8D/gH8AAMB/gD+AP39/AAB/X4B/gH8AAIB/AACAP4A/gD+AP4B/gH8AAMB/gD+AP3//AIDA/4B/gP/A/4B/AADA/8D/wP/A/8D/gH8AAMB/gD+AP4AAgH4AIAAAAACAfwAAgH+AP4A/gD+APwAAAACAf8B/gD+AP4CAgP7A/wAAAIDA/wAAgH/A/8D/wP/A/8D/AACAf8B/gD+APwEAgH81HgAAAACAfwAAgH+AP4A/gD+APwAAAACAf8B/gD+APwGAgP/A/wAAAIDA/wAAgH/A/8D/wP/A/8D/AACAf8B/gD+AP4E/fj+AP4I/gz9yP4B/AACAP4A/gD+AP4E/gH8AAMB/gD+AP4B/AACAf4B/gH8AAIB/AACAfwAAgH8AAIB/gH8AAMB/gD+AP4D/AICAf4B/gP8AAIB/AACAfwAAgH8AAIB/gH8AAMB/gD+AP8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/wH/Af8B/"
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
