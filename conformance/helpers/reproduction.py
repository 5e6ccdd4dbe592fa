"""One reproduction note per failure, attached by one context manager.

The note is data as well as text: :func:`reproduction` sets the failing
exception's ``pjrt_reproduction`` attribute to a :class:`Reproduction`, which the
pytest plugin records in the test's ``user_properties`` (read it back with
:func:`of`); the note added to the exception is what people see in pytest's output.

Besides the text, a failure carries its arrays as data (:meth:`Reproduction.arrays`,
``failures[].arrays`` in report.json): the inputs, and where an assertion helper
compared a result (:func:`compared`), the observed and expected arrays and the
assertion that rejected them. They feed the below-the-framework check
(:mod:`conformance.capi`) and the standalone reproductions
(:mod:`conformance.certification.rendering.repro`). A partitioned program also carries
its placement (:func:`placement`, ``failures[].arrays.sharding``), so that its
reproduction compiles it with the same mesh and partition count.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np

_MAX_PROGRAM_CHARS = 4000
ATTRIBUTE = "pjrt_reproduction"
COMPARED = "pjrt_compared"
#: Arrays larger than this (bytes) are not recorded as data (the text summary stays).
MAX_ARRAY_BYTES = 1 << 15


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """The call that failed, its inputs (``describe_inputs`` text, or None), the
    whole StableHLO program text (or None), copies of the input arrays (or None) and
    what :func:`compared` attached to the failure (or None); ``sharding``: the
    :func:`placement` of a partitioned program (None: one device); ``output_index``:
    which of the program's outputs the comparison took (None: not stated; a program
    of one output)."""

    call: str
    inputs: str | None = None
    program: str | None = None
    input_arrays: tuple[np.ndarray, ...] | None = None
    comparison: dict[str, Any] | None = None
    sharding: dict[str, Any] | None = None
    output_index: int | None = None

    def arrays(self) -> dict[str, Any] | None:
        """The failure's arrays as JSON data, or None when there are none (or one is
        over :data:`MAX_ARRAY_BYTES`): ``inputs`` (list of :func:`encode_array` dicts
        or None), and from :func:`compared` ``observed``, ``expected``, ``assertion``
        (the helper's name in :mod:`conformance.helpers.assertions`) and ``options``
        (its keyword arguments: numbers, booleans or encoded arrays), ``sharding``
        (:func:`placement`) for a partitioned program, and ``output_index`` (which
        output of a program of several was compared) when stated."""
        inputs = None
        if self.input_arrays is not None:
            inputs = [encode_array(a) for a in self.input_arrays]
            if any(x is None for x in inputs):
                inputs = None
        data: dict[str, Any] = {"inputs": inputs}
        if self.comparison is not None:
            data.update(self.comparison)
            if self.output_index is not None:
                data["output_index"] = int(self.output_index)
        if self.sharding is not None and any(v is not None for v in data.values()):
            data["sharding"] = self.sharding
        return data if any(v is not None for v in data.values()) else None

    def note(self) -> str:
        """The note shown under the failure (the program cut at 4000 characters)."""
        lines = [f"Reproduction: {self.call}"]
        if self.inputs is not None:
            lines.append(self.inputs)
        if self.program is not None:
            text = self.program if len(self.program) <= _MAX_PROGRAM_CHARS else (
                self.program[:_MAX_PROGRAM_CHARS] + "\n  ... (truncated)")
            lines.append("  program (StableHLO):\n" + text)
        return "\n".join(lines)


def describe_inputs(arrays: list[np.ndarray]) -> str:
    """One line per array: ``  argN: dtype[shape] = values`` (summarised past 32 elements)."""
    parts = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        text = np.array2string(a, threshold=32, max_line_width=120)
        parts.append(f"  arg{i}: {a.dtype}{list(a.shape)} = {text}")
    return "\n".join(parts)


def encode_array(a: Any) -> dict[str, Any] | None:
    """``a`` as JSON data: ``{"dtype": name, "shape": [...], "base64": C-order bytes}``
    (``name`` is numpy's or ml_dtypes', e.g. ``"bfloat16"``); None for an array over
    :data:`MAX_ARRAY_BYTES` or of object dtype."""
    a = np.asarray(a)
    if a.dtype.hasobject or a.nbytes > MAX_ARRAY_BYTES:
        return None
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "base64": base64.b64encode(a.tobytes()).decode("ascii")}  # C order


def decode_array(data: Any) -> np.ndarray:
    """The array of :func:`encode_array`. Raises ValueError naming ``data`` when it is
    not such a dict (unknown dtype, bad base64, size not matching the shape)."""
    try:
        dtype = np.dtype(getattr(ml_dtypes, data["dtype"], data["dtype"]))
        shape = tuple(int(n) for n in data["shape"])
        raw = base64.b64decode(data["base64"].encode("ascii"), validate=True)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as err:
        raise ValueError(f"decode_array: argument 'data' is not an encoded array "
                         f"({type(err).__name__}: {err})") from err


def compared(err: BaseException, out: Any, expected: Any, assertion: str,
             **options: Any) -> BaseException:
    """Attach the arrays an assertion helper compared to ``err`` and return it.

    ``out``: the observed array; ``expected``: what it was compared with;
    ``assertion``: the helper's name in :mod:`conformance.helpers.assertions`;
    ``options``: its keyword arguments other than ``call`` (numbers, booleans or
    arrays). Kept only when every array fits :data:`MAX_ARRAY_BYTES`.
    """
    arrays = {"observed": encode_array(out), "expected": encode_array(expected)}
    opts = {}
    for k, v in options.items():
        opts[k] = encode_array(v) if isinstance(v, np.ndarray) else v
        if opts[k] is None and v is not None:
            return err
    if None not in arrays.values():
        setattr(err, COMPARED, {**arrays, "assertion": assertion, "options": opts})
    return err


def of(err: BaseException) -> Reproduction | None:
    """The :class:`Reproduction` attached to ``err`` by :func:`reproduction`, if any."""
    found = getattr(err, ATTRIBUTE, None)
    return found if isinstance(found, Reproduction) else None


def _spec(spec: Any) -> list[Any]:
    """A PartitionSpec as JSON: one entry per dimension, None, an axis name or a list
    of axis names."""
    return [list(e) if isinstance(e, tuple) else e for e in tuple(spec)]


def placement(in_shardings: list[Any], out_sharding: Any) -> dict[str, Any]:
    """The placement of a partitioned program as JSON data: ``mesh_shape`` and
    ``axis_names`` of the mesh of ``in_shardings[0]`` (jax ``NamedSharding``s),
    ``device_ids`` (the mesh's device ids in C order), ``partitions`` (the mesh size:
    the program's ``num_partitions``), ``in_specs`` (one PartitionSpec per input, as
    :func:`_spec` lists) and ``out_spec`` (applied to every output); ``out_sharding`` a
    list (one sharding per output) adds ``out_specs``, one per output, and ``out_spec``
    is the first's. Raises ValueError when the shardings are not over one mesh."""
    mesh = in_shardings[0].mesh
    outs = list(out_sharding) if isinstance(out_sharding, (list, tuple)) else [out_sharding]
    if any(s.mesh.devices.shape != mesh.devices.shape for s in [*in_shardings, *outs]):
        raise ValueError("placement: arguments 'in_shardings' and 'out_sharding' must "
                         "share one mesh")
    found = {"mesh_shape": [int(n) for n in mesh.devices.shape],
             "axis_names": [str(a) for a in mesh.axis_names],
             "device_ids": [int(d.id) for d in mesh.devices.flat],
             "partitions": int(mesh.devices.size),
             "in_specs": [_spec(s.spec) for s in in_shardings],
             "out_spec": _spec(outs[0].spec)}
    if isinstance(out_sharding, (list, tuple)):
        found["out_specs"] = [_spec(s.spec) for s in outs]
    return found


@contextlib.contextmanager
def reproduction(call: str, *, program: str | None = None,
                 inputs: list[np.ndarray] | None = None,
                 sharding: dict[str, Any] | None = None,
                 output: int | None = None) -> Iterator[None]:
    """On an exception inside the block, attach the call, inputs and program text.

    ``call``: what the block does, e.g. ``"execute(neg, float32) on cpu:0"``;
    ``program``: the StableHLO text it runs; ``inputs``: its host arrays;
    ``sharding``: the :func:`placement` of a partitioned program (its reproduction
    then runs partitioned over the same devices); ``output``: for a program of several
    outputs, the index of the one the block compares (its reproduction compares that
    one, and cannot decide among several of the expected dtype and shape without
    it). The
    facts reach the certification report's failure entry as data and the pytest
    output as a note. Skips (pytest outcomes) pass through untouched.
    """
    try:
        yield
    except Exception as err:
        if of(err) is None:  # the innermost block names the call
            repro = Reproduction(call, None if inputs is None else describe_inputs(inputs),
                                 program, _copies(inputs),
                                 _comparison(err), sharding, output)
            setattr(err, ATTRIBUTE, repro)
            err.add_note(repro.note())
        raise


def _comparison(err: BaseException) -> dict[str, Any] | None:
    """What :func:`compared` attached to ``err`` or to one of its group's members."""
    found = getattr(err, COMPARED, None)
    if found is None and isinstance(err, BaseExceptionGroup):
        found = next((c for c in map(_comparison, err.exceptions) if c is not None), None)
    return found


def _copies(inputs: list[Any] | None) -> tuple[np.ndarray, ...] | None:
    """The inputs as they were at the failure (the test may change them afterwards)."""
    return None if inputs is None else tuple(np.array(a, copy=True) for a in inputs)
