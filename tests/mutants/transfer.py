"""Mutation operator ``transfer``: host->device, copies, reorders, donation, collectives.

Wrong only above a size (the large-buffer DMA path), only for unaligned host memory,
only for one dtype or on the last device, only on a two-dimensional mesh; copies that
alias when they must not; reorders and batched copies to the wrong device; collectives
that reduce with the wrong op or permute nowhere.
"""

from __future__ import annotations

import functools

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client
from tests.mutants.stablehlo_rewrite import Mutation, forward_operands, inside, named, rename
from tests.mutants.base import adjusting_puts, rewriting, wrong_at, wrong_value
from tests.mutants.catalog import add
from tests.mutants.legacy_io import swap_semantics

_HBS = xc.HostBufferSemantics
_SEM = xc.ArrayCopySemantics


def _h2d(corrupt, doc):
    """A Client whose buffer_from_pyval stores ``corrupt(host array, device, client)``'s
    result (None: the array as it is)."""
    def adjust(client, argument, device, force_copy, semantics):
        if isinstance(argument, np.ndarray) and argument.size:
            target = device if device is not None else client.local_devices()[0]
            bad = corrupt(argument, target, client)
            argument = argument if bad is None else bad
        return argument, device, force_copy, semantics
    return adjusting_puts(adjust, doc)


def _last_element(host):
    return wrong_at(host, np.arange(host.size) == host.size - 1)


def above_bytes(n, host, device, client):
    return _last_element(host) if host.nbytes >= n else None


def unaligned(host, device, client):
    return _last_element(host) if host.ctypes.data % 64 else None


def tail_bytes(host, device, client):
    return _last_element(host) if host.size > 1 and host.nbytes % 64 else None


def dtype_only(name, host, device, client):
    return wrong_value(host) if host.dtype == np.dtype(name) else None


def last_device(host, device, client):
    return wrong_value(host) if device == client.local_devices()[-1] and \
        client.local_device_count() > 1 else None


def _semantics_client(old, new, doc):
    """buffer_from_pyval uses ``new`` host buffer semantics when asked for one of ``old``."""
    return adjusting_puts(lambda c, a, d, f, s: (a, d, f, new if s in old else s), doc)


IgnoresForceCopy = adjusting_puts(lambda c, a, d, f, s: (a, d, False, s),
                                  "buffer_from_pyval ignores force_copy=True (ZERO_COPY may "
                                  "then alias).")


def _put_ignoring_force_copy(aval, sharding, xs, devices, committed=True, force_copy=False,
                             *args, **kwargs):
    return xc.batched_device_put(aval, sharding, xs, devices, committed, False, *args, **kwargs)


def _put_with(pick):
    """batched_device_put with the shards ``pick(sharding, devices)`` says (indices) wrong."""
    def put(aval, sharding, xs, devices, *args, **kwargs):
        bad = set(pick(sharding, list(devices)))
        xs = [wrong_value(np.asarray(x)) if i in bad else x for i, x in enumerate(xs)]
        return xc.batched_device_put(aval, sharding, xs, devices, *args, **kwargs)
    return put


def _last_shard(sharding, devices):
    return [len(devices) - 1] if len(devices) > 1 else []


def _two_dimensional_mesh(sharding, devices):
    mesh = getattr(sharding, "mesh", None)
    shape = getattr(getattr(mesh, "devices", None), "shape", ())
    return [0] if sum(1 for s in shape if s > 1) >= 2 else []


def _reorder_in_place(x, dst, semantics):
    """reorder_shards returns its input unchanged (still on the source's devices)."""
    return x


def _copy_to_reversed_devices(arrays, device_lists, shardings, semantics):
    outs = xc.batched_copy_array_to_devices_with_sharding(arrays, device_lists, shardings,
                                                          semantics)
    return [_rotated_data(o) for o in outs]


def _rotated_data(arr):
    """``arr`` with its last shard's data wrong (a copy that wrote the wrong device)."""
    shards = list(arr.addressable_shards)
    if len(shards) < 2 or not arr.size:
        return arr
    host = np.array(np.asarray(arr), copy=True)
    index = shards[-1].index
    host[index] = wrong_value(host[index])
    from conformance.helpers import sharding_helpers

    return sharding_helpers.put_sharded(host, arr.sharding)


def _reduction_as_max(collective: str) -> Mutation:
    """The ``stablehlo.add`` of every ``collective``'s reduction body as maximum."""
    return Mutation(inside((collective,), named("stablehlo.add")),
                    rename("stablehlo.maximum"))


def _register():
    rt, hbs = "test_transfer", "test_host_buffer_semantics"
    puts = [("xfer-put-over-1mib", functools.partial(above_bytes, 1 << 20),
             "Host arrays of 1 MiB or more arrive with their last element wrong.",
             f"{rt}: test_large_array_64mib; {hbs}"),
            ("xfer-put-unaligned", unaligned,
             "Host arrays not 64-byte aligned arrive with their last element wrong.",
             f"{rt}: test_round_trip_any_layout or (test_round_trip_bit_exact and cpu:0-int8)"),
            ("xfer-put-tail-bytes", tail_bytes,
             "Arrays whose size is not a multiple of 64 bytes lose their last element.",
             f"{rt}: test_round_trip_bit_exact and cpu:0-int32"),
            ("xfer-put-bfloat16-only", functools.partial(dtype_only, "bfloat16"),
             "Only bfloat16 host arrays arrive wrong.",
             f"{rt}: test_round_trip_bit_exact and cpu:0-bfloat16"),
            ("xfer-put-last-device", last_device, "Puts to the last device arrive wrong.",
             f"{rt}: test_round_trip_bit_exact and cpu:1-int32")]
    for name, corrupt, doc, targets in puts:
        add(name, "transfer", _h2d(corrupt, doc), targets)
    add("xfer-until-transfer-aliases", "transfer",
        _semantics_client((_HBS.IMMUTABLE_UNTIL_TRANSFER_COMPLETES,), _HBS.ZERO_COPY,
                          "IMMUTABLE_UNTIL_TRANSFER_COMPLETES puts alias the host array."),
        f"{hbs}: test_immutable_until_transfer_completes")
    add("xfer-during-call-aliases", "transfer",
        _semantics_client((_HBS.IMMUTABLE_ONLY_DURING_CALL,), _HBS.ZERO_COPY,
                          "IMMUTABLE_ONLY_DURING_CALL puts alias the host array."),
        f"{hbs}: test_immutable_only_during_call_copies")
    add("xfer-force-copy-ignored", "transfer", IgnoresForceCopy,
        f"{hbs}: test_zero_copy and force_copy")
    api_only = [  # (name, targets, what is wrong, module functions replaced)
        ("xfer-batched-put-force-copy-ignored",
         "test_sharding: test_force_copy_detaches_from_the_host_array",
         "batched_device_put ignores force_copy=True.",
         {"batched_device_put": _put_ignoring_force_copy}),
        ("xfer-batched-put-last-shard",
         "test_sharding: test_batched_device_put_shards_hold_their_slices and int32",
         "batched_device_put stores the last device's shard wrong.",
         {"batched_device_put": _put_with(_last_shard)}),
        ("xfer-reorder-in-place", "test_sharding: test_reorder_shards_preserves_data",
         _reorder_in_place.__doc__, {"reorder_shards": _reorder_in_place}),
        ("xfer-batched-copy-wrong-shard",
         "test_copy_semantics: test_always_copy_is_independent and batched_copy",
         "batched copies write the last shard wrong.",
         {"batched_copy_array_to_devices_with_sharding": _copy_to_reversed_devices}),
        ("xfer-donate-copies", "test_copy_semantics: test_donate_input_deletes_the_input",
         "DONATE_INPUT copies (ALWAYS_COPY): the input survives.",
         swap_semantics(_SEM.DONATE_INPUT, _SEM.ALWAYS_COPY))]
    for name, targets, doc, api in api_only:
        add(name, "transfer", Client, targets, doc=doc, api=api)
    add("xfer-batched-put-2d-mesh", "transfer", Client,
        "test_sharding: test_batched_device_put_shards_hold_their_slices and int32",
        doc="batched_device_put is wrong only over a two-dimensional mesh (4 devices).",
        api={"batched_device_put": _put_with(_two_dimensional_mesh)}, devices=4)
    add("coll-all-reduce-max", "transfer",
        rewriting("coll-all-reduce-max", _reduction_as_max("stablehlo.all_reduce"),
                  "all_reduce sums as max."),
        "test_collectives: test_collective and all_reduce")
    add("coll-reduce-scatter-max", "transfer",
        rewriting("coll-reduce-scatter-max", _reduction_as_max("stablehlo.reduce_scatter"),
                  "reduce_scatter sums as max."),
        "test_collectives: test_collective and reduce_scatter")
    add("coll-permute-nowhere", "transfer",
        rewriting("coll-permute-nowhere", Mutation(named("stablehlo.collective_permute"),
                                                   forward_operands),
                  "collective_permute sends every shard to itself."),
        "test_collectives: test_collective and collective_permute")


_register()
