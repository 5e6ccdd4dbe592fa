"""The first broken backends (transfers, execute, copy semantics), as catalog mutants."""

from __future__ import annotations

import numpy as np

from runtime import xla_client as xc
from runtime._client import Client
from tests.mutants.stablehlo_rewrite import Mutation, forward_operands, named
from tests.mutants.base import adjusting_puts, transforming
from tests.mutants.catalog import add

_SEM = xc.ArrayCopySemantics
ROUND_TRIP = "test_round_trip_bit_exact and (int32 or float32)"


def _flip_first(client, argument, device, force_copy, semantics):
    host = np.array(argument, copy=True)
    if host.size and host.dtype.itemsize in (1, 2, 4, 8) and host.dtype != np.bool_:
        flat = host.reshape(-1).view(f"u{host.dtype.itemsize}")
        flat[0] ^= 1
    elif host.size and host.dtype == np.bool_:
        host.reshape(-1)[0] = ~host.reshape(-1)[0]
    return host, device, force_copy, semantics


FlipOneElement = adjusting_puts(_flip_first, "buffer_from_pyval stores a copy whose first "
                                "element has its lowest bit flipped.")
WrongDtype = adjusting_puts(lambda c, a, d, f, s: (np.asarray(a).astype(np.float32), d, f, s),
                            "buffer_from_pyval silently converts every array to float32.")


def _off_by_one(site, inputs, outputs):
    """+1 on the first element of every numeric output (execute: every device;
    execute_sharded: the last device only)."""
    out = []
    for o in outputs:
        if o.size and o.dtype.kind in "iuf" and site.index == site.count - 1:
            o = o.copy()
            o.reshape(-1)[0] += 1
        out.append(o)
    return out


class WrongProcessIndex(Client):
    """Claims to be process 1 of a single-process client (its devices say process 0)."""

    def process_index(self):
        return 1


def _rolled_reorder(x, dst, semantics):
    from conformance.helpers import sharding_helpers

    out = xc.reorder_shards(x, dst, semantics)
    return sharding_helpers.put_sharded(np.roll(np.asarray(out), 1), dst)


def swap_semantics(old, new):
    """reorder_shards and batched copies that use ``new`` when asked for ``old``."""
    def reorder(x, dst, semantics):
        return xc.reorder_shards(x, dst, new if semantics == old else semantics)

    def copy(arrays, device_lists, shardings, semantics):
        return xc.batched_copy_array_to_devices_with_sharding(
            arrays, device_lists, shardings, [new if s == old else s for s in semantics])
    return {"reorder_shards": reorder, "batched_copy_array_to_devices_with_sharding": copy}


def _rotated_put(aval, sharding, xs, devices, *args, **kwargs):
    return xc.batched_device_put(aval, sharding, list(xs[1:]) + list(xs[:1]), devices, *args,
                                 **kwargs)


def _copy_keeping_memory_kind(arrays, device_lists, shardings, semantics):
    kept = [s.with_memory_kind(a.sharding.memory_kind) for a, s in zip(arrays, shardings)]
    return xc.batched_copy_array_to_devices_with_sharding(arrays, device_lists, kept, semantics)


ALL_REDUCE_ALONE = Mutation(named("stablehlo.all_reduce"), forward_operands)
ALIASING = "tf.aliasing_output"


def _aliases(op) -> bool:
    if op.name != "func.func" or "arg_attrs" not in op.attributes:
        return False
    return any(ALIASING in d for d in _arg_attrs(op))


def _arg_attrs(op) -> list:
    from jaxlib.mlir import ir

    return [ir.DictAttr(a) for a in ir.ArrayAttr(op.attributes["arg_attrs"])]


def _drop_aliasing(op) -> None:
    """Every argument's ``tf.aliasing_output`` attribute removed."""
    from jaxlib.mlir import ir

    per_argument = [[d[i] for i in range(len(d))] for d in _arg_attrs(op)]
    kept = [ir.DictAttr.get({a.name: a.attr for a in attrs if a.name != ALIASING})
            for attrs in per_argument]
    op.attributes["arg_attrs"] = ir.ArrayAttr.get(kept)


def _register():
    from tests.mutants.base import rewriting

    add("broken-flip", "transfer", FlipOneElement, f"test_transfer: {ROUND_TRIP}")
    add("broken-dtype", "transfer", WrongDtype, f"test_transfer: {ROUND_TRIP}")
    add("broken-execute", "output", transforming(_off_by_one, _off_by_one.__doc__),
        "test_execute: test_elementwise and (add-int32 or multiply-float32)")
    add("broken-process-index", "jaxlib_api", WrongProcessIndex,
        "test_registry: test_local_devices_partition_the_global_list")
    api_only = [  # (name, kind, targets, what is wrong, module functions replaced)
        ("broken-put", "transfer",
         "test_sharding: test_batched_device_put_shards_hold_their_slices and int32",
         "batched_device_put puts each shard on the next device.",
         {"batched_device_put": _rotated_put}),
        ("broken-reorder", "transfer", "test_sharding: test_reorder_shards_preserves_data",
         "reorder_shards returns the data rotated by one element.",
         {"reorder_shards": _rolled_reorder}),
        ("broken-donate", "transfer", "test_copy_semantics: test_donate_input_deletes_the_input",
         "DONATE_INPUT behaves as REUSE_INPUT: the input survives.",
         swap_semantics(_SEM.DONATE_INPUT, _SEM.REUSE_INPUT)),
        ("broken-always-copy", "transfer", "test_copy_semantics: test_always_copy_is_independent",
         "ALWAYS_COPY behaves as REUSE_INPUT: the result may share the input's buffers.",
         swap_semantics(_SEM.ALWAYS_COPY, _SEM.REUSE_INPUT)),
        ("broken-memory-kind", "placement",
         "test_memory_kinds: test_copy_between_memory_kinds and device-pinned_host",
         "Copies stay in the source's memory kind whatever the destination asks for.",
         {"batched_copy_array_to_devices_with_sharding": _copy_keeping_memory_kind})]
    for name, kind, targets, doc, api in api_only:
        add(name, kind, Client, targets, doc=doc, api=api)
    add("broken-all-reduce", "transfer",
        rewriting("broken-all-reduce", ALL_REDUCE_ALONE,
                  "all_reduce programs run with every device alone."),
        "test_collectives: test_collective and all_reduce")
    add("broken-aliasing", "transfer",
        rewriting("broken-aliasing", Mutation(_aliases, _drop_aliasing),
                  "Programs lose their input/output aliasing: donated inputs "
                  "survive execution."),
        "test_copy_semantics: test_donation_through_input_output_aliasing")


_register()
