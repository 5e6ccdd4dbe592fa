"""Defects a prober found in the ``runtime`` package (issue 34 item 1): inputs that crashed
jaxlib 0.10.2 (SIGSEGV), hung it, or came back as jaxlib's confusing text. Each bad input
runs in a child process, which must end by itself (no signal, within its timeout) after
printing the runtime's error, naming the argument. Each test failed on the code before the
fix; the good-input controls beside them keep the guards from being over-eager.

1. A tuple type nested 1000 deep in a module (and XLA shape text nested 10000 deep).
2. A dense literal nested 20000 deep.
3. 500 nested ``case`` regions.
4. ``make_cpu_client(num_devices=10**6)``.
5. ``execute``/``execute_sharded`` with a deleted array or an array of another client.
6. ``execute``/``execute_sharded`` with more or fewer arguments than the program takes.
7. Ctrl-C (SIGINT) during ``execute`` of a ``while(true)`` program.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from runtime import xla_client

ROOT = Path(__file__).resolve().parents[1]
#: The documented limits (``runtime._nesting``, ``runtime.xla_client.MAX_CPU_DEVICES``).
TUPLE_LIMIT, REGION_LIMIT, NESTING_LIMIT, CPU_LIMIT = 64, 64, 1024, 4096

ADD = """module @m { func.func public @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32> } }"""

#: ``a + b`` over 2 devices, both arguments and the result split in halves.
SPLIT_ADD = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%a: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"},
                         %b: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"})
      -> (tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32> } }"""

#: ``x + n / 2``, counted up in a while loop of ``n / 2`` steps (``i`` goes 0, 2, 4...
#: until it equals ``n``): an odd ``n`` never ends.
COUNT_UP = """module @m { func.func public @main(%x: tensor<i32>, %n: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<i32>
  cond {
    %c = stablehlo.compare NE, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %i2 = stablehlo.add %i, %two : tensor<i32>
    %a2 = stablehlo.add %acc, %one : tensor<i32>
    stablehlo.return %i2, %a2 : tensor<i32>, tensor<i32>
  }
  return %r#1 : tensor<i32> } }"""

#: Child preamble: ``report(fn)`` prints ``RAISED <type>: <message>`` or ``RETURNED <value>``.
PRELUDE = """
import sys
import numpy as np
from runtime import xla_client as xc

def report(fn):
    try:
        value = fn()
    except Exception as err:
        print(f"RAISED {type(err).__name__}: {err}", flush=True)
    else:
        print(f"RETURNED {value!r}", flush=True)

def split(client, n=4):
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    devices = client.local_devices()[:2]
    sharding = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
    return xc.batched_device_put(jax.core.ShapedArray((n,), np.float32), sharding,
                                 [np.ones(n // 2, np.float32)] * 2, devices)
"""


def _child(code: str, timeout: float = 120) -> str:
    """Run ``PRELUDE + code`` in a fresh Python; assert that it ended by itself (no
    signal such as SIGSEGV, within ``timeout`` seconds); return its output."""
    proc = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"the child did not finish within {timeout} s:\n{out[-3000:]}")
    assert proc.returncode >= 0, \
        f"the child died by signal {-proc.returncode} ({signal.Signals(-proc.returncode).name}):" \
        f"\n{out[-3000:]}"
    assert proc.returncode == 0, out[-3000:]
    return out


def _raised(out: str, kind: str, *words: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("RAISED ")]
    assert lines, out[-3000:]
    line = lines[0]
    assert line.startswith(f"RAISED {kind}: "), out[-3000:]
    for w in words:
        assert w in line, line
    return line


# 1. Tuples nested deep.

def _tuple_module(depth: int) -> str:
    t = "tensor<f32>"
    for _ in range(depth):
        t = f"tuple<{t}>"
    return f"module @m {{ func.func public @main(%a: {t}) -> {t} {{ return %a : {t} }} }}"


def _nested_tuple_program(depth: int) -> str:
    """A valid program that packs its argument into tuples ``depth`` deep and unpacks it."""
    lines, types, value = [], ["tensor<f32>"], "%a"
    for k in range(depth):
        types.append(f"tuple<{types[-1]}>")
        lines.append(f"%t{k} = stablehlo.tuple {value} : {types[-1]}")
        value = f"%t{k}"
    for k in reversed(range(depth)):
        lines.append(f"%u{k} = stablehlo.get_tuple_element {value}[0] : ({types[k + 1]}) -> "
                     f"{types[k]}")
        value = f"%u{k}"
    body = "\n    ".join(lines)
    return (f"module @m {{ func.func public @main(%a: tensor<f32>) -> tensor<f32> {{\n    {body}\n"
            f"    return {value} : tensor<f32> }} }}")


def test_a_tuple_type_nested_1000_deep_is_a_value_error_naming_computation():
    out = _child(f"""
        client = xc.make_cpu_client()
        report(lambda: client.compile_and_load({_tuple_module(1000)!r}, client.local_devices()[:1]))
        report(lambda: client.compile({_tuple_module(1000)!r}, client.local_devices()[:1]))
        """)
    lines = [line for line in out.splitlines() if line.startswith(("RAISED", "RETURNED"))]
    assert len(lines) == 2, out[-3000:]
    for line in lines:
        _raised(line, "ValueError", "'computation'", "tuple", f"{TUPLE_LIMIT}", "1001 deep")


def test_xla_shape_text_nested_10000_deep_is_a_value_error_naming_s():
    text = "(" * 10000 + "f32[2]" + ")" * 10000
    out = _child(f"report(lambda: xc.Shape({text!r}))")
    _raised(out, "ValueError", "'s'", f"{TUPLE_LIMIT}")


def test_tuple_shape_nested_past_the_limit_is_a_value_error_naming_shapes():
    shape = xla_client.Shape.array_shape(np.dtype(np.float32), (2,))
    for _ in range(TUPLE_LIMIT):
        shape = xla_client.Shape.tuple_shape([shape])
    assert shape.is_tuple()  # control: nested exactly to the limit
    with pytest.raises(ValueError, match=r"'shapes\[0\]'.*64"):
        xla_client.Shape.tuple_shape([shape])


def test_tuples_nested_to_the_limit_still_compile_and_run():
    client = xla_client.make_cpu_client()
    depth = TUPLE_LIMIT - 1  # plus the tensor<...> inside
    exe = client.compile_and_load(_nested_tuple_program(depth), client.local_devices()[:1])
    out = exe.execute([client.buffer_from_pyval(np.float32(2.5))])
    assert float(np.asarray(out[0])) == 2.5
    inner = "(" * 20 + "f32[2]" + ")" * 20
    assert xla_client.Shape(inner).is_tuple()


# 2. A dense literal nested deep.

def _dense_module(depth: int, typed: bool = True) -> str:
    literal = "[" * depth + "1.5" + "]" * depth
    ty = "tensor<" + "1x" * depth + "f32>" if typed else "tensor<f32>"
    return (f"module @m {{ func.func public @main() -> {ty} {{\n"
            f"  %c = stablehlo.constant dense<{literal}> : {ty}\n  return %c : {ty} }} }}")


def test_a_dense_literal_nested_20000_deep_is_a_value_error_naming_computation():
    out = _child(f"""
        client = xc.make_cpu_client()
        report(lambda: client.compile_and_load({_dense_module(20000, typed=False)!r},
                                               client.local_devices()[:1]))
        """)
    _raised(out, "ValueError", "'computation'", "dense literal", f"{NESTING_LIMIT}")


def test_a_dense_literal_of_rank_64_still_compiles():
    client = xla_client.make_cpu_client()  # (numpy's arrays have at most 64 dimensions)
    exe = client.compile_and_load(_dense_module(64), client.local_devices()[:1])
    assert np.asarray(exe.execute([])[0]).reshape(()) == 1.5


# 3. Regions nested deep.

def _nested_case_module(depth: int) -> str:
    """``x`` returned through ``depth`` nested ``case`` ops of one branch each."""
    body = "stablehlo.return %x : tensor<f32>"
    for k in range(depth):
        body = (f'%r{k} = "stablehlo.case"(%i) ({{\n{body}\n}}) : (tensor<i32>) -> tensor<f32>\n'
                f"stablehlo.return %r{k} : tensor<f32>")
    body = body.rsplit("\n", 1)[0]
    return ("module @m { func.func public @main(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> "
            f"{{\n{body}\nreturn %r{depth - 1} : tensor<f32> }} }}")


def test_500_nested_case_regions_are_a_value_error_naming_computation():
    out = _child(f"""
        client = xc.make_cpu_client()
        report(lambda: client.compile_and_load({_nested_case_module(500)!r},
                                               client.local_devices()[:1]))
        """)
    _raised(out, "ValueError", "'computation'", "region", f"{REGION_LIMIT}",
            "line ")


def test_case_regions_nested_to_the_limit_still_compile_and_run():
    client = xla_client.make_cpu_client()
    depth = REGION_LIMIT - 2  # plus the module and the function body
    exe = client.compile_and_load(_nested_case_module(depth), client.local_devices()[:1])
    out = exe.execute([client.buffer_from_pyval(np.int32(0)),
                       client.buffer_from_pyval(np.float32(3))])
    assert float(np.asarray(out[0])) == 3.0


def test_the_nesting_scan_ignores_strings_comments_and_arrows():
    text = ('module @m attributes {mhlo.note = "' + "{[(<" * 5000 + '"} {\n// ' + "{" * 5000 + "\n"
            "  func.func public @main(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }"
            "\n}")
    client = xla_client.make_cpu_client()
    exe = client.compile_and_load(text, client.local_devices()[:1])  # no error
    assert float(np.asarray(exe.execute([client.buffer_from_pyval(np.float32(4))])[0])) == 4
    with pytest.raises(ValueError, match="'computation'.*regions"):
        client.compile_and_load("{" * 65 + "}" * 65, client.local_devices()[:1])


def test_the_limits_are_the_documented_ones():
    from runtime import _nesting

    assert (_nesting.MAX_TUPLE_DEPTH, _nesting.MAX_REGION_DEPTH, _nesting.MAX_NESTING_DEPTH,
            xla_client.MAX_CPU_DEVICES) == (TUPLE_LIMIT, REGION_LIMIT, NESTING_LIMIT, CPU_LIMIT)


# 4. The CPU device count.

def test_a_million_cpu_devices_is_a_value_error_naming_num_devices():
    out = _child("report(lambda: xc.make_cpu_client(num_devices=10**6))", timeout=60)
    _raised(out, "ValueError", "'num_devices'", f"{CPU_LIMIT}", "1000000")


def test_a_few_cpu_devices_still_work():
    assert xla_client.make_cpu_client(num_devices=8).device_count() == 8


# 5. and 6. Execute arguments: deleted, of another client, too many, too few.

_EXECUTE_CASES = """
client = xc.make_cpu_client(num_devices=2)
other = xc.make_cpu_client(num_devices=2)
one = client.compile_and_load({add!r}, client.local_devices()[:1])
two = client.compile_and_load({split_add!r}, client.local_devices()[:2])
scalar = lambda c=client: c.buffer_from_pyval(np.float32(1))
def deleted(make):
    x = make()
    x.delete()
    return x
print(one.execute([scalar(), scalar()]), flush=True)   # warm: the fast path from here on
cases = {{
    "deleted": lambda: one.execute([scalar(), deleted(scalar)]),
    "deleted_sharded": lambda: one.execute_sharded([scalar(), deleted(scalar)]),
    "deleted_split": lambda: two.execute([split(client), deleted(lambda: split(client))]),
    "other": lambda: one.execute([scalar(), scalar(other)]),
    "other_sharded": lambda: one.execute_sharded([scalar(), scalar(other)]),
    "other_split": lambda: two.execute([split(client), split(other)]),
    "other_split_sharded": lambda: two.execute_sharded([split(client), split(other)]),
    "more": lambda: one.execute([scalar(), scalar(), scalar()]),
    "fewer": lambda: one.execute([scalar()]),
    "more_sharded": lambda: one.execute_sharded([scalar(), scalar(), scalar()]),
    "more_split": lambda: two.execute([split(client), split(client), split(client)]),
    "fewer_split_sharded": lambda: two.execute_sharded([split(client)]),
    "none_split": lambda: two.execute([]),
}}
for name in sys.argv[1:]:
    report(cases[name])
report(lambda: float(np.asarray(one.execute([scalar(), scalar()])[0])))   # still works
report(lambda: np.asarray(two.execute([split(client), split(client)])[0]).tolist())  # device 0's
"""


def _execute_case(name: str) -> list[str]:
    code = _EXECUTE_CASES.format(add=ADD, split_add=SPLIT_ADD)
    proc_code = f"sys.argv[1:] = [{name!r}]\n" + code
    out = _child(proc_code)
    lines = [line for line in out.splitlines() if line.startswith(("RETURNED", "RAISED"))]
    assert lines[-2:] == ["RETURNED 2.0", "RETURNED [2.0, 2.0]"], out[-3000:]
    return lines[:-2]


@pytest.mark.parametrize("name", ["deleted", "deleted_sharded", "deleted_split"])
def test_execute_with_a_deleted_array_is_a_value_error_naming_the_argument(name):
    (line,) = _execute_case(name)
    _raised(line, "ValueError", "'arguments[1]'", "deleted")


@pytest.mark.parametrize("name", ["other", "other_sharded", "other_split",
                                  "other_split_sharded"])
def test_execute_with_an_array_of_another_client_is_a_value_error_naming_the_argument(name):
    (line,) = _execute_case(name)
    _raised(line, "ValueError", "'arguments[1]'", "another client")


@pytest.mark.parametrize("name,given", [("more", 3), ("fewer", 1), ("more_sharded", 3),
                                        ("more_split", 3), ("fewer_split_sharded", 1),
                                        ("none_split", 0)])
def test_execute_with_the_wrong_argument_count_is_a_type_error_naming_arguments(name, given):
    (line,) = _execute_case(name)
    _raised(line, "TypeError", "'arguments'", "2 arrays", f"got {given}")


def test_execute_sharded_of_a_good_call_still_works():
    client = xla_client.make_cpu_client()
    exe = client.compile_and_load(ADD, client.local_devices()[:1])
    args = [client.buffer_from_pyval(np.float32(1)), client.buffer_from_pyval(np.float32(2))]
    (out,) = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    assert float(np.asarray(out[0])) == 3.0
    for _ in range(3):  # first call, then the fast path
        assert float(np.asarray(exe.execute(args)[0])) == 3.0


# 7. Ctrl-C during execute.

def test_ctrl_c_interrupts_execute_of_a_program_that_never_ends():
    code = PRELUDE + textwrap.dedent(f"""
        import faulthandler, signal, time
        faulthandler.register(signal.SIGUSR1)  # the test's stack dump when SIGINT is ignored
        # as under a terminal: the xdist worker may pass SIGINT on ignored (it did once in
        # CI-like runs, set by an earlier test of that worker), and Python keeps it ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
        client = xc.make_cpu_client()
        exe = client.compile_and_load({COUNT_UP!r}, client.local_devices()[:1])
        arg = lambda v: client.buffer_from_pyval(np.int32(v))
        print("warm", exe.execute([arg(5), arg(6)])[0], flush=True)
        print("started", flush=True)
        t0 = time.monotonic()
        try:
            exe.execute([arg(0), arg(1)])
        except KeyboardInterrupt:
            print(f"KeyboardInterrupt after {{time.monotonic() - t0:.1f}} s", flush=True)
            sys.exit(3)
        print("returned", flush=True)
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("started"):
                break
        assert lines and lines[-1].startswith("started"), "".join(lines)[-3000:]
        assert "warm 8" in "".join(lines)   # control: a loop that ends gives its result
        time.sleep(1.0)                     # well inside the endless execute
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        try:
            rest, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGUSR1)  # where every thread of the child is
            time.sleep(2)
            proc.kill()
            rest, _ = proc.communicate()
            pytest.fail("execute ignored SIGINT: the child still ran 15 s after it; its "
                        f"threads then:\n{rest[-4000:]}")
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 3, rest[-3000:]
    assert "KeyboardInterrupt after" in rest, rest[-3000:]
    assert took < 10, took


def test_the_helper_thread_returns_results_raises_errors_and_keeps_the_stream_id():
    import threading

    from runtime import _execute_guard
    from runtime._compat import native_jax

    assert _execute_guard.call_interruptibly(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        _execute_guard.call_interruptibly(lambda: 1 / 0)
    with xla_client.execution_stream_id(7):
        assert _execute_guard.call_interruptibly(native_jax.get_execution_stream_id) == 7
    names = {_execute_guard.call_interruptibly(lambda: threading.current_thread().name)
             for _ in range(5)}
    assert names == {"runtime-execute"}   # a helper, reused once idle
    seen = []                              # from another thread: inline
    worker = threading.Thread(target=lambda: seen.append(
        _execute_guard.call_interruptibly(lambda: threading.current_thread().name)))
    worker.start()
    worker.join()
    assert seen == [worker.name]


def test_a_loop_program_runs_on_the_helper_thread_and_others_inline():
    client = xla_client.make_cpu_client()
    loop = client.compile_and_load(COUNT_UP, client.local_devices()[:1])
    add = client.compile_and_load(ADD, client.local_devices()[:1])
    arg = lambda v: client.buffer_from_pyval(np.int32(v))  # noqa: E731
    for _ in range(3):  # first call, then the fast path
        assert int(np.asarray(loop.execute([arg(5), arg(6)])[0])) == 8
    (out,) = loop.execute_sharded([arg(1), arg(4)]).disassemble_into_single_device_arrays()
    assert int(np.asarray(out[0])) == 3
    scalars = [client.buffer_from_pyval(np.float32(1))] * 2
    add.execute(scalars)
    assert (loop._may_not_end, add._may_not_end) == (True, False)


def test_a_sigint_while_execute_waits_is_noted_not_raised_where_it_could_be_lost():
    """While the main thread waits, SIGINT only notes (a KeyboardInterrupt raised by
    Python's handler inside a gc callback is ignored: CI saw a Ctrl-C lost so); the wait
    raises it, and Python's handler is back afterwards."""
    from runtime import _execute_guard

    def during():
        return signal.getsignal(signal.SIGINT)

    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # see above
    try:
        _sigint_is_noted_while_waiting(_execute_guard, during)
    finally:
        signal.signal(signal.SIGINT, inherited)


def _sigint_is_noted_while_waiting(_execute_guard, during):
    handler = _execute_guard.call_interruptibly(during)
    assert handler is not signal.default_int_handler and callable(handler)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def interrupted():
        os.kill(os.getpid(), signal.SIGINT)   # as Ctrl-C does, while the main thread waits
        time.sleep(3)
        return "finished"

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _execute_guard.call_interruptibly(interrupted)
    assert time.monotonic() - t0 < 2.5
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
