"""A sequence of runtime calls written down as it runs: a standalone reproduction.

The sequences area (``conformance/test_sequences.py``) drives the ``runtime`` API with a
Hypothesis state machine. Each step it takes is written here twice: the runtime call
(``a3 = client.buffer_from_pyval(...)``) and its NumPy model (``v3 = values(...)``),
and each check it makes after the step (``expect(a3, v3)``). When the machine fails,
Hypothesis shrinks the sequence and replays the shortest one; :func:`attach` puts that
replay's :class:`Script` on the failure, :func:`of` reads it back into
``failures[].sequence`` of report.json, and the bundle writes ``script`` as
``repro/<test>.py`` (:mod:`conformance.certification.rendering.repro`).

The script needs numpy, jax (to lower the programs) and this project's ``runtime``
package; never pytest, Hypothesis or the suite. Its exit status: 0 fixed (every step
matched its model), 1 present (a step raised, or an array differed from its model),
2 cannot run (an import or the client failed, too few devices), each with one line.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

from conformance.programs import sequence_pool
from runtime import xla_client

ATTRIBUTE = "_pjrt_sequence"
#: Lines of a script kept in report.json: a failing sequence shrinks to a few dozen.
MAX_LINES = 2000

_HEADER = '''"""Standalone reproduction: {nodeid}, a sequence of runtime calls that
failed on platform {platform!r} ({devices} device(s) asked for). Every step is a runtime
call followed by its NumPy model; expect() compares an array, read through a fresh
clone, with its model bit for bit. Exit status: 0 fixed, 1 present, 2 cannot run."""
import sys
import threading

import numpy as np

try:
    import jax
    from jax import lax
    from jax import numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
    from runtime import xla_bridge, xla_client
except ImportError as err:
    print(f"cannot run: {{err}}")
    sys.exit(2)

I32 = np.int32
PLATFORM, DEVICES, N = {platform!r}, {devices}, {n}
PROGRAMS = {programs!r}


{helpers}
def open_client():
    if PLATFORM == "cpu":
        return xla_client.make_cpu_client(num_devices=DEVICES)
    return xla_bridge.get_backend(PLATFORM)


def compiled(name, donate, device):
    source, arity, _, _ = PROGRAMS[name]
    fn = eval(source, {{"jnp": jnp, "lax": lax}})
    avals = [jax.ShapeDtypeStruct((N, N), jnp.int32)] * arity
    text = jax.jit(fn, donate_argnums=(0,) if donate else ()).lower(*avals).as_text()
    return client.compile_and_load(text, [device])


def reference(name):
    return eval(PROGRAMS[name][3], {{"np": np, "I32": I32, "_dus": _dus}})


class Present(Exception):
    pass


def expect(array, value, what=""):
    got = np.asarray(array.clone())
    if got.dtype != value.dtype or got.shape != value.shape or not np.array_equal(got, value):
        bad = np.argwhere(got != value)[:3].tolist() if got.shape == value.shape else []
        raise Present(f"{{what or 'an array'}} differs from its model (first differing "
                      f"indices {{bad}})")


def expect_read(array, value):
    got = np.asarray(array)
    if got.dtype != value.dtype or got.shape != value.shape or not np.array_equal(got, value):
        raise Present("a host read differs from the model")


def expect_deleted(array, what):
    if not array.is_deleted():
        raise Present(f"{{what}}: is_deleted() is False")
    try:
        np.asarray(array)
    except Exception:
        return
    raise Present(f"{{what}}: reading it returned instead of raising")


try:
    client = open_client()
    devices = client.local_devices()
    if len(devices) < DEVICES:
        raise RuntimeError(f"needs {{DEVICES}} devices, the client has {{len(devices)}}")
except Exception as err:
    print(f"cannot run: {{type(err).__name__}}: {{err}}")
    sys.exit(2)

step = "setup"
try:
'''

_FOOTER = '''except Present as err:
    print(f"present: after {step}: {err}")
    sys.exit(1)
except Exception as err:
    print(f"present: {step} raised {type(err).__name__}: {str(err)[:200]}")
    sys.exit(1)
print("fixed: every step matched its model")
sys.exit(0)
'''


# -- placement: used by the state machine and copied into every script ------------------
def split_rows(blocks):
    """The sharding that puts row block i of an array on ``blocks[i]`` (a 1-D mesh)."""
    return NamedSharding(Mesh(np.array(blocks), ("x",)), PartitionSpec("x"))


def put_split(h, blocks):
    """``batched_device_put`` of ``h`` split by rows over ``blocks`` (copies of the slices)."""
    sharding = split_rows(blocks)
    index = sharding.devices_indices_map(h.shape)
    shards = [np.array(h[index[d]], copy=True) for d in blocks]
    aval = jax.core.ShapedArray(h.shape, h.dtype)
    return xla_client.batched_device_put(aval, sharding, shards, list(blocks), True, False)


def reordered_rows(order, blocks):
    """The sharding over the device list ``order`` (a permutation of ``blocks``) under
    which ``blocks[i]`` keeps row block i: the destination ``reorder_shards`` expects."""
    proto = xla_client.OpSharding()
    proto.type = xla_client.OpSharding.Type.OTHER
    proto.tile_assignment_dimensions = [len(order), 1]
    position = {d.id: i for i, d in enumerate(order)}
    proto.tile_assignment_devices = [position[d.id] for d in blocks]
    return xla_client.GSPMDSharding(list(order), xla_client.HloSharding.from_proto(proto))


def copy_to(device, array, semantics):
    """``batched_copy_array_to_devices_with_sharding`` of one array to ``device``."""
    return xla_client.batched_copy_array_to_devices_with_sharding(
        [array], [xla_client.DeviceList((device,))], [SingleDeviceSharding(device)],
        [semantics])[0]


PLACEMENT = (split_rows, put_split, reordered_rows, copy_to)


@dataclasses.dataclass
class Script:
    """The steps of one state machine run. ``platform``: the registry name the
    script opens; ``devices``: the devices it needs (CPU: ``--cpu-devices``); ``n``:
    the arrays' side (``int32[n, n]``)."""

    platform: str
    devices: int
    n: int = 0
    lines: list[str] = dataclasses.field(default_factory=list)

    def step(self, title: str, *lines: str) -> None:
        """One step: its title (printed when it fails) and its Python lines."""
        self.lines.append(f"step = {title!r}")
        self.lines.extend(lines)

    def text(self, nodeid: str) -> str:
        """The whole script, standalone (see the module docstring)."""
        programs = {k: (p.source, p.arity, p.outputs, p.reference)
                    for k, p in sequence_pool.POOL.items()}
        helpers = "".join(inspect.getsource(f) + "\n\n"
                          for f in (*sequence_pool.HELPERS, sequence_pool.values, *PLACEMENT))
        body = self.lines[:MAX_LINES] or ["pass"]
        if len(self.lines) > MAX_LINES:
            body.append(f"# ... {len(self.lines) - MAX_LINES} more lines not kept")
        return (_HEADER.format(nodeid=nodeid, platform=self.platform, devices=self.devices,
                               n=self.n, programs=programs, helpers=helpers)
                + "".join(f"    {ln}\n" for ln in body) + _FOOTER)


def attach(err: BaseException, script: Script, nodeid: str) -> None:
    """Note on the failure ``err`` of test ``nodeid`` that its sequence is kept, and
    keep ``script``'s text."""
    err.add_note(f"the failing sequence ({len(script.lines)} lines) is written as a "
                 f"standalone script: repro/<test>.py in the bundle")
    setattr(err, ATTRIBUTE, {"platform": script.platform, "devices": script.devices,
                             "n": script.n, "lines": len(script.lines),
                             "script": script.text(nodeid)})


def of(err: BaseException) -> dict[str, Any] | None:
    """``failures[].sequence`` of ``err``: ``{"platform", "devices", "n", "lines",
    "script"}`` (``script``: the standalone reproduction's text), or None."""
    found = getattr(err, ATTRIBUTE, None)
    return found if isinstance(found, dict) else None
