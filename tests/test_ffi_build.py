"""The FFI handler builder names what it looked for and rejects unknown kinds."""

import pytest

from conformance.programs import ffi_build


def test_compiler_for_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="argument 'kind' must be 'cpu' or 'cuda', got 'tpu'"):
        ffi_build.compiler_for("tpu")


def test_missing_compiler_is_named(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(ffi_build.NoCompilerError,
                       match=r"looked for \$CXX, c\+\+, g\+\+, clang\+\+"):
        ffi_build.compiler_for("cpu")
