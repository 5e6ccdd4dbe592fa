"""tests/k_modules.py: a child run collects only the modules its ``-k`` can select, and
never leaves out one that pytest would select from."""

from __future__ import annotations

import pytest

from conformance.processes import runner
from tests import k_modules
from tests.mutants.runner import PYTEST

FILES = ["test_kernels_fft.py", "test_client.py", "test_programs.py", "test_programs_spmd.py"]


@pytest.mark.parametrize("expression,kept", [
    ("test_kernels_fft.py and (ifft-complex64 or round_trip)", ["test_kernels_fft.py"]),
    ("(test_a.py and (b or c)) or (test_client.py)", ["test_client.py"]),
    ("test_programs.py", ["test_programs.py"]),          # not test_programs_spmd.py
    ("TEST_CLIENT.PY and not x", ["test_client.py"]),    # case-insensitive, as pytest
    ("not test_client.py", [f for f in FILES if f != "test_client.py"]),
    ("test_programs.py or anything", FILES),             # "anything" may be in any module
    ("test_kernels_", FILES),                            # not a module name: any module
    ("not (test_client.py or test_programs.py) and test_kernels_fft.py",
     ["test_kernels_fft.py"]),
])
def test_narrowed_keeps_every_module_the_expression_can_select(expression, kept):
    assert k_modules.narrowed(expression, FILES) == kept


@pytest.mark.parametrize("bad", ["(test_client.py", "test_client.py and", "a ) b", "or x"])
def test_a_malformed_expression_is_a_value_error(bad):
    with pytest.raises(ValueError, match="-k expression"):
        k_modules.narrowed(bad, FILES)


def test_pyargs_is_the_package_when_any_module_may_match():
    assert k_modules.pyargs(None) == ["conformance"]
    assert k_modules.pyargs_of(("-k", "test_client.py and test_device_counts")) == \
        k_modules.pyargs("test_client.py and test_device_counts")
    assert k_modules.pyargs_of(("-x",)) == k_modules.pyargs_of(("-k", "a", "-k", "b")) == \
        ["conformance"]
    assert k_modules.pyargs("test_kernels_ and float32") == ["conformance"]
    assert k_modules.pyargs("test_client.py and test_device_counts") == [
        "conformance.test_client"]


@pytest.mark.parametrize("expression", [
    "test_kernels_fft.py and round_trip or test_client.py and device_counts",
    "test_execute.py and test_elementwise and add-int32",
])
def test_the_narrowed_run_collects_what_the_whole_suite_run_does(expression):
    """The real thing: pytest's own -k over the whole suite and over the narrowed
    modules collect the same items."""
    def collected(*targets):
        proc = runner.run_python(PYTEST, ["--pyargs", *targets, "--platform=cpu", "-p",
                                          "no:cacheprovider", "--collect-only", "-q", "-k",
                                          expression], timeout=300)
        return sorted(line for line in proc.stdout.splitlines() if "::" in line)

    narrowed = k_modules.pyargs(expression)
    assert narrowed != ["conformance"]
    whole = collected("conformance")
    assert whole and collected(*narrowed) == whole
