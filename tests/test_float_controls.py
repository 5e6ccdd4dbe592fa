"""Self-tests of declared float controls (``--float-controls``): the declaration's parser
and expected results, and ``test_denormals_as_declared`` failing on a backend that does
not compute as it declares, while jaxlib's CPU client passes with its own declaration."""

import json
import re

import ml_dtypes
import numpy as np
import pytest

from conformance.helpers import float_control_modes
from tests.mutants import CATALOG  # imported once, before pytester snapshots sys.modules

SELECT = "test_denormals_as_declared"


def test_parse_presets_pairs_and_auto():
    assert float_control_modes.parse("auto") is None
    assert float_control_modes.parse("xla-cpu") is float_control_modes.XLA_CPU
    assert float_control_modes.parse(" ieee ") is float_control_modes.IEEE
    got = float_control_modes.parse("float32=ftz+daz, float64=ftz")
    assert got.mode("float32") == "ftz+daz" and got.mode("float64") == "ftz"
    assert got.mode("float16") == "preserve" and got.mode("bfloat16") == "preserve"
    assert got.flushes_results("float64") and not got.flushes_inputs("float64")


@pytest.mark.parametrize("bad", ["", "float32", "float32=flush", "int8=ftz", "xla-gpu",
                                 "float32=ftz,,"])
def test_parse_rejects_bad_values_naming_the_option(bad):
    with pytest.raises(ValueError, match="--float-controls"):
        float_control_modes.parse(bad)


def test_declaration_must_cover_every_width_with_a_known_mode():
    with pytest.raises(ValueError, match="'modes'"):
        float_control_modes.FloatControls({"float32": "ftz"}, "x")
    with pytest.raises(ValueError, match="unknown mode"):
        float_control_modes.FloatControls({w: "flush" for w in float_control_modes.WIDTHS}, "x")
    with pytest.raises(KeyError, match="float8"):
        float_control_modes.IEEE.mode("float8_e4m3fn")


@pytest.mark.parametrize("name", float_control_modes.WIDTHS)
def test_expected_flushes_only_the_probed_subnormal(name):
    dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    x = np.array([tiny, -tiny, 1.0], np.float64).astype(dtype)
    exact = np.array([tiny / 2, -tiny / 2, 0.5], np.float64).astype(dtype)
    result_flush = float_control_modes.parse(f"{name}=ftz")
    got = float_control_modes.expected(x, exact, result_flush, flushed_input=False)
    assert got.astype(np.float64).tolist() == [0.0, 0.0, 0.5]
    assert np.signbit(got.astype(np.float64)).tolist() == [False, True, False]
    # the subnormal is the input: a result-only (FTZ) declaration keeps it
    assert float_control_modes.expected(exact, x, result_flush, flushed_input=True) is x
    daz = float_control_modes.expected(
        exact, x, float_control_modes.parse(f"{name}=daz"), flushed_input=True)
    assert np.signbit(daz.astype(np.float64)).tolist() == [False, True, False]
    assert daz.astype(np.float64)[:2].tolist() == [0.0, 0.0]
    assert float_control_modes.expected(
        x, exact, float_control_modes.IEEE, flushed_input=False) is exact
    with pytest.raises(TypeError, match="'x'"):
        float_control_modes.expected(np.zeros(2, np.int32), np.zeros(2, np.int32),
                                     float_control_modes.IEEE, False)


def _statuses(doc):
    return {r["test_id"].rsplit("[", 1)[1].rstrip("]"): r["status"] for r in doc["results"]}


def test_jaxlib_cpu_client_computes_as_it_declares(run_suite, pytester):
    result, doc = run_suite("cpu", "-k", SELECT, devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    assert set(_statuses(doc)) == set(float_control_modes.WIDTHS), _statuses(doc)
    assert set(_statuses(doc).values()) == {"pass"}, result.stdout.str()[-3000:]
    # the report states the declaration the checks used: auto, resolved for this client
    assert doc["float_controls"] == float_control_modes.record(
        float_control_modes.for_platform(None, "cpu", False))
    assert doc["float_controls"]["modes"]["float32"] == "ftz+daz"
    assert doc["float_controls"]["source"] == "auto: jaxlib's built-in CPU client"
    md = (pytester.path / "report" / "report.md").read_text()
    assert "- Float controls (declared denormal handling): bfloat16 ftz+daz, float16 " \
           "preserve, float32 ftz+daz, float64 ftz+daz (auto: jaxlib's built-in CPU client)" in md


def test_declaring_preservation_fails_a_backend_that_flushes(run_suite):
    """jaxlib's CPU client flushes bfloat16/float32/float64: declared ``ieee`` it fails
    those three, and float16 (which it keeps) still passes."""
    result, doc = run_suite("cpu", "-k", SELECT, "--float-controls=ieee", devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    assert _statuses(doc) == {"bfloat16": "fail_wrong_result", "float16": "pass",
                              "float32": "fail_wrong_result", "float64": "fail_wrong_result"}
    assert any("declared float32=preserve" in f["message"] for f in doc["failures"]), \
        [f["message"][:300] for f in doc["failures"]]
    # the reproduction command carries the declaration the verdict depended on
    assert all("--float-controls=ieee" in json.dumps(f) for f in doc["failures"])
    assert doc["float_controls"] == {"modes": {w: "preserve" for w in float_control_modes.WIDTHS},
                                     "source": "ieee"}


def test_for_platform_resolves_auto_per_client():
    assert float_control_modes.for_platform(
        None, "cpu", False).modes == float_control_modes.XLA_CPU.modes
    assert float_control_modes.for_platform(
        None, "cpu", True).modes == float_control_modes.IEEE.modes    # a CPU plugin
    assert float_control_modes.for_platform(
        None, "cuda", False).modes == float_control_modes.IEEE.modes
    assert float_control_modes.for_platform(
        float_control_modes.XLA_CPU, "cuda", True) is float_control_modes.XLA_CPU
    assert float_control_modes.record(float_control_modes.XLA_CPU) == {
        "modes": dict(float_control_modes.XLA_CPU.modes), "source": "xla-cpu"}


@pytest.mark.parametrize("mutant, failing, fragment", [
    # declares FTZ+DAZ (auto: a jaxlib CPU client) but the last device keeps subnormals
    ("out-denormals-ieee-last-device", {"bfloat16", "float32", "float64"},
     "declared float32=ftz+daz"),
    # declares float16=preserve (auto) but flushes subnormal results
    ("out-flush-subnormals", {"float16"}, "declared float16=preserve"),
], ids=["ftz-on-some-devices-only", "preserve-declared-but-flushed"])
def test_check_fails_on_a_backend_not_computing_as_declared(run_suite, mutant, failing,
                                                            fragment):
    assert CATALOG[mutant].kind == "output"
    result, doc = run_suite(mutant, "-k", SELECT, devices=2)
    assert doc is not None, result.stdout.str()[-3000:]
    statuses = _statuses(doc)
    assert {k for k, v in statuses.items() if v == "fail_wrong_result"} == failing, statuses
    assert {v for k, v in statuses.items() if k not in failing} == {"pass"}, statuses
    messages = [f["message"] for f in doc["failures"]]
    assert any(fragment in m for m in messages), [m[:300] for m in messages]
    if mutant == "out-denormals-ieee-last-device":  # only the last of 2 devices is wrong
        assert all(re.search(r" on \S*1: declared", m) for m in messages), \
            [m[:300] for m in messages]


def test_a_bad_declaration_is_a_usage_error(run_suite):
    result, doc = run_suite("cpu", "-k", SELECT, "--float-controls=float32=flush", devices=2)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stderr.str()[-2000:]
    assert "--float-controls" in result.stderr.str()


# -- one resolution, passed into every check that may accept a flushed subnormal ----------

def test_the_session_resolves_the_declaration_once(monkeypatch):
    """``SessionState.float_controls`` resolves ``--float-controls`` once, from the facts
    of the client under test; the fixture and the report get that one object."""
    import types

    from conformance.session import session_state
    from conformance.session.run_options import RunOptions

    calls = []
    real = float_control_modes.for_platform
    monkeypatch.setattr(float_control_modes, "for_platform", lambda *a: calls.append(a) or real(*a))
    state = session_state.SessionState(RunOptions(float_controls="auto"),
                                       types.SimpleNamespace(platform="cpu", cpu_devices=2))
    assert state.float_controls() is None            # no client described yet
    state.platform_info = {"name": "cpu", "using_pjrt_c_api": False}
    first = state.float_controls()
    assert first.modes == float_control_modes.XLA_CPU.modes and state.float_controls() is first
    state.platform_info = {"name": "cuda", "using_pjrt_c_api": True}
    assert state.float_controls() is first and len(calls) == 1


def test_the_declaration_is_resolved_in_one_place_only():
    """``for_platform`` (the resolution of ``auto``) is called from the session state and
    nowhere else under conformance/ (it was: the fixture and the report, each its own)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "conformance"
    callers = sorted(
        str(p.relative_to(root)) for p in root.rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == "for_platform"
                                        or getattr(n.func, "id", None) == "for_platform"))
    assert callers == ["session/session_state.py"], callers
    assert not hasattr(float_control_modes, "for_client")


F32 = np.float32
TINY = float(np.finfo(F32).tiny)
#: float32 flushes under these, keeps subnormals under IEEE.
FLUSHING, FTZ_ONLY = float_control_modes.XLA_CPU, float_control_modes.parse("float32=ftz")


def _execute_exact(name):
    def check(controls, flushed):
        """test_execute's check of an IEEE-defined op: tiny * 0.5 (a subnormal)."""
        from conformance import test_execute
        from conformance.helpers import dtype_helpers
        from conformance.programs import catalog
        op, dt = catalog.ELEMENTWISE["multiply"], dtype_helpers.BY_NAME[name]
        tiny = float(ml_dtypes.finfo(dt.dtype).tiny)
        args = [np.array([tiny, -tiny]).astype(dt.dtype), np.full(2, 0.5, dt.dtype)]
        expected = test_execute._reference(op, dt, args)
        out = float_control_modes.flushed(expected, FLUSHING, inputs=False) if flushed else expected
        test_execute._check(op, dt, args, out, expected, "c", controls)
    check.__name__ = f"_execute_exact_{name}"
    return check


def _elementwise_special(controls, flushed):
    """test_kernels_elementwise's special-value check (IEEE result, or flushed as
    declared)."""
    from conformance import test_kernels_elementwise
    from conformance.programs import catalog
    args = [np.array([TINY, -TINY], F32), np.full(2, 0.5, F32)]
    exact = (args[0] * args[1]).astype(F32)
    out = float_control_modes.flushed(exact, FLUSHING, inputs=False) if flushed else exact
    test_kernels_elementwise._check_ieee_or_flushed(
        catalog.ELEMENTWISE["multiply"], out, args, F32, "c", controls)


def _elementwise_daz(controls, flushed):
    """The same check on a subnormal input read as zero: ``s * 4`` is normal."""
    from conformance import test_kernels_elementwise
    from conformance.programs import catalog
    args = [np.array([TINY / 2, -TINY / 2], F32), np.full(2, 4.0, F32)]
    out = np.zeros(2, F32) * np.sign(args[0]) if flushed else (args[0] * args[1]).astype(F32)
    test_kernels_elementwise._check_ieee_or_flushed(catalog.ELEMENTWISE["multiply"],
                                                    out.astype(F32), args, F32, "c", controls)


def _convert_float(controls, flushed):
    """test_kernels_convert: float64 1e-40 -> float32 (a float32 subnormal)."""
    from conformance import test_kernels_convert
    from conformance.helpers import dtype_helpers
    x = np.array([1e-40, -1e-40, 1.0])
    out = np.array([0.0, -0.0, 1.0], F32) if flushed else x.astype(F32)
    test_kernels_convert._check(
        out, x, dtype_helpers.BY_NAME["float64"], dtype_helpers.BY_NAME["float32"], "c", controls)


def _convert_bool(controls, flushed):
    """test_kernels_convert: a float32 subnormal -> bool (read as 0 under DAZ)."""
    from conformance import test_kernels_convert
    from conformance.helpers import dtype_helpers
    x = np.array([TINY / 4, 1.0], F32)
    out = np.array([not flushed, True])
    test_kernels_convert._check(
        out, x, dtype_helpers.BY_NAME["float32"], dtype_helpers.BY_NAME["bool"], "c", controls)


def _reduce(name):
    def check(controls, flushed):
        """test_kernels_reduce: a sum/product whose exact result is subnormal."""
        from conformance import test_kernels_reduce
        from conformance.helpers import dtype_helpers
        x = np.array([[TINY, -TINY / 2]], F32) if name == "sum" else \
            np.array([[TINY, 0.5]], F32)
        exact = np.array([TINY / 2], F32)
        test_kernels_reduce._check(name, np.zeros(1, F32) if flushed else exact, x, (1,),
                                   dtype_helpers.BY_NAME["float32"], "c", controls)
    check.__name__ = f"_reduce_{name}"
    return check


def _cumsum(controls, flushed):
    from conformance import test_kernels_reduce
    from conformance.helpers import dtype_helpers
    x = np.array([TINY, -TINY / 2], F32)
    out = np.array([TINY, 0.0 if flushed else TINY / 2], F32)
    test_kernels_reduce._check_cumsum(
        out, x, 0, False, dtype_helpers.BY_NAME["float32"], "c", controls)


def _rounding_bound(controls, flushed):
    """tolerances.bound("rounding"): what dot, conv, FFT, sparse, FFI, linalg and SPMD
    compositions are held to."""
    from conformance.helpers import assertions
    from conformance.helpers import tolerances
    exact = np.array([TINY / 2], F32)
    bound = tolerances.bound("rounding", F32, magnitude=np.abs(exact), roundings=2,
                             controls=controls, name="2*eps*|x| + 2*loss")
    assertions.assert_within_bound(np.zeros(1, F32) if flushed else exact, exact, bound, call="c")


def _spmd(controls, flushed):
    from conformance import test_programs_spmd
    from conformance.helpers import dtype_helpers
    x = np.array([TINY, 2.0], F32)
    out = (x * F32(0.5)).astype(F32)
    if flushed:
        out[0] = 0.0
    test_programs_spmd._check(out, [x], lambda a: a * 0.5, 1,
                              dtype_helpers.BY_NAME["float32"], "c", controls)


def _stablehlo(controls, flushed):
    """test_stablehlo_ops' comparison (a derived bound): batch_norm_training of float32
    smallest normals has a subnormal mean, which a flushing backend reads as 0."""
    from conformance.helpers import dtype_helpers
    from conformance.programs import stablehlo_catalog
    from conformance.programs import stablehlo_compare
    case = next(c for c in stablehlo_catalog.CASES if c.op == "batch_norm_training")
    x = np.full((4, 3), TINY, F32)
    x[0, 0] = 0.0
    args = [x, np.ones(3, F32), np.zeros(3, F32)]
    expected = case.reference(args)
    compare = stablehlo_compare.comparison(case, dtype_helpers.BY_NAME["float32"], args, expected,
                                           controls=controls)
    flushed_y = (x.astype(np.float64) / np.sqrt(np.float32(1e-3))).astype(F32)
    compare(flushed_y if flushed else expected[0].copy(), expected[0], "c")


def _program(controls, flushed):
    """test_programs' float oracle (dag_bounds): ``x + x`` of a subnormal."""
    from conformance.programs import dag
    from conformance.programs.dag import Node, Program
    from conformance.test_programs import check_outputs
    x = np.array([TINY / 8, 1.0], F32)
    program = Program("float", (Node("param", (), (("index", 0),), (2,), "float32"),
                                Node("add", (0, 0), (), (2,), "float32")), (1,))
    out = np.array([0.0, 2.0], F32) if flushed else x + x
    check_outputs(program, [out], [x], np.zeros(dag.IDX_LEN, np.int32), "c", controls)


def _low_program(name):
    def check(controls, flushed):
        """test_programs' float oracle at a narrower dtype (dag_bounds at the dtype's
        constants): ``x + x`` of a subnormal of ``name``."""
        from conformance.programs import dag
        from conformance.programs.dag import Node, Program
        from conformance.test_programs import check_outputs
        dt = np.dtype(getattr(ml_dtypes, name, None) or name)
        x = np.array([float(ml_dtypes.finfo(dt).tiny) / 8, 1.0]).astype(dt)
        program = Program("float", (Node("param", (), (("index", 0),), (2,), name),
                                    Node("add", (0, 0), (), (2,), name)), (1,))
        out = np.array([0.0, 2.0]).astype(dt) if flushed else x + x
        check_outputs(program, [out], [x], np.zeros(dag.IDX_LEN, np.int32), "c", controls)
    check.__name__ = f"_program_{name}"
    return check


def _denormal_probe(controls, flushed):
    """test_denormals_as_declared's expected value (float_control_modes.expected): bit-exact
    either way."""
    from conformance.helpers import assertions
    x, half = np.array([TINY, -TINY], F32), np.full(2, 0.5, F32)
    exact = (x * half).astype(F32)
    out = float_control_modes.flushed(exact, FLUSHING, inputs=False) if flushed else exact
    assertions.assert_bitwise_equal(
        out, float_control_modes.expected(x, exact, controls, False), call="c")


#: Every check that may accept a flushed subnormal, fed the flushed result and the IEEE one.
CHECKS = [_execute_exact("float32"), _execute_exact("bfloat16"), _elementwise_special, _elementwise_daz, _convert_float,
          _convert_bool, _reduce("sum"), _reduce("prod"), _cumsum, _rounding_bound, _spmd,
          _stablehlo, _program, _low_program("bfloat16")]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.strip("_"))
def test_a_flushing_declaration_accepts_a_flushed_subnormal(check):
    check(FLUSHING, flushed=True)
    check(FLUSHING, flushed=False)    # the IEEE result too


@pytest.mark.parametrize("check", CHECKS + [_denormal_probe],
                         ids=lambda c: c.__name__.strip("_"))
def test_an_ieee_declaration_rejects_a_flushed_subnormal(check):
    check(float_control_modes.IEEE, flushed=False)      # the IEEE result passes ...
    with pytest.raises(AssertionError):
        check(float_control_modes.IEEE, flushed=True)   # ... the flushed one does not


def test_a_declaration_flushes_only_what_it_declares():
    """``float32=ftz``: a flushed result passes, a flushed input (DAZ) does not."""
    _elementwise_special(FTZ_ONLY, flushed=True)
    with pytest.raises(AssertionError):
        _elementwise_daz(FTZ_ONLY, flushed=True)
    _convert_float(FTZ_ONLY, flushed=True)
    with pytest.raises(AssertionError):
        _convert_bool(FTZ_ONLY, flushed=True)
    with pytest.raises(AssertionError):     # the probe must flush under the declaration
        _denormal_probe(FLUSHING, flushed=False)


def test_a_float16_program_follows_the_float16_declaration():
    """XLA:CPU keeps float16 subnormals (``float16=preserve``) while it flushes float32:
    the float16 program oracle rejects a flushed float16 subnormal under it, and accepts
    it where float16 is declared flushing."""
    check = _low_program("float16")
    check(FLUSHING, flushed=False)
    with pytest.raises(AssertionError):
        check(FLUSHING, flushed=True)
    check(float_control_modes.parse("float16=ftz+daz"), flushed=True)


def test_every_check_taking_the_declaration_is_covered():
    """Each function under conformance/ with a ``controls`` parameter is in :data:`CHECKS`
    (by what it checks), or passes the declaration on to one that is."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "conformance"
    takers = {f"{p.stem}.{n.name}" for p in root.rglob("*.py")
              for n in ast.walk(ast.parse(p.read_text()))
              if isinstance(n, ast.FunctionDef)
              and "controls" in [a.arg for a in n.args.args + n.args.kwonlyargs]}
    covered = {  # function -> the case above that exercises it
        "test_execute._check": _execute_exact,
        "test_kernels_elementwise._check_ieee_or_flushed": _elementwise_special,
        "test_kernels_convert._check": _convert_bool,
        "test_kernels_reduce._check": _reduce,
        "test_kernels_reduce._check_cumsum": _cumsum,
        "test_programs_spmd._check": _spmd,
        "stablehlo_compare.comparison": _stablehlo,
        "test_programs.check_outputs": _program,
        "dag_bounds.evaluate": _low_program,
        "tolerances._exact": _execute_exact,
        "tolerances._rounding": _rounding_bound,
        "tolerances._summation": _reduce, "tolerances._product": _reduce,
        "error_bounds.rounding_bound": _rounding_bound,
        "error_bounds.summation_bound": _reduce, "error_bounds.product_bound": _reduce,
        "float_control_modes.expected": _denormal_probe,
        "float_control_modes.flushes_results_of": _convert_float,
        "float_control_modes.flushes_inputs_of": _convert_bool,
        "float_control_modes.underflow_loss": _rounding_bound,
        "float_control_modes.flushed": _elementwise_special,
    }
    # report.json's record of the declaration accepts nothing
    passes_on_or_records = {"float_control_modes.record"}
    passes_on = {"test_kernels_convert._convert_and_check", "test_kernels_dot._check_dot",
                 "test_kernels_fft._check_fft", "test_programs.op_by_op",
                 "test_programs.run_program", "test_programs.run_and_check",
                 "test_kernels_reduce._reduce_everywhere"}
    assert takers - set(covered) - passes_on - passes_on_or_records == set(), "a check takes the declaration " \
        "but no self-test shows it accepts a flushed subnormal only as declared"
