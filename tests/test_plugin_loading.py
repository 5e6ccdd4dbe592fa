"""Loading PJRT plugin libraries: every bad file is a clear error naming the path and the
cause, never a crash. Fake plugins are built here with the system C compiler."""

import os
import shutil
import subprocess
import sys
import uuid

import pytest

from runtime import xla_bridge, xla_client
from runtime.xla_client import PluginLoadError

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc/gcc) to build fake plugins")

# The start of PJRT_Api (xla/pjrt/c/pjrt_c_api.h) followed by zeroed function pointers.
_FAKE_API = """
#include <stddef.h>
struct Version {{ size_t struct_size; void* ext; int major; int minor; }};
struct Api {{ size_t struct_size; void* ext; struct Version version; void* fns[512]; }};
static struct Api api = {{ sizeof(struct Api), 0, {{ sizeof(struct Version), 0, {major}, {minor} }} }};
const struct Api* GetPjrtApi(void) {{ return {ret}; }}
"""


def _build(tmp_path, source, name):
    src, lib = tmp_path / f"{name}.c", tmp_path / f"{name}.so"
    src.write_text(source)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True,
                   capture_output=True)
    return str(lib)


def _name():
    return f"t-{uuid.uuid4().hex[:8]}"


def test_missing_path(tmp_path):
    path = tmp_path / "nope.so"
    with pytest.raises(PluginLoadError, match=rf"from '{path}': the library path does not exist"):
        xla_client.load_pjrt_plugin_dynamically(_name(), path)


def test_directory(tmp_path):
    with pytest.raises(PluginLoadError, match="is a directory, expected a shared library"):
        xla_client.load_pjrt_plugin_dynamically(_name(), tmp_path)


def test_unreadable_file(tmp_path):
    lib = tmp_path / "locked.so"
    lib.write_bytes(b"\x7fELF")
    lib.chmod(0)
    if os.access(lib, os.R_OK):
        pytest.skip("running as root: a mode-000 file is still readable")
    with pytest.raises(PluginLoadError, match="not readable"):
        xla_client.load_pjrt_plugin_dynamically(_name(), lib)


def test_not_a_shared_library(tmp_path):
    lib = tmp_path / "text.so"
    lib.write_text("not an ELF file\n")
    with pytest.raises(PluginLoadError, match=r"text\.so'.*cannot be opened as a shared library"):
        xla_client.load_pjrt_plugin_dynamically(_name(), lib)


@needs_cc
def test_shared_library_that_is_not_a_plugin(tmp_path):
    lib = _build(tmp_path, "int answer(void) { return 42; }\n", "plain")
    with pytest.raises(PluginLoadError, match="is not a PJRT plugin: it has no GetPjrtApi"):
        xla_client.load_pjrt_plugin_dynamically(_name(), lib)


@needs_cc
def test_null_api_is_an_error_not_a_segfault(tmp_path):
    lib = _build(tmp_path, _FAKE_API.format(major=0, minor=0, ret="0"), "null")
    with pytest.raises(PluginLoadError, match=r"GetPjrtApi\(\) returned NULL"):
        xla_client.load_pjrt_plugin_dynamically(_name(), lib)


@needs_cc
@pytest.mark.parametrize("major,minor,fragment", [
    (99, 0, "major version"),
    (0, 0, "0.0"),
])
def test_incompatible_api_version_fails_at_initialize(tmp_path, major, minor, fragment):
    lib = _build(tmp_path, _FAKE_API.format(major=major, minor=minor, ret="&api"), "old")
    name = _name()
    xla_client.load_pjrt_plugin_dynamically(name, lib)
    assert xla_client.pjrt_plugin_loaded(name) and not xla_client.pjrt_plugin_initialized(name)
    with pytest.raises(PluginLoadError, match=rf"'{name}' from .*old\.so.*{fragment}"):
        xla_client.make_c_api_client(name)          # initializes first: the version check


@needs_cc
def test_reloading_a_name(tmp_path):
    lib = _build(tmp_path, _FAKE_API.format(major=99, minor=1, ret="&api"), "re")
    other = _build(tmp_path, _FAKE_API.format(major=99, minor=2, ret="&api"), "other")
    name = _name()
    first = xla_client.load_pjrt_plugin_dynamically(name, lib)
    assert xla_client.load_pjrt_plugin_dynamically(name, lib) is first
    with pytest.raises(PluginLoadError, match="already loaded from"):
        xla_client.load_pjrt_plugin_dynamically(name, other)


def test_initialize_unknown_plugin_is_an_error_not_a_segfault():
    # jaxlib 0.10.2 alone dies with SIGSEGV here.
    with pytest.raises(PluginLoadError, match="'never-loaded': not loaded"):
        xla_client.initialize_pjrt_plugin("never-loaded")
    assert xla_client.pjrt_plugin_initialized("never-loaded") is False


@pytest.mark.parametrize("options,fragment", [
    ({"k": object()}, "options['k']"),
    ({"k": [1, "a"]}, "options['k']"),
    ({"k": [True]}, "options['k']"),
    ({1: 2}, "str keys"),
    ([("k", 1)], "a mapping"),
])
def test_create_options_are_validated(options, fragment):
    with pytest.raises(TypeError, match=r"make_c_api_client: argument .*must be") as info:
        xla_client.make_c_api_client("never-loaded", options)
    assert fragment in str(info.value)


def test_register_plugin_needs_exactly_one_source(registry):
    with pytest.raises(ValueError, match="exactly one of 'library_path' and 'c_api'.*neither"):
        registry.register_plugin("t-none")
    with pytest.raises(ValueError, match="got both"):
        registry.register_plugin("t-both", library_path="/x.so", c_api=object())


@needs_cc
def test_register_plugin_records_library_and_fails_loudly(registry, tmp_path):
    lib = _build(tmp_path, _FAKE_API.format(major=99, minor=0, ret="&api"), "reg")
    name = _name()
    registry.register_plugin(name, library_path=lib, options={"n": 1})
    reg = registry.plugin_registrations()[name]
    assert reg.library.path == lib and len(reg.library.sha256) == 64
    assert reg.library.api_version == (99, 0) and reg.options == {"n": 1}
    registry.set_platforms(name)
    with pytest.warns(xla_bridge.ExperimentalPlatformWarning), \
            pytest.raises(RuntimeError, match=rf"Unable to initialize backend '{name}'.*major"):
        registry.backends()


def test_gpu_client_without_plugin_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("XLA_PYTHON_CLIENT_ALLOCATOR", raising=False)
    with pytest.raises(xla_client.GpuLibNotLinkedError, match="no cuda PJRT plugin is "
                                                              "installed. Install jax-cuda13"):
        xla_client.make_gpu_client()
    with pytest.raises(ValueError, match="argument 'platform_name' must be one of"):
        xla_client.make_gpu_client(platform_name="metal")
    with pytest.raises(TypeError, match="argument 'allowed_devices'"):
        xla_client.make_gpu_client(allowed_devices={-1})


@pytest.mark.parametrize("var,value,fragment", [
    ("XLA_PYTHON_CLIENT_ALLOCATOR", "magic", "XLA_PYTHON_CLIENT_ALLOCATOR env var must be"),
    ("XLA_CLIENT_MEM_FRACTION", "1.5", "a float in (0, 1]"),
    ("XLA_CLIENT_MEM_FRACTION", "half", "a float in (0, 1]"),
    ("XLA_PYTHON_CLIENT_PREALLOCATE", "maybe", "true/false/1/0"),
    ("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "-4", "an int >= 0 (MiB)"),
])
def test_gpu_plugin_options_reject_bad_environment(monkeypatch, var, value, fragment):
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError) as info:
        xla_client.generate_pjrt_gpu_plugin_options()
    assert fragment in str(info.value)


def test_gpu_plugin_options_from_environment(monkeypatch):
    for var, value in [("XLA_PYTHON_CLIENT_ALLOCATOR", "BFC"), ("XLA_CLIENT_MEM_FRACTION", "0.5"),
                       ("XLA_PYTHON_CLIENT_PREALLOCATE", "false"),
                       ("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "64")]:
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("XLA_PYTHON_CLIENT_MEM_FRACTION", raising=False)
    opts = xla_client.generate_pjrt_gpu_plugin_options()
    assert opts["allocator"] == "bfc" and opts["memory_fraction"] == 0.5
    assert opts["preallocate"] is False and opts["collective_memory_size"] == 64 << 20
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.3")
    with pytest.raises(ValueError, match="together with the deprecated"):
        xla_client.generate_pjrt_gpu_plugin_options()


@needs_cc
def test_installed_cuda_package_is_found_and_its_library_loaded(tmp_path):
    # A stand-in jax_plugins.xla_cuda13 package whose initialize() registers nothing:
    # make_gpu_client falls back to the library file the package ships, and the
    # library's C API version check fails clearly. In a child process, because a
    # plugin loaded as "cuda" stays loaded for the whole process.
    pkg = tmp_path / "jax_plugins" / "xla_cuda13"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("def initialize():\n    pass\n")
    lib = _build(tmp_path, _FAKE_API.format(major=99, minor=0, ret="&api"), "cuda")
    shutil.move(lib, pkg / "xla_cuda_plugin.so")
    code = """
from runtime import xla_bridge, xla_client
print("FOUND", xla_bridge.gpu_plugin_library("cuda"))
print("INSTALLED", "cuda" in xla_bridge.available_platforms())
try:
    xla_client.make_gpu_client()
except xla_client.PluginLoadError as err:
    print("ERROR", err)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"FOUND {pkg / 'xla_cuda_plugin.so'}" in proc.stdout
    assert "INSTALLED True" in proc.stdout
    assert "ERROR PJRT plugin 'cuda' from" in proc.stdout and "major version" in proc.stdout
