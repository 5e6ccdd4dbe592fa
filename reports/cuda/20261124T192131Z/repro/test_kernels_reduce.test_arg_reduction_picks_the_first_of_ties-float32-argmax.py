#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float32-argmax]
    status:  fail_wrong_result
    backend: gpu cuda 13000 (jaxlib 0.11.2)
    needs:   numpy, ml_dtypes, pypjrt and the plugin /opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so

Runs with no pytest and no import of the conformance suite: `python3 THIS_FILE`.
It embeds the drawn inputs, the program and the expected value the test computed,
prints expected vs observed, and exits 1 while the defect is present, 0 when the
backend is correct, 2 when a module it needs is missing; a crash of the backend
ends it non-zero too (killed by a signal).
"""
import base64
import json
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as missing:  # not the defect: this machine lacks what the script needs
    print(f"cannot run this reproduction: {missing} (see needs: at the top of this file)",
          file=sys.stderr)
    sys.exit(2)

DATA = json.loads(r'''{
 "check": "execute",
 "nodeid": "conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float32-argmax]",
 "via": "capi",
 "library_path": "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
 "client_options": {},
 "platform": "gpu",
 "devices": 8,
 "program": "module @jit_argmax_0 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1025xf32>) -> (tensor<i64> {jax.result_info = \"result\"}) {\n    %0 = call @argmax(%arg0) : (tensor<1025xf32>) -> tensor<i64>\n    return %0 : tensor<i64>\n  }\n  func.func private @argmax(%arg0: tensor<1025xf32>) -> tensor<i64> {\n    %0 = stablehlo.iota dim = 0 : tensor<1025xi64>\n    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>\n    %c = stablehlo.constant dense<0> : tensor<i64>\n    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<1025xf32>, tensor<1025xi64>, tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<i64>)\n     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {\n      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %4 = stablehlo.or %2, %3 : tensor<i1>\n      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n      %7 = stablehlo.and %5, %6 : tensor<i1>\n      %8 = stablehlo.or %4, %7 : tensor<i1>\n      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>\n      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>\n      stablehlo.return %9, %10 : tensor<f32>, tensor<i64>\n    }\n    return %1#1 : tensor<i64>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float32",
   "shape": [
    1025
   ],
   "base64": "AACAPwAAAAAAAAAAAACAvwAAgL8AAIC/AACAvwAAgL8AAIC/AACAPwAAAAAAAIA/AAAAAAAAAAAAAIA/AACAPwAAAAAAAAAAAAAAAAAAgD8AAIC/AACAPwAAgD8AAIC/AAAAAAAAgD8AAAAAAACAvwAAgD8AAIA/AACAPwAAgL8AAIC/AACAPwAAgL8AAAAAAACAvwAAgL8AAAAAAAAAAAAAAAAAAIC/AACAvwAAgL8AAIC/AACAPwAAAAAAAAAAAACAvwAAAAAAAIA/AAAAAAAAAAAAAIA/AACAPwAAgD8AAAAAAACAPwAAgD8AAAAAAACAPwAAgD8AAIA/AAAAAAAAgD8AAIC/AAAAAAAAgD8AAIA/AAAAAAAAAAAAAIC/AAAAAAAAAAAAAIA/AACAPwAAgL8AAIA/AAAAAAAAAAAAAIA/AAAAAAAAgL8AAIC/AACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAACAvwAAgD8AAIC/AACAvwAAgD8AAAAAAACAvwAAgL8AAAAAAACAPwAAAAAAAIA/AACAvwAAgL8AAIA/AACAPwAAgL8AAIC/AACAPwAAAAAAAAAAAACAvwAAgD8AAAAAAACAPwAAgD8AAIA/AACAvwAAgD8AAIC/AAAAAAAAAAAAAIA/AACAvwAAgD8AAIC/AAAAAAAAAAAAAMB/AACAvwAAgD8AAIA/AACAPwAAgL8AAIA/AACAPwAAgL8AAAAAAAAAAAAAgL8AAAAAAAAAAAAAgD8AAIA/AAAAAAAAAAAAAAAAAACAPwAAgL8AAAAAAACAvwAAAAAAAIA/AAAAAAAAAAAAAIA/AAAAAAAAgD8AAIC/AAAAAAAAgD8AAIA/AAAAAAAAAAAAAAAAAAAAAAAAgL8AAIA/AACAvwAAAAAAAIC/AACAPwAAgD8AAIA/AACAPwAAgD8AAIC/AACAvwAAgL8AAIA/AACAPwAAgD8AAIA/AACAPwAAgD8AAIC/AACAvwAAgD8AAIC/AACAPwAAgD8AAIA/AAAAAAAAgL8AAAAAAACAPwAAAAAAAIA/AAAAAAAAgD8AAIC/AAAAAAAAgL8AAIC/AACAPwAAgD8AAIC/AACAPwAAgD8AAIC/AAAAAAAAAAAAAAAAAAAAAAAAgL8AAIA/AACAPwAAgL8AAIA/AACAPwAAgL8AAAAAAAAAAAAAgL8AAIA/AACAPwAAgL8AAIC/AACAvwAAgD8AAIC/AAAAAAAAgD8AAIA/AACAvwAAgL8AAAAAAACAPwAAAAAAAIC/AAAAAAAAAAAAAIC/AAAAAAAAgD8AAIA/AACAvwAAAAAAAIA/AACAvwAAgL8AAIC/AACAvwAAgD8AAIC/AACAvwAAwH8AAIC/AACAPwAAgL8AAIA/AAAAAAAAgD8AAAAAAACAPwAAgD8AAIC/AAAAAAAAAAAAAIC/AAAAAAAAAAAAAAAAAACAPwAAgD8AAAAAAACAPwAAgD8AAAAAAAAAAAAAgL8AAAAAAACAvwAAAAAAAIC/AACAPwAAgD8AAIC/AACAPwAAAAAAAIC/AACAPwAAgD8AAIC/AAAAAAAAgD8AAIA/AAAAAAAAgD8AAIA/AACAvwAAgL8AAIC/AAAAAAAAgL8AAIC/AACAvwAAAAAAAAAAAACAvwAAgD8AAIA/AAAAAAAAgD8AAIA/AACAvwAAgL8AAIA/AAAAAAAAgL8AAAAAAAAAAAAAAAAAAAAAAACAvwAAAAAAAAAAAACAPwAAgD8AAIA/AACAvwAAgL8AAIA/AACAvwAAAAAAAIA/AAAAAAAAgD8AAIC/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAIA/AACAvwAAgL8AAIC/AACAvwAAgD8AAIC/AACAPwAAgL8AAIA/AAAAAAAAgD8AAAAAAACAPwAAgD8AAIA/AAAAAAAAgD8AAIA/AACAvwAAAAAAAIC/AACAvwAAgD8AAIC/AACAPwAAgD8AAIC/AACAPwAAAAAAAIA/AACAPwAAAAAAAAAAAACAPwAAAAAAAIA/AACAvwAAgD8AAAAAAACAPwAAAAAAAIC/AACAvwAAAAAAAIA/AACAvwAAAAAAAAAAAACAvwAAAAAAAIA/AACAPwAAgD8AAAAAAAAAAAAAgD8AAIC/AACAPwAAgL8AAAAAAACAPwAAAAAAAIC/AAAAAAAAAAAAAIA/AAAAAAAAgD8AAIA/AACAvwAAgL8AAAAAAAAAAAAAAAAAAIA/AACAvwAAgL8AAIA/AAAAAAAAgD8AAIC/AACAPwAAgD8AAIC/AACAvwAAgL8AAAAAAACAPwAAgD8AAIC/AAAAAAAAAAAAAIA/AACAvwAAgD8AAIA/AACAPwAAgL8AAIC/AAAAAAAAgL8AAIC/AACAvwAAgL8AAIA/AACAPwAAAAAAAIA/AAAAAAAAgL8AAIC/AACAvwAAgD8AAAAAAACAvwAAgL8AAIA/AACAvwAAAAAAAIA/AAAAAAAAgD8AAIA/AACAvwAAgL8AAIC/AAAAAAAAgL8AAIC/AACAPwAAgD8AAIA/AAAAAAAAAAAAAIA/AAAAAAAAgL8AAIC/AACAPwAAgL8AAIA/AAAAAAAAAAAAAIA/AACAPwAAAAAAAAAAAACAPwAAAAAAAAAAAACAPwAAgD8AAIC/AAAAAAAAgD8AAIC/AAAAAAAAAAAAAIC/AACAPwAAgD8AAAAAAACAPwAAgL8AAAAAAACAvwAAAAAAAIC/AACAPwAAgD8AAIC/AACAPwAAgD8AAIC/AACAPwAAgD8AAIA/AACAPwAAgL8AAAAAAACAPwAAgD8AAIC/AAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgL8AAIA/AAAAAAAAgL8AAIC/AAAAAAAAgD8AAIC/AACAPwAAgL8AAIC/AAAAAAAAgD8AAIC/AACAPwAAgL8AAIA/AACAvwAAgD8AAIC/AAAAAAAAgL8AAIA/AAAAAAAAgD8AAAAAAAAAAAAAAAAAAIA/AAAAAAAAgD8AAIC/AAAAAAAAgL8AAIA/AACAvwAAgD8AAIA/AACAvwAAgL8AAIA/AAAAAAAAAAAAAIA/AACAvwAAgL8AAAAAAACAPwAAgL8AAAAAAAAAAAAAgL8AAAAAAAAAAAAAAAAAAIC/AAAAAAAAgD8AAIC/AACAvwAAgD8AAIC/AACAPwAAAAAAAIA/AAAAAAAAgD8AAAAAAAAAAAAAAAAAAIC/AACAvwAAgD8AAAAAAAAAAAAAgL8AAIA/AACAPwAAAAAAAIC/AACAPwAAAAAAAIA/AACAvwAAAAAAAIA/AACAvwAAgL8AAAAAAACAPwAAgD8AAIA/AAAAAAAAAAAAAAAAAACAPwAAgL8AAIC/AACAPwAAgL8AAIC/AACAPwAAgL8AAIA/AACAPwAAgL8AAAAAAACAvwAAAAAAAAAAAACAPwAAgD8AAIC/AACAvwAAgD8AAIC/AACAvwAAAAAAAIC/AACAPwAAgD8AAIC/AAAAAAAAAAAAAIC/AAAAAAAAgD8AAAAAAACAvwAAgL8AAAAAAAAAAAAAgL8AAAAAAACAvwAAAAAAAIA/AACAvwAAgD8AAIC/AAAAAAAAgD8AAIC/AACAPwAAAAAAAAAAAACAvwAAgL8AAIA/AAAAAAAAgD8AAIA/AAAAAAAAgD8AAAAAAACAvwAAgL8AAAAAAACAvwAAgL8AAAAAAAAAAAAAAAAAAAAAAACAPwAAgD8AAIA/AACAvwAAgL8AAAAAAAAAAAAAgD8AAIA/AACAPwAAgL8AAIC/AACAvwAAgL8AAIA/AAAAAAAAgD8AAIC/AAAAAAAAgL8AAIC/AACAPwAAgD8AAIC/AAAAAAAAgD8AAAAAAACAPwAAgL8AAIC/AACAvwAAAAAAAIC/AACAvwAAAAAAAAAAAACAvwAAAAAAAIA/AACAPwAAgL8AAIA/AAAAAAAAAAAAAAAAAACAPwAAgL8AAAAAAACAPwAAAAAAAAAAAACAvwAAgD8AAIC/AACAvwAAgL8AAAAAAAAAAAAAAAAAAIA/AAAAAAAAgD8AAIC/AACAvwAAgL8AAAAAAACAPwAAgL8AAIC/AAAAAAAAgD8AAIC/AACAPwAAgD8AAAAAAACAvwAAAAAAAIA/AACAPwAAgL8AAIA/AAAAAAAAgD8AAIA/AACAPwAAgD8AAIA/AAAAAAAAgD8AAAAAAACAPwAAgL8AAIC/AAAAAAAAgD8AAIA/AACAvwAAgD8AAAAAAACAPwAAAAAAAIA/AACAvwAAAAAAAIA/AACAPwAAgL8AAIC/AACAvwAAgD8AAIC/AAAAAAAAgD8AAIA/AACAvwAAAAAAAIA/AAAAAAAAgL8AAIA/AAAAAAAAgD8AAIA/AAAAAAAAgD8AAIA/AACAPwAAAAAAAAAAAACAPwAAgD8AAAAAAACAPwAAgL8AAIA/AACAvwAAgD8AAAAAAAAAAAAAgL8AAAAAAACAvwAAAAAAAIA/AACAvwAAgL8AAIA/AACAvwAAgL8AAIC/AAAAAAAAAAAAAAAAAACAvwAAgD8AAIC/AACAPwAAgD8AAIC/AACAvwAAAAAAAIC/AAAAAAAAAAAAAAAAAACAPwAAgD8AAIC/AAAAAAAAgD8AAIA/AACAPwAAAAAAAAAAAAAAAAAAAAAAAIC/AAAAAAAAgL8AAAAAAACAPwAAgD8AAIA/AACAvwAAgL8AAAAAAACAPwAAgL8AAIA/AACAvwAAAAAAAIC/AACAPwAAgD8AAAAAAACAPwAAAAAAAIA/AACAvwAAgL8AAIC/AAAAAAAAgD8AAIA/AACAPwAAgL8AAIA/AACAvwAAAAAAAAAAAAAAAAAAAAAAAAAAAACAvwAAgD8AAIA/AAAAAAAAAAAAAIC/AAAAAAAAgD8AAIA/AACAPwAAgL8AAIC/AACAPwAAgL8AAIC/AAAAAAAAgL8AAIA/AACAvwAAAAAAAAAAAACAvwAAAAAAAIC/AACAPwAAAAAAAIC/AACAPwAAgD8AAIC/AAAAAAAAgL8AAAAAAAAAAAAAgL8AAIC/AAAAAAAAgL8AAIA/AACAPwAAgD8AAIA/AACAPwAAAAAAAAAAAACAvwAAgL8AAIC/AACAPwAAAAAAAIA/AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAIA/AAAAAAAAAAAAAIC/AAAAAAAAgL8AAAAAAACAvwAAAAAAAAAAAAAAAAAAAAAAAIC/AACAvwAAAAAAAIA/AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AACAvwAAAAAAAIC/AACAPwAAAAAAAIC/AACAvwAAgD8AAAAAAACAPwAAgL8AAIC/AAAAAAAAgL8AAAAAAAAAAAAAgL8AAIC/AACAPwAAgD8AAAAAAACAPwAAAAAAAIA/AACAvwAAAAAAAIC/AAAAAAAAgD8="
  }
 ],
 "expected": {
  "dtype": "int32",
  "shape": [],
  "base64": "gAAAAA=="
 },
 "assertion": "assert_exact",
 "options": {}
}''')


def decode(d):
    dtype = np.dtype(getattr(ml_dtypes, d["dtype"], d["dtype"]))
    raw = base64.b64decode(d["base64"])
    return np.frombuffer(raw, dtype=dtype).reshape(tuple(d["shape"])).copy()


def ordered(a):
    """Float bits as integers ordered like the values (for ULP distances)."""
    bits = a.view(f"u{a.dtype.itemsize}").astype(object)
    sign = 1 << (8 * a.dtype.itemsize - 1)
    return np.array([-(b & (sign - 1)) if b & sign else b for b in bits.ravel()],
                    dtype=object).reshape(a.shape)


def bad_elements(out, want, assertion, options):
    """Mask of the elements of `out` that the test's assertion rejects."""
    if out.dtype.kind == "c":
        return (bad_elements(out.real.copy(), want.real.copy(), assertion, options)
                | bad_elements(out.imag.copy(), want.imag.copy(), assertion, options))
    if assertion == "assert_bitwise_equal":
        nb = f"u{out.dtype.itemsize}"
        bad = out.view(nb) != want.view(nb)
        if not options.get("nan_payloads", True) and out.dtype.kind == "f":
            bad &= ~(np.isnan(out.astype(np.float64)) & np.isnan(want.astype(np.float64)))
        return bad
    if out.dtype.kind not in "fV":
        return out != want
    g, w = out.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        nan = np.isnan(g) | np.isnan(w)
        inf = np.isinf(g) | np.isinf(w)
        if assertion == "assert_exact":
            return np.where(nan, np.isnan(g) != np.isnan(w), g != w)
        atol = options.get("atol", 0.0)
        atol = decode(atol) if isinstance(atol, dict) else atol
        if assertion == "assert_allclose":
            close = np.abs(g - w) <= atol + options["rtol"] * np.abs(w)
        else:  # assert_ulp_close
            dist = np.abs(ordered(out) - ordered(want.astype(out.dtype))).astype(np.float64)
            close = (dist <= options["max_ulp"]) | (np.abs(g - w) <= atol)
            if options.get("signed_zeros"):
                close &= np.where((g == 0) & (w == 0), np.signbit(g) == np.signbit(w), True)
        return np.where(nan, np.isnan(g) != np.isnan(w), np.where(inf, g != w, ~close))


def run_jax(program, inputs):
    """Compile `program` (StableHLO text) with jax's client; run it on every device."""
    import jax
    jax.config.update("jax_enable_x64", True)
    if DATA["platform"] == "cpu":
        jax.config.update("jax_num_cpu_devices", DATA["devices"])
    from jax.extend import backend
    from jaxlib import xla_client
    client = backend.get_backend(DATA["platform"])
    for dev in client.local_devices():
        opts = backend.get_compile_options(num_replicas=1, num_partitions=1,
                                           device_assignment=np.array([[dev.id]]))
        exe = client.compile_and_load(program, xla_client.DeviceList((dev,)), opts)
        outs = exe.execute([jax.device_put(a, dev) for a in inputs])
        yield f"{dev.platform}:{dev.id}", np.asarray(outs[0])


def pjrt_type(abi, dtype):
    name = dtype.name
    special = {"bool": "PRED", "bfloat16": "BF16"}
    if name not in special:
        for prefix, letter in (("uint", "U"), ("int", "S"), ("complex", "C"), ("float", "F")):
            if name.startswith(prefix):
                special[name] = letter + name[len(prefix):].replace("_", "").upper()
                break
    return int(getattr(abi, "PJRT_Buffer_Type_" + special[name]))


def run_capi(program, inputs, out_dtype):
    """The same through the plugin's PJRT C API (pypjrt), without jax."""
    import pypjrt
    plugin = pypjrt.Plugin(DATA["library_path"])
    client = pypjrt.Client(plugin, options=DATA["client_options"] or None)
    with client.devices() as devices:
        for dev in devices:
            da = b"\x08\x01\x10\x01\x1a\x02\x08" + bytes([dev.id])  # DeviceAssignmentProto
            exe = client.compile(program, options=pypjrt.CompileOptions(device_assignment=da))
            bufs = [client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                            pjrt_type(plugin.abi, a.dtype), list(a.shape), dev)
                    for a in inputs]
            (out,) = exe(*bufs)
            size = int(np.prod(out.dimensions, dtype=np.int64)) * out_dtype.itemsize
            raw = bytes(out.to_host(bytearray(size))) if size else b""
            yield f"device {dev.id}", np.frombuffer(raw, out_dtype).reshape(out.dimensions)


def roundtrip(inputs):
    """Host -> device -> host of every input, through jax or the plugin's C API."""
    if DATA["via"] != "capi":
        import jax
        jax.config.update("jax_enable_x64", True)
        for i, a in enumerate(inputs):
            yield f"arg{i} round trip", np.asarray(jax.device_put(a)), a
        return
    import pypjrt
    plugin = pypjrt.Plugin(DATA["library_path"])
    client = pypjrt.Client(plugin, options=DATA["client_options"] or None)
    with client.devices() as devices:
        for i, a in enumerate(inputs):
            buf = client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                          pjrt_type(plugin.abi, a.dtype), list(a.shape),
                                          devices[0])
            raw = bytes(buf.to_host(bytearray(a.nbytes))) if a.nbytes else b""
            yield f"arg{i} round trip", np.frombuffer(raw, a.dtype).reshape(a.shape), a


def compare(where, inputs, out, want, assertion, options):
    """Print expected vs observed; True when `out` is wrong."""
    if out.dtype != want.dtype or out.shape != want.shape:
        print(f"{where}: observed {out.dtype}{list(out.shape)}, "
              f"expected {want.dtype}{list(want.shape)}")
        return True
    bad = bad_elements(out, want, assertion, options)
    idx = np.argwhere(bad)[:10]
    print(f"{where}: {int(bad.sum())} of {want.size} elements wrong")
    for i in map(tuple, idx):
        args = ", ".join(repr(a[i]) if a.shape == want.shape else f"{a.dtype}{list(a.shape)}"
                         for a in inputs)
        where_at = [int(j) for j in i]
        print(f"  at {where_at}: inputs ({args}) expected {want[i]!r} observed {out[i]!r}")
    return bool(bad.any())


def main():
    check = DATA["check"]
    if check == "lifetime":
        import jax
        x = jax.device_put(np.arange(4, dtype=np.float32))
        x.delete()
        call = DATA["method"]
        print(f"calling x.{call}() on a deleted jax array (a crash here is the defect)",
              flush=True)
        try:
            result = np.asarray(x) if call == "asarray" else getattr(x, call)()
        except Exception as err:  # the correct behaviour: a Python error
            print(f"x.{call}() on a deleted array raised {type(err).__name__}: correct")
            return 0
        print(f"x.{call}() on a deleted array returned {result!r} instead of raising")
        return 1
    inputs = [decode(a) for a in DATA["inputs"]]
    failed = False
    if check == "transfer":
        for where, back, a in roundtrip(inputs):
            failed |= compare(where, [a], back, a, "assert_bitwise_equal", {})
        return 1 if failed else 0
    want = decode(DATA["expected"])
    runs = (run_capi(DATA["program"], inputs, want.dtype) if DATA["via"] == "capi"
            else run_jax(DATA["program"], inputs))
    for where, out in runs:
        failed |= compare(where, inputs, out, want, DATA["assertion"], DATA["options"])
    print("defect present" if failed else "correct")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ImportError as err:  # not the defect: this machine lacks what the script needs
        print(f"cannot run this reproduction: {err} (see needs: at the top of this file)",
              file=sys.stderr)
        sys.exit(2)
