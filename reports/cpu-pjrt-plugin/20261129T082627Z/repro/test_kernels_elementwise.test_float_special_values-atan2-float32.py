#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_elementwise.py::test_float_special_values[atan2-float32]
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
 "nodeid": "conformance/test_kernels_elementwise.py::test_float_special_values[atan2-float32]",
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
 "program": "module @jit_atan2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<324xf32>, %arg1: tensor<324xf32>) -> (tensor<324xf32> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.atan2 %arg0, %arg1 : tensor<324xf32>\n    return %0 : tensor<324xf32>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    324
   ],
   "base64": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIA/AACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AAAAPwAAAD8AAAA/AAAAPwAAAD8AAAA/AAAAPwAAAD8AAAA/AAAAPwAAAD8AAAA/AAAAPwAAAD8AAAA/AAAAPwAAAD8AAAA/AAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAABAQAAAQEAAAEBAAABAQAAAQEAAAEBAAABAQAAAQEAAAEBAAABAQAAAQEAAAEBAAABAQAAAQEAAAEBAAABAQAAAQEAAAEBAAADowAAA6MAAAOjAAADowAAA6MAAAOjAAADowAAA6MAAAOjAAADowAAA6MAAAOjAAADowAAA6MAAAOjAAADowAAA6MAAAOjA//9/f///f3///39///9/f///f3///39///9/f///f3///39///9/f///f3///39///9/f///f3///39///9/f///f3///39///9/////f////3////9/////f////3////9/////f////3////9/////f////3////9/////f////3////9/////f////3//AACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAAAAAgAAAAIAAAACAgAAAgIAAAICAAACAgAAAgIAAAICAAACAgAAAgIAAAICAAACAgAAAgIAAAICAAACAgAAAgIAAAICAAACAgAAAgIAAAICAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAAgAEAAIABAACAAQAAgAEAAIABAACAAQAAgAEAAIABAACAAQAAgAEAAIABAACAAQAAgAEAAIABAACAAQAAgAEAAIABAACAAQCAPwEAgD8BAIA/AQCAPwEAgD8BAIA/AQCAPwEAgD8BAIA/AQCAPwEAgD8BAIA/AQCAPwEAgD8BAIA/AQCAPwEAgD8BAIA/AACAfwAAgH8AAIB/AACAfwAAgH8AAIB/AACAfwAAgH8AAIB/AACAfwAAgH8AAIB/AACAfwAAgH8AAIB/AACAfwAAgH8AAIB/AACA/wAAgP8AAID/AACA/wAAgP8AAID/AACA/wAAgP8AAID/AACA/wAAgP8AAID/AACA/wAAgP8AAID/AACA/wAAgP8AAID/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/"
  },
  {
   "dtype": "float32",
   "shape": [
    324
   ],
   "base64": "AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/AAAAAAAAAIAAAIA/AACAvwAAAD8AAABAAABAQAAA6MD//39///9//wAAgAAAAICAAQAAAAEAAIABAIA/AACAfwAAgP8AAMB/"
  }
 ],
 "expected": {
  "dtype": "float32",
  "shape": [
   324
  ],
  "base64": "AAAAANsPSUAAAAAA2w9JQAAAAAAAAAAAAAAAANsPSUAAAAAA2w9JQAAAAADbD0lAAAAAANsPSUAAAAAAAAAAANsPSUAAAMB/AAAAgNsPScAAAACA2w9JwAAAAIAAAACAAAAAgNsPScAAAACA2w9JwAAAAIDbD0nAAAAAgNsPScAAAACAAAAAgNsPScAAAMB/2w/JP9sPyT/bD0k/5MsWQA23jT84Y+0+fbykPilKQEAAAAAA2w9JQNsPyT/bD8k/2w/JP9sPyT/aD0k/AAAAANsPSUAAAMB/2w/Jv9sPyb/bD0m/5MsWwA23jb84Y+2+fbykvilKQMAAAACA2w9JwNsPyb/bD8m/2w/Jv9sPyb/aD0m/AAAAgNsPScAAAMB/2w/JP9sPyT84Y+0+dGMrQNsPST+w23o+vBwpPranREAAAAAA2w9JQNsPyT/bD8k/2w/JP9sPyT83Y+0+AAAAANsPSUAAAMB/2w/JP9sPyT8Nt40/VDQCQGW0qT/bD0k/V4cWP9DVN0AAAAAA2w9JQNsPyT/bD8k/2w/JP9sPyT8Mt40/AAAAANsPSUAAAMB/2w/JP9sPyT+74J8/+j7yP0Pssz9fmHs/2w9JP8HzL0AAAAAA2w9JQNsPyT/bD8k/2w/JP9sPyT+74J8/AAAAANsPSUAAAMB/2w/Jv9sPyb94hLe/PZvav5E/wL/Gm6a/p9eWv+TLFsABAOiA2w9JwNsPyb/bD8m/2w/Jv9sPyb94hLe/AAAAgNsPScAAAMB/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD0k/5MsWQNsPyT/bD8k/2w/JP9sPyT/bD8k/AAAAANsPSUAAAMB/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD0m/5MsWwNsPyb/bD8m/2w/Jv9sPyb/bD8m/AAAAgNsPScAAAMB/2w/JP9sPyT8AAIAA2w9JQAAAAAEAAAAAAAAAANsPSUAAAAAA2w9JQNsPST/kyxZA2g/JP9wPyT8AAAAAAAAAANsPSUAAAMB/2w/Jv9sPyb8AAICA2w9JwAAAAIEAAACAAAAAgNsPScAAAACA2w9JwNsPSb/kyxbA2g/Jv9wPyb8AAACAAAAAgNsPScAAAMB/2w/JP9sPyT8BAAAA2w9JQAIAAAAAAAAAAAAAANsPSUAAAAAA2w9JQAAAAADaD0lA2w9JP+TLFkABAAAAAAAAANsPSUAAAMB/2w/Jv9sPyb8BAACA2w9JwAIAAIAAAACAAAAAgNsPScAAAACA2w9JwAAAAIDaD0nA2w9Jv+TLFsABAACAAAAAgNsPScAAAMB/2w/JP9sPyT/cD0k/5MsWQA23jT86Y+0+frykPilKQEAAAAAA2w9JQNsPyT/bD8k/2w/JP9sPyT/bD0k/AAAAANsPSUAAAMB/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD8k/2w/JP9sPyT/bD8k/2w9JP+TLFkAAAMB/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD8m/2w/Jv9sPyb/bD8m/2w9Jv+TLFsAAAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/"
 },
 "assertion": "assert_ulp_close",
 "options": {
  "max_ulp": 4,
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
