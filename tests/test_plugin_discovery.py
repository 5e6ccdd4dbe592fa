"""Plugin discovery (``jax_plugins`` modules and entry points), PJRT_NAMES_AND_LIBRARY_PATHS
and JSON plugin configs, with real throwaway packages on ``sys.path``."""

import json
import sys
import textwrap

import pytest

from runtime import _plugin_discovery  # private: its parsers are tested directly
from runtime import xla_bridge
from runtime.xla_client import PluginLoadError
from tests.bundle_helpers import clean
from tests.mutants.runner import pytester_run

_INIT = """
from runtime import xla_bridge, xla_client

def initialize():
    xla_bridge.register_backend_factory(
        {name!r}, lambda: xla_client.make_cpu_client(num_devices={devices}),
        priority={priority})
"""


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A fresh ``sys.path`` entry for throwaway plugins; forgets imported ``jax_plugins``
    before the test and, after it, the modules the test imported from ``tmp_path`` (left in
    ``sys.modules``, a later test's plugin discovery would find them again)."""
    def throwaway(name):
        return name == "jax_plugins" or name.startswith(("jax_plugins.", "t_ep_"))

    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in sys.modules if throwaway(m)]:
        monkeypatch.delitem(sys.modules, mod)
    yield tmp_path
    for mod in [m for m in sys.modules if throwaway(m)]:
        del sys.modules[mod]  # then monkeypatch puts back the modules it removed


def _namespace_plugin(root, module, body):
    pkg = root / "jax_plugins" / module
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(body))


def _entry_point_plugin(root, dist, module, body):
    (root / f"{module}.py").write_text(textwrap.dedent(body))
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[jax_plugins]\n{dist} = {module}\n")


def test_namespace_and_entry_point_plugins_register_in_priority_order(registry, plugin_path):
    _namespace_plugin(plugin_path, "t_ns", _INIT.format(name="t-ns", devices=2, priority=50))
    _entry_point_plugin(plugin_path, "t_ep_dist", "t_ep_mod",
                        _INIT.format(name="t-ep", devices=3, priority=60))
    assert {"jax_plugins.t_ns", "t_ep_mod"} <= set(_plugin_discovery.discover_plugin_modules())
    registry.discover_pjrt_plugins()
    assert {"t-ns", "t-ep"} <= set(registry.registered_platforms())
    live = registry.backends()
    assert live["t-ns"].device_count() == 2 and live["t-ep"].device_count() == 3
    assert registry.get_backend() is live["t-ep"]            # priority 60 beats 50
    assert registry.plugin_errors() == {}


@pytest.mark.parametrize("body,fragment", [
    ("raise ImportError('libfoo.so.1: cannot open shared object file')",
     "import failed: ImportError: libfoo.so.1"),
    ("def initialize():\n    raise RuntimeError('no device found')",
     "initialize() raised RuntimeError: no device found"),
    ("VERSION = 1\n", "has no initialize() function"),
])
def test_broken_plugin_is_reported_loudly(registry, plugin_path, body, fragment):
    _namespace_plugin(plugin_path, "t_broken", body)
    with pytest.warns(xla_bridge.PluginWarning, match="jax_plugins.t_broken"):
        registry.discover_pjrt_plugins()
    assert fragment in registry.plugin_errors()["jax_plugins.t_broken"]
    with pytest.raises(RuntimeError, match="Plugins that failed to load: .*t_broken"):
        registry.get_backend("t-broken")


def test_env_names_and_paths():
    assert _plugin_discovery.parse_names_and_paths("") == {}
    assert _plugin_discovery.parse_names_and_paths("a:/x/a.so,b:/y/b.json") == {"a": "/x/a.so",
                                                                                "b": "/y/b.json"}


@pytest.mark.parametrize("value,fragment", [
    ("a", "invalid entry 'a'"),
    ("a:/x.so:/y.so", "invalid entry"),
    (":/x.so", "invalid entry"),
    ("a:", "invalid entry"),
    ("a:/x.so,a:/y.so", "named twice"),
])
def test_env_bad_entries_are_errors(value, fragment):
    with pytest.raises(PluginLoadError, match=fragment):
        _plugin_discovery.parse_names_and_paths(value)


def test_env_registration_reports_each_failure(registry, monkeypatch, tmp_path):
    monkeypatch.setenv("PJRT_NAMES_AND_LIBRARY_PATHS",
                       f"t-missing:{tmp_path}/nope.so,t-json:{tmp_path}/bad.json")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.warns(xla_bridge.PluginWarning):
        registry.register_pjrt_plugin_factories_from_env()
    errors = registry.plugin_errors()
    assert "nope.so" in errors["t-missing"] and "does not exist" in errors["t-missing"]
    assert "needs a string 'library_path'" in errors["t-json"]
    monkeypatch.setenv("PJRT_NAMES_AND_LIBRARY_PATHS", "garbage")
    with pytest.warns(xla_bridge.PluginWarning, match="invalid entry 'garbage'"):
        registry.register_pjrt_plugin_factories_from_env()


def test_json_config_every_value_type(tmp_path):
    options = {"s": "x", "i": 3, "f": 0.5, "b": True, "li": [0, 1, 2]}
    cfg = tmp_path / "p.json"
    cfg.write_text(json.dumps({"library_path": "lib/p.so", "create_options": options}))
    path, opts = _plugin_discovery.read_plugin_config("p", str(cfg))
    assert path == str(tmp_path / "lib" / "p.so") and opts == options
    cfg.write_text(json.dumps({"library_path": "/abs/p.so"}))
    assert _plugin_discovery.read_plugin_config("p", str(cfg)) == ("/abs/p.so", None)


@pytest.mark.parametrize("content,fragment", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object, got list"),
    ('{"create_options": {}}', "needs a string 'library_path'"),
    ('{"library_path": 7}', "needs a string 'library_path'"),
    ('{"library_path": "p.so", "create_options": [1]}', "'create_options' must be a JSON object"),
    ('{"library_path": "p.so", "create_options": {"k": ["a"]}}', "options['k']"),
    ('{"library_path": "p.so", "create_options": {"k": {"x": 1}}}', "options['k']"),
    ('{"library_path": "p.so", "create_options": {"k": null}}', "options['k']"),
])
def test_json_config_errors_name_plugin_and_file(tmp_path, content, fragment):
    cfg = tmp_path / "bad.json"
    cfg.write_text(content)
    with pytest.raises(PluginLoadError, match="PJRT plugin 'p' from .*bad.json") as info:
        _plugin_discovery.read_plugin_config("p", str(cfg))
    assert fragment in str(info.value)


def test_json_config_missing_file(tmp_path):
    with pytest.raises(PluginLoadError, match="cannot read the plugin config"):
        _plugin_discovery.read_plugin_config("p", str(tmp_path / "none.json"))


def test_suite_certifies_a_discovered_platform(pytester):
    # `pytest --platform=NAME` for a platform that only a jax_plugins module registers.
    _namespace_plugin(pytester.path, "t_cli", _INIT.format(name="t-cli", devices=2, priority=5))
    _namespace_plugin(pytester.path, "t_bad", "raise ImportError('libvendor.so: not found')")
    out = pytester.path / "rep"
    result = pytester_run(
        pytester, "--pyargs", "conformance", "--platform=t-cli", "--expect-platform=cpu",
        f"--report-dir={out}", "-p", "no:cacheprovider", "--profile=none", "-k", "test_registry")
    assert result.ret == 0, result.stdout.str()[-3000:] + result.stderr.str()[-2000:]
    doc = json.loads((out / "report.json").read_text())
    assert clean(doc) and doc["platform"]["device_count"] == 2
    result.stdout.fnmatch_lines(["PJRT plugin failed to load: PJRT plugin 'jax_plugins.t_bad': "
                                 "import failed: ImportError: libvendor.so: not found"])
    assert "libvendor.so" in doc["platform"]["plugin_errors"]["jax_plugins.t_bad"]
