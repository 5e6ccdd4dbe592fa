"""The child process of the below-the-framework check (:mod:`conformance.capi`).

Run as the child module ``conformance.capi.child PLAN_FILE`` (``runner.Module``) by :func:`conformance.capi.evidence`: it loads
the plugin library with ``pypjrt`` (ctypes on the PJRT C API, no jaxlib), creates a
client with the recorded create options, runs one check and prints one JSON line,
``{"verdict": "correct" | "wrong" | "undecided" | "declined", "detail": str}``. A crash of the
plugin ends this process, never the caller's.

Checks (``plan["check"]``):

- ``execute``: every recorded input to every device (up to :data:`MAX_DEVICES`),
  compile the recorded StableHLO program for that device, execute, copy the output
  back and judge it with the assertion helper that rejected the framework's result
  (same helper, same options, same expected array). A program recorded with its
  placement (``arrays.sharding``) runs partitioned instead, as the test ran it
  (:mod:`conformance.helpers.partitioned`); one of several partitions
  (``mhlo.num_partitions`` > 1) without it is ``declined``: never run on one device;
- ``transfer``: host -> device -> host round trip of every recorded input on every
  device, bit for bit;
- ``lifetime``: ``PJRT_Buffer_Delete``, then ``PJRT_Buffer_IsDeleted`` must say
  true, and the test's operation on the deleted buffer (``ReadyEvent``,
  ``ToHostBuffer``, ``CopyToDevice``) must report an error; a second ``Delete`` must
  not crash.
"""

from __future__ import annotations

import ctypes
import json
import re
import sys
from typing import Any

import ml_dtypes
import numpy as np

from conformance.helpers import partitioned
from conformance.helpers import assertions
from conformance.helpers import reproduction

MAX_DEVICES = 8
_PARTITIONS = re.compile(r"mhlo\.num_partitions\s*=\s*(\d+)")
_ASSERTIONS = ("assert_bitwise_equal", "assert_exact", "assert_allclose", "assert_ulp_close")


_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "int4",
           "uint4", "float8_e5m2", "float8_e4m3fn", "float8_e4m3b11fnuz", "float8_e5m2fnuz",
           "float8_e4m3fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn")


def _type_name(dtype_name: str) -> str:
    """numpy/ml_dtypes name -> PJRT_Buffer_Type suffix: float32 -> F32, int8 -> S8,
    bfloat16 -> BF16, float8_e4m3fn -> F8E4M3FN, bool -> PRED."""
    special = {"bool": "PRED", "bfloat16": "BF16"}
    if dtype_name in special:
        return special[dtype_name]
    for prefix, letter in (("uint", "U"), ("int", "S"), ("complex", "C"), ("float", "F")):
        if dtype_name.startswith(prefix):
            return letter + dtype_name[len(prefix):].replace("_", "").upper()
    raise ValueError(f"no PJRT buffer type for {dtype_name}")


def _pjrt_type(abi: Any, dtype: np.dtype) -> int:
    """The PJRT_Buffer_Type code of a numpy/ml_dtypes dtype (ValueError if none)."""
    code = getattr(abi, f"PJRT_Buffer_Type_{_type_name(dtype.name)}", None)
    if code is None:
        raise ValueError(f"no PJRT buffer type for {dtype.name}")
    return int(code)


def _output_dtype(abi: Any, code: int) -> np.dtype:
    """The numpy/ml_dtypes dtype of a PJRT_Buffer_Type code (ValueError if none)."""
    for name in _DTYPES:
        if getattr(abi, f"PJRT_Buffer_Type_{_type_name(name)}", None) == code:
            return np.dtype(getattr(ml_dtypes, name, name))
    raise ValueError(f"output PJRT buffer type {code} has no numpy dtype")


def _put(client: Any, pypjrt: Any, a: np.ndarray, device: Any) -> Any:
    a = np.asarray(a)  # tobytes() is C order; ascontiguousarray would make 0-d arrays 1-d
    return client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                   _pjrt_type(client._plugin.abi, a.dtype),  # noqa: SLF001
                                   list(a.shape), device)


def _get(buf: Any, dtype: np.dtype) -> np.ndarray:
    dims = buf.dimensions
    size = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    raw = bytes(buf.to_host(bytearray(size))) if size else b""
    return np.frombuffer(raw, dtype=dtype).reshape(dims)


def check_execute(client: Any, pypjrt: Any, devices: list, plan: dict) -> tuple[str, str]:
    """The recorded program on the recorded inputs, judged by the assertion that
    rejected the framework's result: partitioned with the recorded placement
    (:func:`_check_partitioned`), else on each device alone; ``declined`` for a program
    of several partitions recorded without its placement (a one-device run is not the
    failing configuration)."""
    arrays = plan["arrays"]
    helper = arrays["assertion"]
    if helper not in _ASSERTIONS:
        return "undecided", f"no C API check for assertion {helper!r}"
    if arrays.get("sharding"):
        return _check_partitioned(client, pypjrt, plan)
    found = _PARTITIONS.search(plan["program"])
    if found and int(found.group(1)) > 1:
        return "declined", partitioned.declined_detail(int(found.group(1)))
    inputs = [reproduction.decode_array(x) for x in arrays["inputs"]]
    wrong, right = [], []
    for device in devices:
        opts = pypjrt.CompileOptions(device_assignment=partitioned.device_assignment([device.id]))
        exe = client.compile(plan["program"], options=opts)
        outs = exe(*[_put(client, pypjrt, a, device) for a in inputs])
        if len(outs) != 1:
            return "undecided", f"the program has {len(outs)} outputs; the check takes one"
        out = _get(outs[0], _output_dtype(client._plugin.abi, outs[0].element_type))
        verdict, text = _judge(out, arrays, f"C API on device {device.id}")
        if verdict == "undecided":
            return verdict, text
        (right if verdict == "correct" else wrong).append((device.id, text))
    if wrong:
        return "wrong", (f"the plugin's own result of the recorded program on the recorded "
                         f"inputs fails {helper} on device(s) {[d for d, _ in wrong]}: "
                         f"{wrong[0][1]}")
    return "correct", (f"the recorded program on the recorded inputs passes {helper} on "
                       f"device(s) {[d for d, _ in right]}")


def _judge(out: np.ndarray, arrays: dict, call: str) -> tuple[str, str]:
    """(``correct`` | ``wrong`` | ``undecided``, the assertion's first line or why the
    check cannot compare) for ``out`` under the recorded assertion."""
    out, why = _as_recorded(out, arrays.get("observed"))
    if why:
        return "undecided", why
    options = {k: reproduction.decode_array(v) if isinstance(v, dict) else v
               for k, v in arrays.get("options", {}).items()}
    try:
        getattr(assertions, arrays["assertion"])(
            out, reproduction.decode_array(arrays["expected"]), call=call, **options)
    except AssertionError as err:
        return "wrong", str(err).splitlines()[0]
    return "correct", ""


def _check_partitioned(client: Any, pypjrt: Any, plan: dict) -> tuple[str, str]:
    """The program over its recorded mesh, all partitions at once
    (:mod:`conformance.helpers.partitioned`); ``undecided`` when the plugin's client lacks
    a recorded device or an input does not divide by its spec."""
    arrays, sharding = plan["arrays"], plan["arrays"]["sharding"]
    inputs = [reproduction.decode_array(x) for x in arrays["inputs"]]
    abi = client._plugin.abi  # noqa: SLF001
    try:
        outs, problem = partitioned.execute(
            client, pypjrt, plan["program"], inputs, sharding,
            lambda a, d: _put(client, pypjrt, a, d),
            lambda b: _get(b, _output_dtype(abi, b.element_type)))
    except (LookupError, ValueError) as err:
        return "undecided", f"no partitioned C API re-run: {err}"
    where = (f"{sharding['partitions']} partitions (mesh "
             f"{dict(zip(sharding['axis_names'], sharding['mesh_shape']))} of devices "
             f"{sharding['device_ids']})")
    if problem:
        return "wrong", f"the plugin's own run over {where}: {problem}"
    if len(outs) != 1:
        return "undecided", f"the program has {len(outs)} outputs; the check takes one"
    verdict, text = _judge(outs[0], arrays, f"C API over {where}")
    if verdict == "wrong":
        return "wrong", (f"the plugin's own result of the recorded program on the recorded "
                         f"inputs over {where} fails {arrays['assertion']}: {text}")
    if verdict == "correct":
        return "correct", (f"the recorded program on the recorded inputs over {where} "
                           f"passes {arrays['assertion']}")
    return verdict, text


def _as_recorded(out: np.ndarray, observed: dict | None) -> tuple[np.ndarray, str | None]:
    """``out`` in the dtype the test asserted on. A test may convert the program's
    result before its assertion (argmax's int64 index to int32, say); the recorded
    ``observed`` array has the converted dtype. The same conversion is applied when it
    stays within the dtype's kind (int -> int, float -> float); otherwise the check
    cannot compare like with like and says why (the second item)."""
    if not observed or observed.get("dtype") in (None, out.dtype.name):
        return out, None
    target = reproduction.decode_array(observed).dtype
    if target.kind != out.dtype.kind:
        return out, (f"the test asserted on {target.name}, the program returns "
                     f"{out.dtype.name}: no like-for-like C API comparison")
    return out.astype(target), None


def check_transfer(client: Any, pypjrt: Any, devices: list, plan: dict) -> tuple[str, str]:
    inputs = [reproduction.decode_array(x) for x in plan["arrays"]["inputs"]]
    for device in devices:
        for i, a in enumerate(inputs):
            back = _get(_put(client, pypjrt, a, device), a.dtype)
            try:
                assertions.assert_bitwise_equal(back, a, call=f"arg{i} on device {device.id}")
            except AssertionError as err:
                return "wrong", (f"host -> device -> host round trip of arg{i} on device "
                                 f"{device.id}: {str(err).splitlines()[0]}")
    return "correct", (f"host -> device -> host round trip of {len(inputs)} input(s) is bit "
                       f"exact on device(s) {[d.id for d in devices]}")


def _refused(plugin: Any, pypjrt: Any, name: str, **fields: Any) -> str | None:
    """Call ``name`` with ``fields``; the error it reports (directly or through its
    event), or None when it succeeded."""
    args = plugin.args(f"{name}_Args", **fields)
    try:
        plugin.call(name, args)
        if getattr(args, "event", None):
            pypjrt.Event(plugin, args.event).result()
    except pypjrt.errors.PjrtError as err:
        return str(err)
    return None


def _use_after_delete(plugin: Any, pypjrt: Any, buf: Any, devices: list,
                      operation: str) -> tuple[str, str | None]:
    """(C API call, the error it reported or None) for ``operation`` on a deleted buffer."""
    if operation == "ready":
        return "ReadyEvent", _refused(plugin, pypjrt, "PJRT_Buffer_ReadyEvent",
                                      buffer=buf.address)
    if operation == "to_host":
        dst = bytearray(16)
        return "ToHostBuffer", _refused(plugin, pypjrt, "PJRT_Buffer_ToHostBuffer",
                                        src=buf.address, dst_size=16,
                                        dst=ctypes.addressof(ctypes.c_char.from_buffer(dst)))
    return "CopyToDevice", _refused(plugin, pypjrt, "PJRT_Buffer_CopyToDevice",
                                    buffer=buf.address, dst_device=devices[-1].address)


def check_lifetime(client: Any, pypjrt: Any, devices: list, plan: dict) -> tuple[str, str]:
    """``plan["operation"]``: ``is_deleted``, ``double_delete`` (a second Delete is
    harmless), or ``ready`` / ``to_host`` / ``clone`` on the deleted buffer, which
    must report an error (a crash ends the child: the caller sees the signal)."""
    plugin = client._plugin  # noqa: SLF001 -- raw calls on a deleted buffer's handle
    buf = _put(client, pypjrt, np.arange(4, dtype=np.float32), devices[0])
    buf.delete()
    if not buf.is_deleted:
        return "wrong", "PJRT_Buffer_IsDeleted is false after PJRT_Buffer_Delete"
    operation = plan["operation"]
    if operation == "is_deleted":
        return "correct", "PJRT_Buffer_IsDeleted is true after PJRT_Buffer_Delete"
    if operation == "double_delete":
        again = _refused(plugin, pypjrt, "PJRT_Buffer_Delete", buffer=buf.address)
        return "correct", (f"a second PJRT_Buffer_Delete returned "
                           f"{'an error: ' + again if again else 'OK'}; IsDeleted "
                           f"{'stays true' if buf.is_deleted else 'became false'}")
    call, error = _use_after_delete(plugin, pypjrt, buf, devices, operation)
    if error is None:
        return "wrong", f"PJRT_Buffer_{call} on a deleted buffer reports no error"
    return "correct", (f"after PJRT_Buffer_Delete, IsDeleted is true and {call} reports "
                       f"an error ({error.splitlines()[0]})")


CHECKS = {"execute": check_execute, "transfer": check_transfer, "lifetime": check_lifetime}


def run(plan: dict) -> tuple[str, str]:
    """Run ``plan`` (see :func:`conformance.capi.plan`) in this process."""
    import pypjrt
    plugin = pypjrt.Plugin(plan["library_path"])
    client = pypjrt.Client(plugin, options=plan.get("options") or None)
    with client.devices() as devices:
        return CHECKS[plan["check"]](client, pypjrt, list(devices)[:MAX_DEVICES], plan)


def main(argv: list[str]) -> None:
    with open(argv[0], encoding="utf-8") as f:
        plan = json.load(f)
    try:
        verdict, detail = run(plan)
    except Exception as err:  # noqa: BLE001 -- any error: this check cannot decide
        first = str(err).splitlines()[0] if str(err) else ""
        verdict, detail = "undecided", f"{type(err).__name__}: {first}"
    print(json.dumps({"verdict": verdict, "detail": detail}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
