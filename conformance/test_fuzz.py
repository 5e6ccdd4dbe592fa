"""Area fuzz: public functions given Hypothesis-drawn junk raise Python errors, never crash.

Each function is fuzzed in a child process (``isolated``), so a segfault costs
one test (``fail_crash``) instead of the run. Inside the child, any exception
other than TypeError, ValueError, OverflowError or ``XlaRuntimeError`` fails
the test too: users must get an error that names what they did wrong.
"""

from __future__ import annotations

import pytest

#: The errors a public function may raise on junk (both templates catch these).
_ALLOWED = "ALLOWED = (TypeError, ValueError, OverflowError, xc.XlaRuntimeError)"

_FUZZ = """
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
{allowed}
junk = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=24),
                 st.binary(max_size=64), st.lists(st.integers(-4, 64), max_size=4),
                 st.tuples(st.integers(-4, 64)), st.just(np.float32), st.just(device),
                 st.just(object()))
{setup}

@settings(max_examples={examples}, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(a={strategy_a}, b=junk)
def fuzz(a, b):
    try:
        {target}
    except ALLOWED:
        pass

fuzz()
print("FUZZ-OK")
"""

#: Mutations of one valid input are scanned over fixed seeds, not drawn: the input
#: (a serialized executable) differs between CPUs, so drawn seeds would make the
#: outcome depend on the machine; 200 seeds reach every region of the blob.
_SCAN = """
{allowed}
{setup}
for a in range({examples}):
    try:
        {target}
    except ALLOWED:
        pass
print("FUZZ-OK")
"""

_SERIALIZED = """
from conformance.programs import catalog, compiled_programs
text = compiled_programs.lowered_text("negate", catalog.ELEMENTWISE["negate"].fn,
                             (((4,), "float32"),), client)
blob = client.serialize_executable(client.compile_and_load(text, [device]))
def flip(data, seed):
    out = bytearray(data)
    for k in range(1 + seed % 4):
        i = (seed * 7919 + k * 104729) % len(out)
        out[i] ^= 1 + (seed >> 3) % 255
    return bytes(out)
"""

TARGETS = {
    "buffer_from_pyval": ("junk", "client.buffer_from_pyval(a, device)"),
    "buffer_from_pyval-device": ("junk", "client.buffer_from_pyval(np.zeros(2), a)"),
    "buffer_from_pyval-semantics": (
        "junk", "client.buffer_from_pyval(np.zeros(2), device, host_buffer_semantics=a)"),
    "compile_and_load": ("junk", "client.compile_and_load(a, [device])"),
    "compile_and_load-devices": ("junk", "client.compile_and_load('module {}', a)"),
    "deserialize_executable": ("st.binary(max_size=256)",
                               "client.deserialize_executable(a, [device])"),
    "deserialize_executable-mutated": (
        None, "client.deserialize_executable(flip(blob, a), [device])"),
    "Shape.array_shape": ("junk", "xc.Shape.array_shape(a, b)"),
    "dtype_to_etype": ("junk", "xc.dtype_to_etype(a)"),
    "execution_stream_id": ("junk", "xc.execution_stream_id(a).__enter__()"),
    "custom_call_targets": ("junk", "xc.custom_call_targets(a)"),
    "batched_block_until_ready": ("junk", "xc.batched_block_until_ready(a)"),
    "get_topology_for_devices": ("junk", "xc.get_topology_for_devices(a)"),
    "reorder_shards": ("junk", "xc.reorder_shards(a, b, xc.ArrayCopySemantics.ALWAYS_COPY)"),
    "get_distributed_runtime_client": ("junk", "xc.get_distributed_runtime_client(a, b)"),
}


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz_public_function(client, name, isolated):
    strategy, target = TARGETS[name]
    setup = _SERIALIZED if "blob" in target else ""
    if strategy is None:  # a scan over fixed mutation seeds
        snippet = _SCAN.format(allowed=_ALLOWED, setup=setup, examples=200, target=target)
    else:
        snippet = _FUZZ.format(allowed=_ALLOWED, setup=setup, examples=60, strategy_a=strategy,
                               target=target)
    out = isolated(snippet, device=client.local_devices()[0], call=f"fuzz {name}",
                   timeout=300)
    assert "FUZZ-OK" in out, f"fuzz {name} did not finish:\n{out[-2000:]}"
