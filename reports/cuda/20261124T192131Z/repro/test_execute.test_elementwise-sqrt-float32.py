#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_execute.py::test_elementwise[sqrt-float32]
    status:  fail_wrong_result
    backend: gpu cuda 13000 (jaxlib 0.11.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin /opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so

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
 "nodeid": "conformance/test_execute.py::test_elementwise[sqrt-float32]",
 "via": "capi",
 "library_path": "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
 "client_options": {},
 "platform": "gpu",
 "devices": 8,
 "program": "module @jit_sqrt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.sqrt %arg0 : tensor<f32>\n    return %0 : tensor<f32>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [],
   "base64": "AACYQw=="
  }
 ],
 "expected": {
  "dtype": "float32",
  "shape": [],
  "base64": "GnyLQQ=="
 },
 "assertion": "assert_allclose",
 "options": {
  "rtol": 0.0,
  "atol": 1.1754943508222875e-38
 }
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pjrt_repro  # beside this file

    sys.exit(pjrt_repro.run(DATA))
