r"""The checks shared by the standalone reproductions of a pjrt-conformance bundle
(pjrt-conformance 0.1.0): every `repro/<test>.py` beside this file embeds its failure's facts and
calls `run(DATA)`. No pytest and no import of the conformance suite; needs numpy and
ml_dtypes, and jax or pypjrt as each script's `needs:` line says.
"""
import base64
import json
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as missing:  # not the defect: this machine lacks what the script needs
    print(f"cannot run this reproduction: {missing} (see needs: at the top of the script)",
          file=sys.stderr)
    sys.exit(2)

DATA = {}


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


def run(data):
    """Run the reproduction of `data` (a script's DATA); the exit status: 1 while the
    defect is present, 0 when the backend is correct, 2 when a module is missing."""
    global DATA
    DATA = data
    try:
        return main()
    except ImportError as err:  # not the defect: this machine lacks what the script needs
        print(f"cannot run this reproduction: {err} (see needs: at the top of the script)",
              file=sys.stderr)
        return 2
