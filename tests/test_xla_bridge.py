"""``runtime.xla_bridge`` has the registry semantics of jax's ``jax._src.xla_bridge``."""

import warnings

import pytest

from runtime import xla_bridge
from runtime import xla_client
from runtime.xla_client import Client


def _cpu(n=1):
    return lambda: xla_client.make_cpu_client(num_devices=n)


class _NoDevices(Client):
    def device_count(self):
        return 0


def _boom(msg="no device node"):
    def factory():
        raise OSError(msg)
    return factory


def test_priority_order_sets_default_and_quiet_failures_are_recorded(registry):
    registry.register_backend_factory("t-low", _cpu(), priority=10)
    registry.register_backend_factory("t-high", _cpu(2), priority=20)
    registry.register_backend_factory("t-quiet", _boom(), priority=30, fail_quietly=True)
    live = registry.backends()
    assert {"t-low", "t-high", "cpu"} <= set(live) and "t-quiet" not in live
    assert registry.get_backend() is live["t-high"]        # highest priority that started
    assert registry.device_count() == 2
    assert "OSError: no device node" in registry.backend_errors()["t-quiet"]
    with pytest.raises(RuntimeError, match="Backend 't-quiet' failed to initialize: OSError"):
        registry.get_backend("t-quiet")
    assert registry.backends_are_initialized()


def test_loud_failure_raises_with_hint_and_leaves_nothing_initialized(registry):
    registry.register_backend_factory("t-loud", _boom("driver too old"), priority=5,
                                      fail_quietly=False)
    with pytest.raises(RuntimeError, match=r"Unable to initialize backend 't-loud': driver too "
                                           r"old .*uninstall the failing plugin package"):
        registry.backends()
    assert not registry.backends_are_initialized()


def test_platform_list_sets_priority_by_order_and_fails_loudly(registry):
    registry.register_backend_factory("t-a", _cpu(3), priority=-50)
    registry.set_platforms("t-a,cpu")
    live = registry.backends()
    assert set(live) == {"t-a", "cpu"}                     # nothing else initialized
    assert registry.get_backend() is live["t-a"]           # first in the list wins
    registry.clear_backends()
    registry.register_backend_factory("t-q", _boom(), fail_quietly=True)
    registry.set_platforms(["cpu", "t-q"])
    with pytest.raises(RuntimeError, match="Unable to initialize backend 't-q'.*platform list"):
        registry.backends()                                # a listed platform is always loud


def test_platform_list_from_environment(registry, monkeypatch):
    from runtime import _registry

    _registry.STATE.platform_list_set = False  # as if set_platforms was never called
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert registry.platforms() == ["cpu"]
    assert set(registry.backends()) == {"cpu"}
    monkeypatch.setenv("JAX_PLATFORMS", "cpu,,cuda")
    with pytest.raises(ValueError, match="JAX_PLATFORMS.*empty platform name"):
        registry.platforms()


@pytest.mark.parametrize("value,error,fragment", [
    ("cpu,cpu", ValueError, "names a platform twice"),
    ("gpu,cuda", ValueError, "names a platform twice"),
    (" ,cpu", ValueError, "empty platform name"),
    (42, TypeError, "argument 'platforms' must be a comma-separated str"),
])
def test_set_platforms_rejects_malformed_lists(registry, value, error, fragment):
    with pytest.raises(error, match=fragment):
        registry.set_platforms(value)


def test_gpu_alias(registry):
    assert xla_bridge.expand_platform_alias("gpu") == ["cuda", "rocm"]
    assert xla_bridge.expand_platform_alias("cpu") == ["cpu"]
    assert xla_bridge.is_gpu("cuda") and xla_bridge.is_gpu("rocm") and not xla_bridge.is_gpu("gpu")
    assert registry.is_known_platform("gpu") and registry.is_known_platform("cpu")
    assert not registry.is_known_platform("nope")
    assert registry.canonicalize_platform("cpu") == "cpu"
    registry.register_backend_factory("cuda", _cpu(), priority=200, fail_quietly=True)
    registry.register_backend_factory("rocm", _boom("no rocm"), fail_quietly=True)
    assert registry.canonicalize_platform("gpu") == "cuda"
    registry.clear_backends()
    registry.unregister_backend_factory("cuda")
    with pytest.raises(RuntimeError, match="no platforms that are instances of gpu"):
        registry.canonicalize_platform("gpu")
    registry.clear_backends()
    registry.set_platforms("gpu")
    with pytest.raises(RuntimeError, match=r"none of \['cuda', 'rocm'\] started"):
        registry.backends()


def test_registration_rules(registry):
    registry.backends()
    with pytest.raises(RuntimeError, match="backend 'cpu' is already initialized"):
        registry.register_backend_factory("cpu", _cpu())
    registry.register_backend_factory("t-late", _cpu(2))    # a new name is fine ...
    assert registry.get_backend("t-late").device_count() == 2  # ... and starts on demand
    with pytest.raises(TypeError, match="argument 'priority' must be an int"):
        registry.register_backend_factory("t-x", _cpu(), priority="high")
    with pytest.raises(TypeError, match="argument 'factory' must be callable"):
        registry.register_backend_factory("t-x", 42)
    with pytest.raises(TypeError, match="argument 'make_topology' must be callable"):
        registry.register_backend_factory("t-x", _cpu(), make_topology=3)
    with pytest.raises(KeyError, match="no factory registered as 't-none'"):
        registry.unregister_backend_factory("t-none")


@pytest.mark.parametrize("factory,fragment", [
    (lambda: None, "its factory returned None"),
    (lambda: _NoDevices(xla_client.make_cpu_client().native), "provides no devices"),
])
def test_unusable_backends_fail(registry, factory, fragment):
    registry.register_backend_factory("t-bad", factory, fail_quietly=False, priority=-5)
    registry.set_platforms("t-bad")
    with pytest.raises(RuntimeError, match=fragment):
        registry.backends()


def test_experimental_platform_warns(registry):
    registry.register_backend_factory("t-exp", _cpu(), experimental=True)
    registry.set_platforms("t-exp")
    with pytest.warns(xla_bridge.ExperimentalPlatformWarning, match="'t-exp' is experimental"):
        registry.backends()


def test_device_queries(registry):
    client = registry.get_backend("cpu")
    assert registry.get_backend(client) is client          # a client passes through
    assert registry.devices("cpu") == client.devices()
    assert registry.local_device_count("cpu") == client.local_device_count()
    assert registry.process_index("cpu") == 0 and registry.process_count("cpu") == 1
    assert registry.local_devices(backend="cpu") == client.local_devices()
    assert registry.get_device_backend(client.local_devices()[0]) is client
    assert registry.get_device_backend() is registry.get_backend()
    assert registry.default_backend() == "cpu"
    assert registry.using_pjrt_c_api("cpu") is False
    assert registry.backend_pjrt_c_api_version("cpu") is None
    with pytest.raises(ValueError, match=r"unknown process_index 1; expected an int in \[0, 1\)"):
        registry.local_devices(process_index=1, backend="cpu")


def test_deprecated_host_names_warn(registry):
    with pytest.warns(DeprecationWarning, match="renamed to process_index"):
        assert registry.host_id("cpu") == 0
    with pytest.warns(DeprecationWarning, match="renamed to process_count"):
        assert registry.host_count("cpu") == 1
    with pytest.warns(DeprecationWarning, match="use range"):
        assert registry.host_ids("cpu") == [0]
    with pytest.warns(DeprecationWarning, match="renamed from `host_id`"):
        assert registry.local_devices(host_id=0, backend="cpu")


def test_topologies(registry, monkeypatch):
    with pytest.raises(NotImplementedError, match="topology not implemented for 'cpu'"):
        registry.make_pjrt_topology("cpu")
    seen = []
    registry.register_backend_factory("t-topo", _cpu(),
                                      make_topology=lambda name, **kw: seen.append((name, kw)))
    registry.make_pjrt_topology("t-topo", "2x2", chips=4)
    assert seen == [("2x2", {"chips": 4})]
    monkeypatch.delenv("TPU_LIBRARY_PATH", raising=False)
    with pytest.raises(RuntimeError, match="TPU support is not installed.*TPU_LIBRARY_PATH"):
        registry.make_pjrt_tpu_topology()


def test_unknown_platform_lists_available_and_install_hint(registry):
    with pytest.raises(RuntimeError, match=r"Unknown platform 'nope'\. Available: \['cpu'\]"):
        registry.get_backend("nope")
    assert registry.available_platforms() == ["cpu"]      # no GPU plugin installed here
    assert {"cuda", "rocm"} <= set(registry.registered_platforms())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.backends()                                # built-in GPU factories stay quiet
    assert "GpuLibNotLinkedError" in registry.backend_errors()["cuda"]
    assert "Install jax-cuda13-pjrt" in registry.backend_errors()["cuda"]
    assert "--" not in str(registry.backend_errors()["cuda"])  # runtime names no CLI option


class _Reports:
    """A client or device as far as ``client_platform`` looks at it."""

    def __init__(self, platform, platform_version=""):
        self.platform, self.platform_version = platform, platform_version


@pytest.mark.parametrize("platform,version,expected", [
    ("gpu", "cuda 13000", "cuda"), ("gpu", "ROCm 7.0", "rocm"), ("gpu", "metal", "gpu"),
    ("cpu", "cuda 13000", "cpu"), ("tpu", "", "tpu")])
def test_client_platform_names_the_concrete_gpu_platform(platform, version, expected):
    assert xla_bridge.client_platform(_Reports(platform, version)) == expected


def test_plugin_file_helpers(tmp_path, monkeypatch):
    import hashlib
    import os

    assert xla_bridge.gpu_plugin_library("cpu") is None             # no built-in GPU plugin
    lib = tmp_path / "lib" / "p.so"
    lib.parent.mkdir()
    lib.write_bytes(b"\x7fELF" + bytes(range(256)) * 4099)  # more than one 1 MiB block
    assert xla_bridge.library_sha256(str(lib)) == hashlib.sha256(lib.read_bytes()).hexdigest()
    monkeypatch.chdir(tmp_path)
    assert xla_bridge.normalize_library_path("lib/../lib/p.so") == str(lib)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert xla_bridge.normalize_library_path("~/lib/p.so") == str(lib)
    assert os.path.isabs(xla_bridge.normalize_library_path("p.so"))


def test_runtime_strings_name_no_command_line_option():
    """Runtime errors name runtime arguments; the CLI and pytest plugin translate them."""
    import ast
    import pathlib
    import re

    import runtime

    found = []
    for path in sorted(pathlib.Path(runtime.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [f"{path.name}: {m}" for m in re.findall(r"--[a-z][a-z-]+",
                                                                  node.value)]
    assert found == []
