#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float16-argmax]
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
 "nodeid": "conformance/test_kernels_reduce.py::test_arg_reduction_picks_the_first_of_ties[float16-argmax]",
 "via": "capi",
 "library_path": "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
 "client_options": {},
 "platform": "gpu",
 "devices": 8,
 "program": "module @jit_argmax_0 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1025xf16>) -> (tensor<i64> {jax.result_info = \"result\"}) {\n    %0 = call @argmax(%arg0) : (tensor<1025xf16>) -> tensor<i64>\n    return %0 : tensor<i64>\n  }\n  func.func private @argmax(%arg0: tensor<1025xf16>) -> tensor<i64> {\n    %0 = stablehlo.iota dim = 0 : tensor<1025xi64>\n    %cst = stablehlo.constant dense<0xFC00> : tensor<f16>\n    %c = stablehlo.constant dense<0> : tensor<i64>\n    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<1025xf16>, tensor<1025xi64>, tensor<f16>, tensor<i64>) -> (tensor<f16>, tensor<i64>)\n     reducer(%arg1: tensor<f16>, %arg3: tensor<f16>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {\n      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %4 = stablehlo.or %2, %3 : tensor<i1>\n      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>\n      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n      %7 = stablehlo.and %5, %6 : tensor<i1>\n      %8 = stablehlo.or %4, %7 : tensor<i1>\n      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f16>\n      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>\n      stablehlo.return %9, %10 : tensor<f16>, tensor<i64>\n    }\n    return %1#1 : tensor<i64>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float16",
   "shape": [
    1025
   ],
   "base64": "ADwAAAAAALwAvAC8ALwAvAC8ADwAAAA8AAAAAAA8ADwAAAAAAAAAPAC8ADwAPAC8AAAAPAAAALwAPAA8ADwAvAB+ADwAvAAAALwAvAAAAAAAAAC8ALwAvAC8ADwAAAAAALwAAAA8AAAAAAA8ADwAPAAAADwAPAAAADwAPAA8AAAAfgC8AAAAPAA8AAAAAAC8AAAAAAA8ADwAvAA8AAAAAAA8AAAAvAC8ADwAAAAAAAAAPAAAALwAPAC8ALwAPAAAALwAvAAAADwAAAA8ALwAvAA8ADwAvAC8ADwAAAAAALwAPAAAADwAPAA8ALwAPAC8AAAAAAA8ALwAPAC8AAAAAAA8ALwAPAA8ADwAvAA8ADwAvAAAAAAAvAAAAAAAPAA8AAAAAAAAADwAvAAAALwAAAA8AAAAAAA8AAAAPAC8AAAAPAA8AAAAAAAAAAAAvAA8ALwAAAC8ADwAPAA8ADwAPAC8ALwAvAA8ADwAPAA8ADwAPAC8ALwAPAC8ADwAPAA8AAAAvAAAADwAAAA8AAAAPAC8AAAAvAC8ADwAPAC8ADwAPAC8AAAAAAAAAAAAvAA8ADwAvAA8ADwAvAAAAAAAvAA8ADwAvAC8ALwAPAC8AAAAPAA8ALwAvAAAADwAAAC8AAAAAAC8AAAAPAA8ALwAAAA8ALwAvAC8ALwAPAC8ALwAvAC8ADwAvAA8AAAAPAAAADwAPAC8AAAAAAC8AAAAAAAAADwAPAAAADwAPAAAAAAAvAAAALwAAAC8ADwAPAC8ADwAAAC8ADwAPAC8AAAAPAA8AAAAPAA8ALwAvAC8AAAAvAC8ALwAAAAAALwAPAA8AAAAPAA8ALwAvAA8AAAAvAAAAAAAAAAAALwAAAAAADwAPAA8ALwAvAA8ALwAAAA8AAAAPAC8AAAAAAAAAAAAPAA8ALwAvAC8ALwAPAC8ADwAvAA8AAAAPAAAADwAPAA8AAAAPAA8ALwAAAC8ALwAPAC8ADwAPAC8ADwAAAA8ADwAAAAAADwAAAA8ALwAPAAAADwAAAC8ALwAAAA8ALwAAAAAALwAAAA8ADwAPAAAAAAAPAC8ADwAvAAAADwAAAC8AAAAAAA8AAAAPAA8ALwAvAAAAAAAAAA8ALwAvAA8AAAAPAC8ADwAPAC8ALwAvAAAADwAPAC8AAAAAAA8ALwAPAA8ADwAvAC8AAAAvAC8ALwAvAA8ADwAAAA8AAAAvAC8ALwAPAAAALwAvAA8ALwAAAA8AAAAPAA8ALwAvAC8AAAAvAC8ADwAPAA8AAAAAAA8AAAAvAC8ADwAvAA8AAAAAAA8ADwAAAAAADwAAAAAADwAPAC8AAAAPAC8AAAAAAC8ADwAPAAAADwAvAAAALwAAAC8ADwAPAC8ADwAPAC8ADwAPAA8ADwAvAAAADwAPAC8AAAAAAA8AAAAAAAAAAAAvAA8AAAAvAC8AAAAPAC8ADwAvAC8AAAAPAC8ADwAvAA8ALwAPAC8AAAAvAA8AAAAPAAAAAAAAAA8AAAAPAC8AAAAvAA8ALwAPAA8ALwAvAA8AAAAAAA8ALwAvAAAADwAvAAAAAAAvAAAAAAAAAC8AAAAPAC8ALwAPAC8ADwAAAA8AAAAPAAAAAAAAAC8ALwAPAAAAAAAvAA8ADwAAAC8ADwAAAA8ALwAAAA8ALwAvAAAADwAPAA8AAAAAAAAADwAvAC8ADwAvAC8ADwAvAA8ADwAvAAAALwAAAAAADwAPAC8ALwAPAC8ALwAAAC8ADwAPAC8AAAAAAC8AAAAPAAAALwAvAAAAAAAvAAAALwAAAA8ALwAPAC8AAAAPAC8ADwAAAAAALwAvAA8AAAAPAA8AAAAPAAAALwAvAAAALwAvAAAAAAAAAAAADwAPAA8ALwAvAAAAAAAPAA8ADwAvAC8ALwAvAA8AAAAPAC8AAAAvAC8ADwAPAC8AAAAPAAAADwAvAC8ALwAAAC8ALwAAAAAALwAAAA8ADwAvAA8AAAAAAAAADwAvAAAADwAAAAAALwAPAC8ALwAvAAAAAAAAAA8AAAAPAC8ALwAvAAAADwAvAC8AAAAPAC8ADwAPAAAALwAAAA8ADwAvAA8AAAAPAA8ADwAPAA8AAAAPAAAADwAvAC8AAAAPAA8ALwAPAAAADwAAAA8ALwAAAA8ADwAvAC8ALwAPAC8AAAAPAA8ALwAAAA8AAAAvAA8AAAAPAA8AAAAPAA8ADwAAAAAADwAPAAAADwAvAA8ALwAPAAAAAAAvAAAALwAAAA8ALwAvAA8ALwAvAC8AAAAAAAAALwAPAC8ADwAPAC8ALwAAAC8AAAAAAAAADwAPAC8AAAAPAA8ADwAAAAAAAAAAAC8AAAAvAAAADwAPAA8ALwAvAAAADwAvAA8ALwAAAC8ADwAPAAAADwAAAA8ALwAvAC8AAAAPAA8ADwAvAA8ALwAAAAAAAAAAAAAALwAPAA8AAAAAAC8AAAAPAA8ADwAvAC8ADwAvAC8AAAAvAA8ALwAAAAAALwAAAC8ADwAAAC8ADwAPAC8AAAAvAAAAAAAvAC8AAAAvAA8ADwAPAA8ADwAAAAAALwAvAC8ADwAAAA8AAAAAAAAADwAAAAAAAAAPAA8AAAAAAC8AAAAvAAAALwAAAAAAAAAAAC8ALwAAAA8AAAAAAAAADwAAAAAAAAAAAA8ALwAAAC8ADwAAAC8ALwAPAAAADwAvAC8AAAAvAAAAAAAvAC8ADwAPAAAADwAAAA8ALwAAAC8AAAAPA=="
  }
 ],
 "expected": {
  "dtype": "int32",
  "shape": [],
  "base64": "IAAAAA=="
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
