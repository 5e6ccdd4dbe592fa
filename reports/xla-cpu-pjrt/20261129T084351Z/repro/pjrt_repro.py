r"""The checks shared by the standalone reproductions of a pjrt-conformance bundle
(pjrt-conformance 0.1.0): every `repro/<test>.py` beside this file embeds its failure's facts and
calls `run(DATA)`. No pytest and no import of the conformance suite; needs numpy and
ml_dtypes, and jax or pypjrt as each script's `needs:` line says.

Exit status of every reproduction, each with one line on standard output or error
(never a traceback):
  0  fixed: the backend now gives the correct result;
  1  present: the defect the test found is still there (the wrong elements printed
     with their bits in hex);
  2  cannot run: no plugin library found, a module missing (numpy, ml_dtypes, jax,
     pypjrt), too few devices, or an error raised while setting up, compiling or
     running the program (an error is not the recorded wrong result: it neither
     confirms nor clears the defect).
A crash of the backend kills the process by a signal (the shell shows 128 + signal).

The plugin library (C API reproductions) is, in this order: the command-line argument
`--plugin-library PATH`, the environment variable PJRT_CONFORMANCE_PLUGIN_LIBRARY, then
the file the recording machine loaded inside the plugin's installed Python package
(found with importlib); one line says which was used. A C API plugin's partitioned
program runs partitioned on that plugin (pypjrt), with the functions copied below
from the suite's conformance/helpers/partitioned.py; jax's partitioned program on jax's
client.

When the program has several outputs, the compared one is the output the test
compared (DATA["output_index"]); a bundle that did not record it compares the only
output of the expected dtype and shape, and exits 2 when several have them.
"""
from __future__ import annotations

import base64
import io
import json
import math
import os
import sys
from typing import Any

FIXED, PRESENT, CANNOT_RUN = 0, 1, 2
ENV = "PJRT_CONFORMANCE_PLUGIN_LIBRARY"
OPTION = "--plugin-library"
DATA = {}


class CannotRun(Exception):
    """This machine cannot run the reproduction (exit 2); the message is one line."""


# A binary mismatch (ml_dtypes built for another numpy) raises AttributeError,
# RuntimeError or ImportError, and its extension prints a traceback to sys.stderr first:
# held back here, so that one line says why (exit 2: not the defect).
_stderr, sys.stderr = sys.stderr, io.StringIO()
try:
    import ml_dtypes
    import numpy as np
except Exception as missing:  # noqa: BLE001 - whatever the import raises
    sys.stderr = _stderr
    first = (str(missing).strip().splitlines() or [""])[0][:300]
    print(f"cannot run this reproduction: importing numpy and ml_dtypes raised "
          f"{type(missing).__name__}: {first} (see needs: at the top of the script)",
          file=sys.stderr)
    sys.exit(CANNOT_RUN)
sys.stderr = _stderr


def find_library(argv, environ):
    """(path, how) of the plugin library: `--plugin-library PATH` (or `=PATH`) in
    `argv`, else `environ[ENV]`, else DATA["library"]'s file in its installed
    package. Raises CannotRun when none names an existing file."""
    for k, word in enumerate(argv):
        if word == OPTION and k + 1 < len(argv):
            return _existing(argv[k + 1], f"{OPTION} argument")
        if word.startswith(OPTION + "="):
            return _existing(word.split("=", 1)[1], f"{OPTION} argument")
    if environ.get(ENV):
        return _existing(environ[ENV], f"environment variable {ENV}")
    where = DATA.get("library") or {}
    package, name = where.get("package"), where.get("file")
    hint = (f"pass {OPTION} PATH or set {ENV}" +
            (f", or install the Python package holding {package} "
             f"({where.get('distribution') or 'see the bundle report'})" if package else ""))
    if package and name:
        import importlib.util
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        folders = list(spec.submodule_search_locations or []) if spec else []
        if spec and not folders and spec.origin:
            folders = [os.path.dirname(spec.origin)]
        for folder in folders:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return path, f"installed package {package}"
        raise CannotRun(f"no plugin library: package {package} "
                        f"{'has no ' + name if spec else 'is not installed'}; {hint}")
    raise CannotRun(f"no plugin library: {hint}")


def _existing(path, how):
    if not os.path.isfile(path):
        raise CannotRun(f"no plugin library: {how} names {path!r}, which is not a file")
    return path, how


def bits(a, i=None):
    """The bits of `a[i]` (or of the scalar `a`) in hex, e.g. 0x7fc0 for a bfloat16 NaN."""
    x = np.asarray(a if i is None else a[i])
    raw = x.tobytes()
    return f"0x{int.from_bytes(raw, 'little'):0{2 * len(raw)}x}"


def shown(a, i):
    """`a[i]` as printed: its value and, for floats, its bits."""
    v = a[i]
    return f"{v!r} ({bits(a, i)})" if a.dtype.kind in "fcV" else repr(v)


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


def jax_client():
    """jax's client for DATA's platform, with the recorded device count on the CPU (set
    before the backend starts); CannotRun when jax is missing."""
    try:
        import jax
    except ImportError as err:
        raise CannotRun(f"{err} (see needs: at the top of the script)") from None
    jax.config.update("jax_enable_x64", True)
    if DATA["platform"] == "cpu":
        jax.config.update("jax_num_cpu_devices", DATA["devices"])
    from jax.extend import backend
    return jax, backend.get_backend(DATA["platform"])


def run_jax(program, inputs):
    """Compile `program` (StableHLO text) with jax's client; run it on every device."""
    jax, client = jax_client()
    from jax.extend import backend
    from jaxlib import xla_client
    print(f"running on jax {jax.__version__}'s {DATA['platform']} client, one device at a time")
    for dev in client.local_devices():
        opts = backend.get_compile_options(num_replicas=1, num_partitions=1,
                                           device_assignment=np.array([[dev.id]]))
        if DISABLED_PASS:  # XLA's debug option, per compile (as jax's compiler_options)
            opts.env_option_overrides = [("xla_disable_hlo_passes", DISABLED_PASS)]
        exe = checked(lambda: client.compile_and_load(program, xla_client.DeviceList((dev,)),
                                                      opts), "compiling")
        outs = checked(lambda: exe.execute([jax.device_put(a, dev) for a in inputs]),
                       "running")
        yield f"{dev.platform}:{dev.id}", [np.asarray(o) for o in outs]


def _spec(entries):
    from jax.sharding import PartitionSpec
    return PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in entries])


def _placement():
    sh = DATA["sharding"]
    return (f"num_partitions={len(sh['device_ids'])}, mesh "
            f"{dict(zip(sh['axis_names'], sh['mesh_shape']))} of devices {sh['device_ids']}, "
            f"inputs {sh['in_specs']}, outputs {sh.get('out_specs') or sh['out_spec']}")


def run_partitioned(program, inputs):
    """Compile `program` for DATA["sharding"]'s mesh with jax's client (num_partitions =
    its size, the SPMD partitioner on, as jax compiles it; partition i on
    device_ids[i]), place the inputs by their PartitionSpecs and run it across the
    mesh's devices at once; yield each output assembled from its shards (replicas that
    disagree are reported as a wrong result)."""
    jax, client = jax_client()
    from jax.sharding import Mesh, NamedSharding
    from jaxlib import xla_client
    sh = DATA["sharding"]
    devices = {d.id: d for d in client.local_devices()}
    if any(i not in devices for i in sh["device_ids"]):
        raise CannotRun(f"needs devices {sorted(sh['device_ids'])}, this {DATA['platform']} "
                        f"client has {sorted(devices)}")
    order = [devices[i] for i in sh["device_ids"]]  # partition p runs on order[p]
    mesh = Mesh(np.array(order).reshape(sh["mesh_shape"]), tuple(sh["axis_names"]))
    in_shardings = [NamedSharding(mesh, _spec(s)) for s in sh["in_specs"]]
    opts = xla_client.CompileOptions()
    opts.num_replicas, opts.num_partitions = 1, len(order)
    opts.device_assignment = xla_client.DeviceAssignment.create(
        np.array([[d.id for d in order]], dtype=np.int64))
    opts.executable_build_options.use_spmd_partitioning = True
    opts.executable_build_options.use_shardy_partitioner = True
    print(f"running on jax {jax.__version__}'s {DATA['platform']} client partitioned: "
          f"{_placement()}")
    exe = checked(lambda: client.compile_and_load(program, xla_client.DeviceList(tuple(order)),
                                                  opts), "compiling")
    args = [jax.device_put(a, s) for a, s in zip(inputs, in_shardings)]
    per_output = checked(lambda: exe.execute_sharded(args)
                         .disassemble_into_single_device_arrays(), "running")
    partition = {i: p for p, i in enumerate(sh["device_ids"])}
    outs = []
    for k, shards in enumerate(per_output):
        shards = sorted(shards, key=lambda a: partition[next(iter(a.devices())).id])
        out, problem = assemble(sh, [np.asarray(a) for a in shards], k)
        if problem:
            print(problem)
            DATA["_replicas_disagree"] = True
        outs.append(out)
    yield f"{len(order)} partitions", outs


def run_capi_partitioned(program, inputs, argv):
    """The same through the plugin's PJRT C API (pypjrt), without jax: `execute` (from
    the suite's conformance/helpers/partitioned.py, below) compiles for DATA["sharding"]'s
    partitions and runs them on the plugin's devices at once."""
    pypjrt, plugin, client = capi_client(argv)
    sh = DATA["sharding"]
    print(f"running on the plugin through its C API partitioned: {_placement()}")

    def put(a, dev):
        return client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                       pjrt_type(plugin.abi, a.dtype), list(a.shape), dev)

    try:
        outs, problem = execute(client, pypjrt, program, inputs, sh, put,
                                lambda buf: to_numpy(plugin.abi, buf))
    except (LookupError, ValueError) as err:  # a device it lacks, an input that won't cut
        raise CannotRun(f"no partitioned run on this plugin: {err}") from None
    except Exception as err:  # compiling or running: not the recorded wrong result
        raise CannotRun(raised(err, "compiling or running")) from None
    if problem:
        print(problem)
        DATA["_replicas_disagree"] = True
    yield f"{len(sh['device_ids'])} partitions", outs


# ---- copied from the suite's conformance/helpers/partitioned.py when the bundle was
# ---- written (one source for the suite's C API check and these scripts)
def _axes(entry: Any) -> list[str]:
    """The mesh axes of one PartitionSpec entry (None, a name or a list of names)."""
    return [] if entry is None else [entry] if isinstance(entry, str) else list(entry)

def block_index(sharding: dict[str, Any], spec: list[Any], partition: int,
                shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of a global array of ``shape`` that partition ``partition`` holds under
    ``spec`` (the first axis of an entry is the major one, as in jax). Raises ValueError
    when a dimension does not divide evenly."""
    sizes = dict(zip(sharding["axis_names"], sharding["mesh_shape"]))
    coords = dict(zip(sharding["axis_names"],
                      np.unravel_index(partition, sharding["mesh_shape"])))
    out = []
    for k, n in enumerate(shape):
        idx, pieces = 0, 1
        for axis in _axes(spec[k] if k < len(spec) else None):
            idx, pieces = idx * sizes[axis] + int(coords[axis]), pieces * sizes[axis]
        if n % pieces:
            raise ValueError(f"dimension {k} of {list(shape)} does not divide into {pieces}")
        out.append(slice(idx * (n // pieces), (idx + 1) * (n // pieces)))
    return tuple(out)

def global_shape(sharding: dict[str, Any], spec: list[Any],
                 shard: tuple[int, ...]) -> tuple[int, ...]:
    """The global shape of an output whose shards have shape ``shard`` under ``spec``."""
    sizes = dict(zip(sharding["axis_names"], sharding["mesh_shape"]))
    return tuple(n * math.prod(sizes[a] for a in _axes(spec[k] if k < len(spec) else None))
                 for k, n in enumerate(shard))

def output_spec(sharding: dict[str, Any], output: int) -> list[Any]:
    """The PartitionSpec (as listed) of output ``output``: its entry of ``out_specs``
    where the placement has one per output, else ``out_spec`` (every output's)."""
    specs = sharding.get("out_specs")
    return specs[output] if specs else sharding["out_spec"]

def assemble(sharding: dict[str, Any], shards: list[np.ndarray],
             output: int = 0) -> tuple[np.ndarray, str]:
    """The global output ``output`` from one shard per partition (its
    :func:`output_spec`), and a problem ('' when none): a shard of another shape than its
    partition's, or replicas of one block that differ in their bits."""
    spec = output_spec(sharding, output)
    shape = global_shape(sharding, spec, shards[0].shape)
    out, seen = np.zeros(shape, shards[0].dtype), {}
    for p, shard in enumerate(shards):
        where = block_index(sharding, spec, p, shape)
        if out[where].shape != shard.shape:
            return out, (f"partition {p} (device {sharding['device_ids'][p]}) returned "
                         f"shape {list(shard.shape)}, its block is {list(out[where].shape)}")
        key = tuple((w.start, w.stop) for w in where)
        if key in seen and seen[key].tobytes() != shard.tobytes():
            return out, (f"replicas of block {key} differ (device "
                         f"{sharding['device_ids'][p]})")
        seen[key] = shard
        out[where] = shard
    return out, ""

def device_assignment(device_ids: list[int]) -> bytes:
    """A serialized ``xla.DeviceAssignmentProto``: one replica, partition ``i`` on
    ``device_ids[i]`` (fields 1 replica_count, 2 computation_count, 3
    computation_devices, each with 1 replica_device_ids)."""
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)
    out = b"\x08\x01\x10" + varint(len(device_ids))
    for i in device_ids:
        inner = b"\x08" + varint(i)
        out += b"\x1a" + varint(len(inner)) + inner
    return out

def execute(client: Any, pypjrt: Any, program: str, inputs: list[np.ndarray],
        sharding: dict[str, Any], put: Any, get: Any) -> tuple[list[np.ndarray], str]:
    """Compile ``program`` for ``sharding``'s partitions and run it on their devices;
    return (the global outputs, a problem or ''). ``put(a, device)`` places a host
    array, ``get(buffer)`` reads one back. Raises LookupError when a recorded device is
    not one of the client's, ValueError for inputs that do not divide by their spec, and
    pypjrt's errors from compiling or running."""
    ids = [int(i) for i in sharding["device_ids"]]
    with client.devices() as devices:
        by_id = {d.id: d for d in devices}
        if any(i not in by_id for i in ids):
            raise LookupError(f"the placement needs devices {sorted(ids)}; the plugin's "
                              f"client has {sorted(by_id)}")
        many = len(ids) > 1
        opts = pypjrt.CompileOptions(num_replicas=1, num_partitions=len(ids),
                                     use_spmd_partitioning=many, use_shardy_partitioner=many,
                                     device_assignment=device_assignment(ids))
        exe = client.compile(program, options=opts)
        args = [[put(np.ascontiguousarray(a[block_index(sharding, spec, p, a.shape)])
                     if a.ndim else a, by_id[i])
                 for a, spec in zip(inputs, sharding["in_specs"])]
                for p, i in enumerate(ids)]
        per_device = exe.execute_sharded(args)
        outputs, problems = [], []
        for j in range(len(per_device[0])):
            out, problem = assemble(sharding, [get(row[j]) for row in per_device], j)
            outputs.append(out)
            problems += [f"output {j}: {problem}"] if problem else []
        return outputs, "; ".join(problems)


def checked(call, what):
    """`call()`; an exception it raises is not the recorded defect: CannotRun."""
    try:
        return call()
    except Exception as err:  # the recorded defect is a wrong result, not an error
        raise CannotRun(raised(err, what)) from None


def raised(err, what):
    """One line: `err` raised while `what` the program, which is not the defect."""
    first = (str(err).strip().splitlines() or [""])[0][:300]
    return (f"the backend raised {type(err).__name__} while {what} the program "
            f"(not the recorded wrong result): {first}")


def pjrt_type(abi, dtype):
    name = dtype.name
    special = {"bool": "PRED", "bfloat16": "BF16"}
    if name not in special:
        for prefix, letter in (("uint", "U"), ("int", "S"), ("complex", "C"), ("float", "F")):
            if name.startswith(prefix):
                special[name] = letter + name[len(prefix):].replace("_", "").upper()
                break
    return int(getattr(abi, "PJRT_Buffer_Type_" + special[name]))


#: dtypes an output buffer may have (PJRT_Buffer_Type codes are looked up by name)
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "int4",
          "uint4", "float8_e5m2", "float8_e4m3fn", "float8_e4m3b11fnuz", "float8_e5m2fnuz",
          "float8_e4m3fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn")


def to_numpy(abi, buf):
    """A plugin buffer copied to the host as a numpy array of its own dtype."""
    code = int(buf.element_type)
    for name in DTYPES:
        if not hasattr(ml_dtypes, name) and not hasattr(np, name):
            continue
        dtype = np.dtype(getattr(ml_dtypes, name, name))
        try:
            if pjrt_type(abi, dtype) != code:
                continue
        except (AttributeError, KeyError):
            continue
        size = int(np.prod(buf.dimensions, dtype=np.int64)) * dtype.itemsize
        raw = bytes(buf.to_host(bytearray(size))) if size else b""
        return np.frombuffer(raw, dtype).reshape(buf.dimensions)
    raise CannotRun(f"an output has PJRT buffer type {code}, which numpy cannot hold")


def capi_client(argv):
    """(pypjrt module, plugin, client) of the plugin library :func:`find_library` finds."""
    path, how = find_library(argv, os.environ)
    print(f"plugin library: {path} (from {how})")
    try:
        import pypjrt
    except ImportError as err:
        raise CannotRun(f"{err} (see needs: at the top of the script)") from None
    plugin = pypjrt.Plugin(path)
    return pypjrt, plugin, pypjrt.Client(plugin, options=DATA["client_options"] or None)


def run_capi(program, inputs, argv):
    """The same through the plugin's PJRT C API (pypjrt), without jax: one device at a
    time (its DeviceAssignmentProto from `device_assignment`); every output kept."""
    pypjrt, plugin, client = capi_client(argv)
    print("running on the plugin through its C API, one device at a time")
    with client.devices() as devices:
        for dev in devices:
            opts = pypjrt.CompileOptions(device_assignment=device_assignment([dev.id]))
            exe = checked(lambda: client.compile(program, options=opts), "compiling")
            bufs = [client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                            pjrt_type(plugin.abi, a.dtype), list(a.shape), dev)
                    for a in inputs]
            outs = checked(lambda: exe(*bufs), "running")
            yield f"device {dev.id}", [to_numpy(plugin.abi, out) for out in outs]


def roundtrip(inputs, argv):
    """Host -> device -> host of every input, through jax or the plugin's C API."""
    if DATA["via"] != "capi":
        jax, _ = jax_client()
        for i, a in enumerate(inputs):
            yield f"arg{i} round trip", np.asarray(jax.device_put(a)), a
        return
    _, plugin, client = capi_client(argv)
    with client.devices() as devices:
        for i, a in enumerate(inputs):
            buf = client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                          pjrt_type(plugin.abi, a.dtype), list(a.shape),
                                          devices[0])
            raw = bytes(buf.to_host(bytearray(a.nbytes))) if a.nbytes else b""
            yield f"arg{i} round trip", np.frombuffer(raw, a.dtype).reshape(a.shape), a


def compare(where, inputs, out, want, assertion, options):
    """Print expected vs observed (floats with their bits in hex); True when `out` is
    wrong."""
    if out.dtype != want.dtype or out.shape != want.shape:
        print(f"{where}: observed {out.dtype}{list(out.shape)}, "
              f"expected {want.dtype}{list(want.shape)}")
        return True
    bad = bad_elements(out, want, assertion, options)
    idx = np.argwhere(bad)[:10]
    print(f"{where}: {int(bad.sum())} of {want.size} elements wrong")
    for i in map(tuple, idx):
        args = ", ".join(shown(a, i) if a.shape == want.shape else f"{a.dtype}{list(a.shape)}"
                         for a in inputs)
        where_at = [int(j) for j in i]
        print(f"  at {where_at}: inputs ({args}) expected {shown(want, i)} "
              f"observed {shown(out, i)}")
    return bool(bad.any())


def lifetime():
    jax, _ = jax_client()
    x = jax.device_put(np.arange(4, dtype=np.float32))
    x.delete()
    call = DATA["method"]
    print(f"calling x.{call}() on a deleted jax array (a crash here is the defect)",
          flush=True)
    try:
        result = np.asarray(x) if call == "asarray" else getattr(x, call)()
    except Exception as err:  # the correct behaviour: a Python error
        print(f"x.{call}() on a deleted array raised {type(err).__name__}: correct")
        return FIXED
    print(f"x.{call}() on a deleted array returned {result!r} instead of raising")
    return PRESENT


#: The HLO pass compiled without (--disable-pass), or None.
DISABLED_PASS = None


def _compiler_pass(argv):
    """``argv`` without ``--disable-pass``, and the line saying which pass the suite named
    (printed with the result, so that a reproduction that cannot run prints one line);
    with ``--disable-pass`` the named pass (DATA's ``compiler_pass``) is disabled when
    compiling."""
    global DISABLED_PASS
    named = (DATA.get("compiler_pass") or {}).get("pass")
    found = DATA.get("compiler_pass")
    line = (f"compiler pass named by the suite: {named or 'undecided'} ({found['reason']})"
            + (f"; rerun with --disable-pass to compile without {named}" if named
               and "--disable-pass" not in argv else "")) if found else ""
    if "--disable-pass" not in argv:
        return argv, line
    if not named:
        raise CannotRun("--disable-pass: the suite named no compiler pass for this failure")
    if DATA["via"] != "jax" or DATA.get("sharding"):
        raise CannotRun("--disable-pass: only for a program run on jax's client, one device")
    DISABLED_PASS = named
    return [a for a in argv if a != "--disable-pass"], \
        f"{line} (compiled with xla_disable_hlo_passes={named})"


def main(argv):
    argv, pass_line = _compiler_pass(list(argv))
    check = DATA["check"]
    if check == "lifetime":
        return lifetime()
    inputs = [decode(a) for a in DATA["inputs"]]
    failed = False
    if check == "transfer":
        for where, back, a in roundtrip(inputs, argv):
            failed |= compare(where, [a], back, a, "assert_bitwise_equal", {})
        print("defect present" if failed else "correct")
        return PRESENT if failed else FIXED
    want = decode(DATA["expected"])
    capi, sharded = DATA["via"] == "capi", bool(DATA.get("sharding"))
    if capi and sharded:
        runs = run_capi_partitioned(DATA["program"], inputs, argv)
    elif capi:
        runs = run_capi(DATA["program"], inputs, argv)
    elif sharded:
        runs = run_partitioned(DATA["program"], inputs)
    else:
        runs = run_jax(DATA["program"], inputs)
    for where, outs in runs:
        k = compared_output(outs, want)
        failed |= compare(f"{where} output {k}" if len(outs) > 1 else where, inputs,
                          outs[k], want, DATA["assertion"], DATA["options"])
        failed |= bool(DATA.get("_replicas_disagree"))
    if pass_line:
        print(pass_line)
    print("defect present" if failed else "correct")
    return PRESENT if failed else FIXED


def compared_output(outs, want):
    """The index of the output the test compared: DATA["output_index"] when recorded;
    else the only output, or the only one of the expected dtype and shape (none: the
    first, whose dtype or shape is then the defect, as every output's is). CannotRun
    when several have the expected dtype and shape: the comparison would be a guess."""
    index = DATA.get("output_index")
    if index is not None:
        if not 0 <= index < len(outs):
            raise CannotRun(f"the test compared output {index}; the program has "
                            f"{len(outs)} outputs")
        return index
    same = [k for k, o in enumerate(outs) if o.dtype == want.dtype and o.shape == want.shape]
    if len(outs) == 1 or not same:
        return 0
    if len(same) == 1:
        return same[0]
    raise CannotRun(f"cannot decide which output the test compared: outputs {same} of "
                    f"{len(outs)} are {want.dtype}{list(want.shape)} and the bundle did not "
                    f"record the index")


def run(data, argv=None):
    """Run the reproduction of `data` (a script's DATA) with the command-line words
    `argv` (default: sys.argv[1:]); return the exit status (see the module doc): 0
    fixed, 1 present, 2 cannot run. Prints one line, never a traceback, for every
    exception (a KeyboardInterrupt included)."""
    global DATA
    DATA = data
    try:
        return main(sys.argv[1:] if argv is None else list(argv))
    except CannotRun as err:
        print(f"cannot run this reproduction: {err}", file=sys.stderr)
    except ImportError as err:  # not the defect: this machine lacks what the script needs
        print(f"cannot run this reproduction: {err} (see needs: at the top of the script)",
              file=sys.stderr)
    except BaseException as err:  # set-up, not the checked computation (see checked)
        first = (str(err).strip().splitlines() or [""])[0][:300]
        print(f"cannot run this reproduction: {type(err).__name__} while setting up: {first}",
              file=sys.stderr)
    return CANNOT_RUN
