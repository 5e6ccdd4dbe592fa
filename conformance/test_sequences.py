"""Area sequences: the runtime API over sequences of calls (a Hypothesis state machine).

Every other area runs one call, or one program, on fresh buffers. Backends keep state
across calls: allocators reuse freed buffers, donation hands a buffer to an output,
executions are enqueued asynchronously and from several threads. Wrong results reported
against jax in 2026 needed a sequence (stale eager results depending on the previous
statement, jax-ml/jax#40633; donation with an output order, jax-ml/jax#39625; a
multi-output fusion aliasing two outputs, jax-ml/jax#39100).

:class:`Sequences` is a ``RuleBasedStateMachine`` over the ``runtime`` client of the
platform under test, with a model of every array it made: its NumPy value, its
device(s), and whether it is live, deleted or donated. Rules: ``put``
(``buffer_from_pyval`` with every ``HostBufferSemantics`` and ``force_copy``; the
caller then reuses its host buffer where the semantics allow), ``put_sharded``
(``batched_device_put`` split over several devices), ``execute`` (a program of
:mod:`conformance.programs.sequence_pool`), ``execute_donating`` (argument 0 donated:
input/output aliasing), ``delete``, ``copy_to_device``
(``batched_copy_array_to_devices_with_sharding``, ``ALWAYS_COPY``/``REUSE_INPUT``),
``reshard`` (``reorder_shards``), ``read`` (``np.asarray``, after
``copy_to_host_async`` or ``block_until_ready``, or of a ``clone()``), ``burst``
(a chain of executions enqueued without blocking, then every result read) and
``threads`` (2-4 threads executing at once).

Invariants, after every step: every live array equals its model bit for bit, read
through a fresh ``clone()`` (a host copy jaxlib cached must not hide the device
buffer); every deleted or donated array says ``is_deleted()`` and refuses to be read
or executed with; ``client.live_arrays()`` holds every live array, no dead one, and
nothing the sequence did not make. At the end every array is deleted and the client's
live arrays (and ``memory_stats()['bytes_in_use']`` where the client has it) are back at
their baseline. Values are int32, so every comparison is bitwise. A failing sequence is
shrunk by Hypothesis and kept as a standalone script of straight-line runtime calls
(:mod:`conformance.programs.sequence_script`; ``repro/<test>.py`` in the bundle).
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import functools
import gc
import threading
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule, run_state_machine_as_test)
from jax.sharding import SingleDeviceSharding

from conformance.helpers import assertions
from conformance.programs import compiled_programs
from conformance.programs import sequence_pool
from conformance.programs import sequence_script

#: Sides of the int32[n, n] arrays: a tiny one, a whole tile, one past a 128 tile.
SIDES = (3, 16, 130)
#: Live arrays a sequence holds at most (each is read after every step).
MAX_LIVE = 10
#: Steps of one sequence (Hypothesis' ``stateful_step_count``).
STEPS = 25
_DEAD_CHECKED = 6
_FILLS = st.tuples(st.sampled_from(["iota", "random"]), st.integers(-3, 2**31 - 1))


@dataclasses.dataclass
class Entry:
    """One array the sequence made: ``name`` (``a<k>`` in the script), the array, its
    model ``value``, ``state`` (``live``, ``deleted``, ``donated``), the ids of its
    devices, ``host``: the caller's buffer of a put, kept alive while the array may
    alias it (``ZERO_COPY``), and ``group``: arrays of one group may share device
    buffers (``clone()``, ``REUSE_INPUT`` onto the same devices)."""

    name: str
    array: Any
    value: np.ndarray
    devices: tuple[int, ...]
    state: str = "live"
    host: np.ndarray | None = None
    group: int = -1


def _executable(cache: compiled_programs.ProgramCache, name: str, donate: bool, n: int,
                device: Any) -> Any:
    """Pool program ``name`` on ``int32[n, n]`` arguments on ``device``, argument 0
    donated when ``donate``, compiled once per cache (compiling is the slow part of a
    step)."""
    program = sequence_pool.POOL[name]
    return cache.load(f"seq_{name}{'_donating' if donate else ''}", sequence_pool.function(name),
                      [((n, n), np.int32)] * program.arity, [device],
                      donate=(0,) if donate else ())[0]


def _step(fn):
    """Mark the machine unclean while ``fn`` (a rule or invariant) runs: a step that
    raised leaves it so, and teardown then only cleans up (its own checks would hide
    the step's failure)."""
    @functools.wraps(fn)
    def guarded(self, *args, **kwargs):
        self.unclean = True
        result = fn(self, *args, **kwargs)
        self.unclean = False
        return result
    return guarded


def machine(client: Any, xc: Any, platform: str, devices: int,
            executables: compiled_programs.ProgramCache | None = None) -> type:
    """The state machine class over ``client`` (``xc``: the module-level xla_client
    API of the platform). ``platform``/``devices``: what a reproduction opens. The
    last instance made is ``cls.last`` (the one a failure's replay ran)."""
    executables = executables or compiled_programs.ProgramCache(client)
    local = client.local_devices()
    semantics = [xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
                 xc.HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES,
                 xc.HostBufferSemantics.ZERO_COPY]
    copies = [xc.ArrayCopySemantics.ALWAYS_COPY, xc.ArrayCopySemantics.REUSE_INPUT]

    class Sequences(RuleBasedStateMachine):
        last = None

        def __init__(self):
            super().__init__()
            type(self).last = self
            gc.collect()
            self.baseline = list(client.live_arrays())  # held: their ids stay theirs
            self.baseline_ids = {id(a) for a in self.baseline}
            self.bytes0 = _bytes_in_use(local)
            self.compiles0 = executables.compiles
            self.entries: list[Entry] = []
            self.unclean = False
            self.n = SIDES[0]
            self.script = sequence_script.Script(platform, devices)

        # -- helpers ---------------------------------------------------------------
        def live(self, single: bool = False) -> list[Entry]:
            return [e for e in self.entries if e.state == "live"
                    and (not single or len(e.devices) == 1)]

        def add(self, array: Any, value: np.ndarray, devices: tuple[int, ...],
                host: np.ndarray | None = None, shares: Entry | None = None) -> Entry:
            group = shares.group if shares is not None else len(self.entries)
            entry = Entry(f"a{len(self.entries)}", array, value, devices, host=host,
                          group=group)
            self.entries.append(entry)
            return entry

        def alone(self, entries: list[Entry]) -> list[Entry]:
            """``entries`` that share no buffer with another live array. Deleting or
            donating one that does also deletes the other on jaxlib (the cataloged
            ``jaxlib-reuse-input-shared-deletion``, pinned by test_copy_semantics; then
            reading the other through ``clone()`` crashes jaxlib <= 0.10.2,
            ``jaxlib-clone-of-deleted-array``): only that pattern is not drawn."""
            groups = collections.Counter(e.group for e in self.live())
            return [e for e in entries if groups[e.group] == 1]

        def pick(self, data: Any, entries: list[Entry], label: str) -> Entry:
            return entries[data.draw(st.integers(0, len(entries) - 1), label=label)]

        def run(self, name: str, donate: bool, args: list[Entry]) -> list[Entry]:
            """Execute pool program ``name`` on ``args`` (one device); model and script."""
            device = local[args[0].devices[0]]
            exe = _executable(executables, name, donate, self.n, device)
            outs = exe.execute([a.array for a in args])
            expected = sequence_pool.reference(name)(*[a.value for a in args])
            call = f"{name}({', '.join(a.name for a in args)})"
            assert len(outs) == len(expected), (
                f"execute returned {len(outs)} outputs, but {name} has {len(expected)} "
                f"[{call}]")
            if donate:
                args[0].state = "donated"
            made = [self.add(o, v, args[0].devices) for o, v in zip(outs, expected)]
            names = ", ".join(e.name for e in made)
            models = ", ".join(f"v_{e.name}" for e in made)
            self.script.step(
                f"execute {call}{' donating ' + args[0].name if donate else ''}",
                f"{names}, = compiled({name!r}, {donate}, devices[{args[0].devices[0]}])"
                f".execute([{', '.join(a.name for a in args)}])",
                f"{models}, = reference({name!r})({', '.join('v_' + a.name for a in args)})")
            return made

        def choose_args(self, data: Any, name: str, donate: bool) -> list[Entry]:
            candidates = self.live(single=True)
            if donate:
                candidates = self.alone(candidates)
            if not candidates:
                return []
            first = self.pick(data, candidates, "argument 0")
            same = [e for e in self.live(single=True) if e.devices == first.devices
                    and not (donate and e is first)]
            args = [first]
            for i in range(1, sequence_pool.POOL[name].arity):
                if not same:
                    return []
                args.append(self.pick(data, same, f"argument {i}"))
            return args

        # -- rules ---------------------------------------------------------------
        @initialize(n=st.sampled_from(SIDES))
        @_step
        def side(self, n):
            self.n = self.script.n = n

        @precondition(lambda self: len(self.live()) < MAX_LIVE)
        @rule(data=st.data())
        @_step
        def put(self, data):
            dev = data.draw(st.integers(0, len(local) - 1), label="device")
            sem = data.draw(st.sampled_from(semantics), label="host_buffer_semantics")
            force = data.draw(st.booleans(), label="force_copy")
            kind, key = data.draw(_FILLS, label="values")
            host = sequence_pool.values(kind, key, self.n)
            value = host.copy()
            arr = client.buffer_from_pyval(host, local[dev], force_copy=force,
                                           host_buffer_semantics=sem)
            entry = self.add(arr, value, (dev,), host=host)
            lines = [f"h = values({kind!r}, {key}, N)",
                     f"{entry.name} = client.buffer_from_pyval(h, devices[{dev}], "
                     f"force_copy={force}, host_buffer_semantics=xla_client."
                     f"HostBufferSemantics.{sem.name})",
                     f"v_{entry.name} = h.copy()"]
            # The caller may reuse its buffer once the semantics allow it.
            if sem == xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL:
                host[...] = ~host
                lines.append("h[...] = ~h  # ONLY_DURING_CALL: the caller reuses its buffer")
            elif sem == xc.HostBufferSemantics.IMMUTABLE_UNTIL_TRANSFER_COMPLETES:
                arr.block_until_ready()
                host[...] = ~host
                lines += [f"{entry.name}.block_until_ready()",
                          "h[...] = ~h  # the transfer completed: the caller reuses its buffer"]
            else:
                lines.append(f"hold_{entry.name} = h  # ZERO_COPY: kept, never written")
            self.script.step(f"put {entry.name} ({sem.name}, force_copy={force})", *lines)

        def split_count(self) -> int:
            """Devices an int32[n, n] array is split over by rows (the most that divide n)."""
            return max(d for d in range(1, len(local) + 1) if self.n % d == 0)

        @precondition(lambda self: len(self.live()) < MAX_LIVE and self.split_count() > 1)
        @rule(data=st.data())
        @_step
        def put_sharded(self, data):
            count = self.split_count()
            start = data.draw(st.integers(0, len(local) - count), label="first device")
            kind, key = data.draw(_FILLS, label="values")
            host = sequence_pool.values(kind, key, self.n)
            mesh_devices = tuple(range(start, start + count))
            arr = sequence_script.put_split(host, [local[i] for i in mesh_devices])
            entry = self.add(arr, host.copy(), mesh_devices)
            self.script.step(
                f"put {entry.name} split over devices {list(mesh_devices)}",
                f"h = values({kind!r}, {key}, N)",
                f"{entry.name} = put_split(h, devices[{start}:{start + count}])",
                f"v_{entry.name} = h.copy()")

        @precondition(lambda self: self.live(single=True) and len(self.live()) < MAX_LIVE - 1)
        @rule(data=st.data(), name=st.sampled_from(sorted(sequence_pool.POOL)))
        @_step
        def execute(self, data, name):
            args = self.choose_args(data, name, donate=False)
            if args:
                self.run(name, False, args)

        @precondition(lambda self: self.live(single=True) and len(self.live()) < MAX_LIVE - 1)
        @rule(data=st.data(), name=st.sampled_from(sorted(sequence_pool.POOL)))
        @_step
        def execute_donating(self, data, name):
            args = self.choose_args(data, name, donate=True)
            if args:
                self.run(name, True, args)

        @precondition(lambda self: self.alone(self.live()))
        @rule(data=st.data())
        @_step
        def delete(self, data):
            entry = self.pick(data, self.alone(self.live()), "array")
            entry.array.delete()
            entry.state = "deleted"
            self.script.step(f"delete {entry.name}", f"{entry.name}.delete()")

        @precondition(lambda self: self.live(single=True) and len(self.live()) < MAX_LIVE)
        @rule(data=st.data(), copy=st.sampled_from(copies))
        @_step
        def copy_to_device(self, data, copy):
            src = self.pick(data, self.live(single=True), "array")
            dst = data.draw(st.integers(0, len(local) - 1), label="to device")
            out = xc.batched_copy_array_to_devices_with_sharding(
                [src.array], [xc.DeviceList((local[dst],))],
                [SingleDeviceSharding(local[dst])], [copy])[0]
            reuses = copy == xc.ArrayCopySemantics.REUSE_INPUT and (dst,) == src.devices
            entry = self.add(out, src.value.copy(), (dst,), shares=src if reuses else None)
            self.script.step(
                f"copy {src.name} to device {dst} ({copy.name})",
                f"{entry.name} = copy_to(devices[{dst}], {src.name}, "
                f"xla_client.ArrayCopySemantics.{copy.name})",
                f"v_{entry.name} = v_{src.name}.copy()")

        @precondition(lambda self: any(len(e.devices) > 1 for e in self.live())
                      and len(self.live()) < MAX_LIVE)
        @rule(data=st.data(), copy=st.sampled_from(copies))
        @_step
        def reshard(self, data, copy):
            src = self.pick(data, [e for e in self.live() if len(e.devices) > 1], "array")
            order = data.draw(st.permutations(src.devices), label="device order")
            dst = sequence_script.reordered_rows([local[i] for i in order],
                                                 [local[i] for i in src.devices])
            out = xc.reorder_shards(src.array, dst, copy)
            entry = self.add(out, src.value.copy(), src.devices,
                             shares=src if copy == xc.ArrayCopySemantics.REUSE_INPUT else None)
            self.script.step(
                f"reorder_shards {src.name} onto device order {list(order)} ({copy.name})",
                f"{entry.name} = xla_client.reorder_shards({src.name}, reordered_rows("
                f"[devices[i] for i in {list(order)}], [devices[i] for i in "
                f"{list(src.devices)}]), xla_client.ArrayCopySemantics.{copy.name})",
                f"v_{entry.name} = v_{src.name}.copy()")

        @precondition(lambda self: self.live())
        @rule(data=st.data(), how=st.sampled_from(["asarray", "copy_to_host_async",
                                                   "block_until_ready", "clone"]))
        @_step
        def read(self, data, how):
            entry = self.pick(data, self.live(), "array")
            arr, call = entry.array, f"{how} of {entry.name}"
            if how == "copy_to_host_async":
                arr.copy_to_host_async()
            elif how == "block_until_ready":
                same = arr.block_until_ready()
                assert same is arr, f"block_until_ready() returned {same!r}, not the array"
            elif how == "clone" and len(self.live()) < MAX_LIVE:
                twin = self.add(arr.clone(), entry.value.copy(), entry.devices, shares=entry)
                self.script.step(f"clone {entry.name}", f"{twin.name} = {entry.name}.clone()",
                                 f"v_{twin.name} = v_{entry.name}.copy()")
                return
            self.script.step(call, *([f"{entry.name}.copy_to_host_async()"]
                                     if how == "copy_to_host_async" else []),
                             f"expect_read({entry.name}, v_{entry.name})")
            assertions.assert_bitwise_equal(np.asarray(arr), entry.value, call=call)

        @precondition(lambda self: self.live(single=True) and len(self.live()) < MAX_LIVE - 4)
        @rule(data=st.data(), name=st.sampled_from(sequence_pool.UNARY),
              count=st.integers(2, 4))
        @_step
        def burst(self, data, name, count):
            """``count`` executions enqueued without blocking, each on the last's result;
            then every result read, the last first."""
            made = [self.pick(data, self.live(single=True), "argument 0")]
            for _ in range(count):
                made += self.run(name, False, [made[-1]])
            for entry in reversed(made[1:]):
                self.script.step(f"read {entry.name}", f"expect_read({entry.name}, "
                                                       f"v_{entry.name})")
                assertions.assert_bitwise_equal(np.asarray(entry.array), entry.value,
                                                call=f"{name} #{made.index(entry)} of a "
                                                     f"burst of {count}")

        @precondition(lambda self: self.live(single=True) and len(self.live()) < MAX_LIVE - 8)
        @rule(data=st.data(), count=st.integers(2, 4))
        @_step
        def threads(self, data, count):
            """``count`` threads, started together, each executing a program on its own
            arguments and reading its results; then the results checked."""
            work = []
            for t in range(count):
                name = data.draw(st.sampled_from(sorted(sequence_pool.POOL)),
                                 label=f"thread {t} program")
                args = self.choose_args(data, name, donate=False)
                if args:
                    work.append((name, args))
            if not work:
                return
            barrier = threading.Barrier(len(work))

            def one(job):
                name, args = job
                exe = _executable(executables, name, False, self.n, local[args[0].devices[0]])
                barrier.wait(timeout=60)
                outs = exe.execute([a.array for a in args])
                return outs, [np.array(o) for o in outs]

            with concurrent.futures.ThreadPoolExecutor(len(work)) as pool:
                results = list(pool.map(one, work))
            calls = []
            for (name, args), (outs, hosts) in zip(work, results):
                expected = sequence_pool.reference(name)(*[a.value for a in args])
                call = f"{name}({', '.join(a.name for a in args)}) on one of {len(work)} threads"
                made = [self.add(o, v, args[0].devices) for o, v in zip(outs, expected)]
                calls.append((name, args, made))
                for host, v in zip(hosts, expected):
                    assertions.assert_bitwise_equal(host, v, call=call)
            self.script.step(f"{len(work)} threads", *_thread_lines(calls))

        # -- invariants ------------------------------------------------------------
        @invariant()
        @_step
        def every_live_array_equals_its_model(self):
            for e in self.live():
                self.script.lines.append(f"expect({e.name}, v_{e.name}, {e.name!r})")
                assertions.assert_bitwise_equal(
                    np.asarray(e.array.clone()), e.value,
                    call=f"{e.name} (read through a clone) after {self.script_last()}")

        @invariant()
        @_step
        def dead_arrays_say_so_and_refuse_use(self):
            for e in [e for e in self.entries if e.state != "live"][-_DEAD_CHECKED:]:
                what = f"{e.name} after it was {e.state}"
                self.script.lines.append(f"expect_deleted({e.name}, {what!r})")
                assert e.array.is_deleted() is True, f"{what}: is_deleted() is False"
                raised = None
                try:
                    np.asarray(e.array)
                except Exception as err:  # the documented error: any Python exception
                    raised = err
                assert raised is not None, f"{what}: reading it returned instead of raising"

        @invariant()
        @_step
        def live_arrays_match_the_model(self):
            ids = {id(a) for a in client.live_arrays()}
            missing = [e.name for e in self.live() if id(e.array) not in ids]
            assert not missing, f"client.live_arrays() misses live arrays {missing}"
            dead = [e.name for e in self.entries if e.state != "live" and id(e.array) in ids]
            assert not dead, f"client.live_arrays() still holds deleted or donated {dead}"
            ours = {id(e.array) for e in self.entries} | self.baseline_ids
            # jaxlib makes per-shard arrays of a sharded one it reads: they hold its buffers
            held = {p for e in self.live() for p in _pointers(e.array)}
            strays = [a for a in client.live_arrays()
                      if id(a) not in ours and not _pointers(a) <= held]
            assert not strays, (f"client.live_arrays() holds {len(strays)} array(s) the "
                                f"sequence never made: {[a.shape for a in strays][:4]}")

        def script_last(self) -> str:
            steps = [ln for ln in self.script.lines if ln.startswith("step = ")]
            return steps[-1][7:] if steps else "setup"

        def teardown(self):
            for e in self.live():
                e.array.delete()
                e.state = "deleted"
            self.entries.clear()
            gc.collect()
            if self.unclean:
                return
            leaked = [a for a in client.live_arrays() if id(a) not in self.baseline_ids]
            assert not leaked, (f"{len(leaked)} array(s) alive after every array of the "
                                f"sequence was deleted: {[a.shape for a in leaked][:4]}")
            # a program compiled during the sequence may keep device memory (constants)
            # for as long as it is cached: the bytes are compared only when none was
            if self.bytes0 is not None and executables.compiles == self.compiles0:
                deadline = time.monotonic() + 5
                while _bytes_in_use(local) > self.bytes0 and time.monotonic() < deadline:
                    time.sleep(0.05)
                now = _bytes_in_use(local)
                assert now <= self.bytes0, (
                    f"memory_stats bytes_in_use {now} after the sequence, but "
                    f"{self.bytes0} before it: {now - self.bytes0} bytes leaked")

    return Sequences


def _thread_lines(calls: list[tuple[str, list[Entry], list[Entry]]]) -> list[str]:
    lines = ["results = {}", "def work(i, name, args, device):",
             "    exe = compiled(name, False, device)", "    start.wait()",
             "    results[i] = exe.execute(args)",
             f"start = threading.Barrier({len(calls)})", "pool = ["]
    for i, (name, args, _) in enumerate(calls):
        lines.append(f"    threading.Thread(target=work, args=({i}, {name!r}, "
                     f"[{', '.join(a.name for a in args)}], devices[{args[0].devices[0]}])),")
    lines += ["]", "[t.start() for t in pool]", "[t.join() for t in pool]"]
    for i, (name, args, made) in enumerate(calls):
        lines.append(f"{', '.join(e.name for e in made)}, = results[{i}]")
        lines.append(f"{', '.join('v_' + e.name for e in made)}, = reference({name!r})("
                     f"{', '.join('v_' + a.name for a in args)})")
    return lines


def _pointers(array: Any) -> set[int]:
    """The device buffer addresses of ``array``'s shards (empty once deleted)."""
    if array.is_deleted():
        return set()
    return {s.data.unsafe_buffer_pointer() for s in array.addressable_shards}


def _bytes_in_use(devices: list[Any]) -> int | None:
    """Sum of ``memory_stats()['bytes_in_use']`` over ``devices`` (bytes), or None when
    the client reports no memory statistics."""
    total = None
    for d in devices:
        stats = d.memory_stats() if hasattr(d, "memory_stats") else None
        if stats and "bytes_in_use" in stats:
            total = (total or 0) + int(stats["bytes_in_use"])
    return total


def run(client: Any, xc: Any, platform: str, devices: int, nodeid: str,
        run_settings: settings | None = None) -> None:
    """Run the state machine over ``client``; a failure carries its shrunk sequence as
    a standalone script (:func:`conformance.programs.sequence_script.attach`)."""
    cls = machine(client, xc, platform, devices)
    chosen = settings(run_settings or settings(), stateful_step_count=STEPS, deadline=None)
    try:
        run_state_machine_as_test(cls, settings=chosen)
    except BaseException as err:
        if cls.last is not None and not isinstance(err, KeyboardInterrupt):
            sequence_script.attach(err, cls.last.script, nodeid)
        raise


@pytest.mark.capability("donation")
def test_runtime_calls_in_sequence(client, xc, platform, request):
    """Sequences of puts, executions (donating or not), deletes, copies, reshards,
    reads, bursts and threads keep every array equal to its model, dead arrays dead,
    ``live_arrays()`` exact, and nothing leaked at the end."""
    run(client, xc, platform, client.local_device_count(), request.node.nodeid)
