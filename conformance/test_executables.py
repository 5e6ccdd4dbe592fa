"""Area executables: compile, load, serialize and inspect programs (the xla_client API:
``Client.compile``, ``compile_and_load``, ``serialize_executable``,
``deserialize_executable``; ``LoadedExecutable`` metadata and ``execute_sharded``).

Each test compiles for the device under test and checks the result of running
the program, or metadata that must agree with the program's arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

from conformance.helpers import assertions
from conformance.helpers import tolerances
from conformance.helpers.capabilities import optional_feature
from conformance.programs import compiled_programs
from runtime.xla_client import Executable, HostBufferSemantics

SEMANTICS = HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def _fma(a, b):
    return lax.add(lax.mul(lax.sin(a), b), a)


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.sin(a.astype(np.float64)) * b + a).astype(np.float32)


#: What a run of the program may differ from :func:`_reference` by (the table's number).
_TOL = tolerances.bound("fixed", np.float32, check="executable_round_trip")


def _args(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(2)]


def _text(client, args: list[np.ndarray]) -> str:
    avals = tuple((a.shape, a.dtype.name) for a in args)
    return compiled_programs.lowered_text("fma", _fma, avals, client)


def _run(client, exe, args, device) -> np.ndarray:
    bufs = [client.buffer_from_pyval(a, device, host_buffer_semantics=SEMANTICS) for a in args]
    out = exe.execute(bufs)
    assert len(out) == 1, f"execute returned {len(out)} outputs, but should be 1"
    got = next(iter(out[0].devices()))
    assert got == device, f"output on {got}, but should be on {device} (the program's device)"
    return np.asarray(out[0])


@pytest.mark.capability("compile_only")
def test_compile_gives_an_unloaded_executable_with_the_same_program(client, device):
    args = _args(8)
    text = _text(client, args)
    with optional_feature("compile_only", f"compile(fma, [{device}])"):
        exe = client.compile(text, [device])
    loaded = client.compile_and_load(text, [device])
    assert isinstance(exe, Executable), f"compile returned {type(exe).__name__}, not Executable"
    assert not hasattr(exe, "execute"), "an unloaded Executable must not offer execute()"
    unloaded_hlo = exe.hlo_modules()[0].to_string()
    assert "sine" in unloaded_hlo and "multiply" in unloaded_hlo, (
        f"Executable.hlo_modules() lacks the program's ops (sine, multiply):\n"
        f"{unloaded_hlo[:800]}")
    with optional_feature("memory_stats", "get_compiled_memory_stats()"):
        unloaded_args = exe.get_compiled_memory_stats().argument_size_in_bytes
        loaded_args = loaded.get_compiled_memory_stats().argument_size_in_bytes
    assert unloaded_args == loaded_args, (
        f"compile(...) reports argument_size_in_bytes={unloaded_args}, but compile_and_load of "
        f"the same program reports {loaded_args} [{device}]")
    # The unloaded program, loaded from its bytes, computes what compile_and_load's does.
    with optional_feature("serialization", "deserialize_executable(compile(...).serialize())"):
        reloaded = client.deserialize_executable(exe.serialize(), [device])
    assertions.assert_exact(_run(client, reloaded, args, device),
                            _run(client, loaded, args, device),
                            call=f"deserialize_executable(compile(...).serialize()) on {device}")


@pytest.mark.capability("serialization")
@given(n=st.sampled_from([1, 7, 64]))
def test_serialize_deserialize_execute_gives_the_same_result(client, device, n):
    args = _args(n)
    exe = client.compile_and_load(_text(client, args), [device])
    with optional_feature("serialization", "serialize_executable(exe)"):
        blob = client.serialize_executable(exe)
    assert isinstance(blob, bytes) and blob, "serialize_executable must return non-empty bytes"
    with optional_feature("serialization", "deserialize_executable(blob)"):
        again = client.deserialize_executable(blob, [device])
    call = f"deserialize_executable(serialize_executable(exe), [{device}]).execute"
    out = _run(client, again, args, device)
    assertions.assert_exact(out, _run(client, exe, args, device), call=call)
    assertions.assert_allclose(out, _reference(*args), rtol=_TOL.rtol, atol=_TOL.atol, call=call)


@pytest.mark.capability("serialization")
def test_deserialize_rejects_corrupt_bytes(client, device):
    exe = client.compile_and_load(_text(client, _args(4)), [device])
    with optional_feature("serialization", "serialize_executable(exe)"):
        blob = client.serialize_executable(exe)
    for bad in (b"garbage", b"\x00" * 64):
        with pytest.raises(ValueError, match="argument 'serialized'"):
            client.deserialize_executable(bad, [device])
    with pytest.raises(TypeError, match="argument 'serialized'"):
        client.deserialize_executable("not bytes", [device])
    with pytest.raises(ValueError, match="argument 'serialized'"):
        client.deserialize_executable(b"", [device])
    assert len(blob) > 64  # the real bytes were not consumed by the failed loads


def test_hlo_modules_contain_the_program_ops(client, device):
    exe = client.compile_and_load(_text(client, _args(4)), [device])
    modules = exe.hlo_modules()
    assert len(modules) >= 1, "hlo_modules() is empty, but should hold the compiled module"
    text = modules[0].to_string()
    for op in ("sine", "multiply", "add", "parameter"):
        assert op in text, f"hlo_modules()[0] lacks {op!r}:\n{text[:800]}"


@pytest.mark.capability("memory_stats")
@given(n=st.sampled_from([1, 16, 1000]))
def test_compiled_memory_stats_match_the_arguments(client, device, n):
    args = _args(n)
    exe = client.compile_and_load(_text(client, args), [device])
    with optional_feature("memory_stats", "get_compiled_memory_stats()"):
        stats = exe.get_compiled_memory_stats()
    fields = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
              "temp_size_in_bytes", "generated_code_size_in_bytes")
    negative = {f: getattr(stats, f) for f in fields if getattr(stats, f) < 0}
    assert not negative, f"compiled memory stats {negative} are negative [{stats}]"
    want = sum(a.nbytes for a in args)
    assert stats.argument_size_in_bytes == want, (
        f"argument_size_in_bytes={stats.argument_size_in_bytes}, but the two f32[{n}] "
        f"arguments hold {want} bytes")
    assert stats.output_size_in_bytes == args[0].nbytes, (
        f"output_size_in_bytes={stats.output_size_in_bytes}, but the f32[{n}] output holds "
        f"{args[0].nbytes} bytes")


@pytest.mark.capability("cost_analysis")
def test_cost_analysis_counts_the_flops_of_a_dot(client, device):
    m, k, n = 8, 16, 4
    text = compiled_programs.lowered_text("dot", lax.dot,
                                          (((m, k), "float32"), ((k, n), "float32")), client)
    exe = client.compile_and_load(text, [device])
    with optional_feature("cost_analysis", f"cost_analysis() of a dot on {device}"):
        cost = exe.cost_analysis()
    assert isinstance(cost, dict), f"cost_analysis() returned {type(cost).__name__}, not dict"
    if "flops" not in cost:
        pytest.skip(f"cost_analysis() has no 'flops' key on {client.platform} ({sorted(cost)})")
    assert cost["flops"] == pytest.approx(2 * m * k * n, rel=0.5), (
        f"cost_analysis()['flops']={cost['flops']}, but a {m}x{k} @ {k}x{n} dot is "
        f"{2 * m * k * n} flops")


def test_output_memory_kinds_name_the_default_memory(client, device):
    exe = client.compile_and_load(_text(client, _args(4)), [device])
    kinds = exe.get_output_memory_kinds()
    want = device.default_memory().kind
    assert kinds == [[want]], (
        f"get_output_memory_kinds()={kinds}, but should be [[{want!r}]] for one output in "
        f"the default memory of {device}")


def test_execute_sharded_with_tokens(client, device):
    args = _args(8)
    exe = client.compile_and_load(_text(client, args), [device])
    bufs = [client.buffer_from_pyval(a, device, host_buffer_semantics=SEMANTICS) for a in args]
    results = exe.execute_sharded(bufs, with_tokens=True)
    token = results.consume_token()
    token.block_until_ready()  # raises if the execution failed
    out = results.disassemble_into_single_device_arrays()
    assert len(out) == 1 and len(out[0]) == 1, (
        f"execute_sharded returned {len(out)} outputs, but should be 1 output on 1 device")
    assertions.assert_allclose(np.asarray(out[0][0]), _reference(*args), rtol=_TOL.rtol,
                               atol=_TOL.atol,
                               call=f"execute_sharded(with_tokens=True) on {device}")


def test_compile_rejects_bad_arguments(client, device):
    text = _text(client, _args(4))
    with pytest.raises(TypeError, match="argument 'computation'"):
        client.compile(42, [device])
    with pytest.raises(ValueError, match="argument 'computation'"):
        client.compile("module { this is not stablehlo", [device])
    with pytest.raises(ValueError, match="argument 'executable_devices'"):
        client.compile(text, [])
    with pytest.raises(TypeError, match="argument 'compile_options'"):
        client.compile(text, [device], compile_options="fast")
    with pytest.raises(TypeError, match="argument 'executable'"):
        client.serialize_executable(text)


def test_execution_stream_id_runs_programs_and_rejects_bad_ids(client, device):
    from runtime.xla_client import execution_stream_id

    args = _args(8)
    exe = client.compile_and_load(_text(client, args), [device])
    with execution_stream_id(3):
        with execution_stream_id(4):
            inner = _run(client, exe, args, device)
        outer = _run(client, exe, args, device)
    call = f"execute inside execution_stream_id on {device}"
    assertions.assert_allclose(inner, _reference(*args), rtol=_TOL.rtol, atol=_TOL.atol, call=call)
    assertions.assert_exact(outer, inner, call=call)
    with pytest.raises(ValueError, match="boom"):
        with execution_stream_id(5):
            raise ValueError("boom")  # the context exits cleanly through an error
    for bad, exc in [("3", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError),
                     (2**63, ValueError)]:
        with pytest.raises(exc, match="argument 'new_id'"):
            with execution_stream_id(bad):
                pass
