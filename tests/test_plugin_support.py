"""Self-tests of the project's own ``runtime.plugin_support`` (plugin package versions and
imports, jaxlib's ``plugin_support``): moved out of the conformance areas, since they test no
backend."""

from __future__ import annotations

import warnings

import pytest

from runtime import plugin_support


@pytest.mark.parametrize("jaxlib, plugin", [("0.10.2", "0.10.2"), ("0.10.2", "0.10.2.dev20261101"),
                                            ("0.11.0rc1", "0.11.0")])
def test_check_plugin_version_accepts_equal_releases(jaxlib, plugin):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plugin_support.check_plugin_version("jax_cuda13_plugin", jaxlib, plugin) is True


@pytest.mark.parametrize("jaxlib, plugin", [("0.10.2", "0.10.1"), ("0.10.2", "0.11.2"),
                                            ("0.10.2", "1.10.2"), ("0.10.2", "0.10")])
def test_check_plugin_version_rejects_skew_with_a_warning(jaxlib, plugin):
    with pytest.warns(RuntimeWarning, match=f"version {plugin} is installed"):
        assert plugin_support.check_plugin_version("jax_cuda13_plugin", jaxlib, plugin) is False


def test_rocm_plugins_are_exempt_from_the_version_check():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plugin_support.check_plugin_version("jax_rocm7_plugin", "0.10.2", "0.9.0")


def test_import_from_plugin_without_the_package_is_none():
    installed = any(_importable(p) for p in plugin_support.PLUGIN_MODULE_NAMES["rocm"])
    if installed:
        pytest.skip("a ROCm plugin package is installed")
    assert plugin_support.import_from_plugin("rocm", "_linalg") is None


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@pytest.mark.parametrize("call, arg, exc", [
    (lambda: plugin_support.check_plugin_version("p", None, "0.1"), "jaxlib_version", TypeError),
    (lambda: plugin_support.check_plugin_version("p", "0.1", "dev"), "plugin_version", ValueError),
    (lambda: plugin_support.check_plugin_version(3, "0.1", "0.1"), "plugin_name", TypeError),
    (lambda: plugin_support.import_from_plugin("tpu", "_linalg"), "plugin_name", ValueError),
], ids=["jaxlib-none", "plugin-unparsable", "name-int", "unknown-plugin"])
def test_plugin_support_rejects_bad_input(call, arg, exc):
    with pytest.raises(exc, match=f"argument '{arg}'"):
        call()
