"""The plugin's Python distribution found from its library file
(``conformance.session.pjrt_plugin_info.library_distribution``): a plugin loaded with
``--plugin-library`` from a wheel gets its package and version in the report's title."""

import importlib.metadata

import pytest

from conformance.session.pjrt_plugin_info import library_distribution


def _a_file_of(dist_name):
    dist = importlib.metadata.distribution(dist_name)
    path = next(dist.locate_file(f) for f in dist.files if str(f).endswith(".py"))
    return dist, str(path)


def test_a_file_listed_by_an_installed_distribution_names_it():
    dist, path = _a_file_of("pluggy")
    assert library_distribution(path) == {"distribution": dist.metadata["Name"],
                                          "version": dist.version, "compatible": None}


def test_a_path_spelled_with_dot_dot_names_the_same_distribution():
    dist, path = _a_file_of("pluggy")
    head, _, tail = path.rpartition("/")
    roundabout = f"{head}/../{head.rsplit('/', 1)[-1]}/{tail}"
    assert library_distribution(roundabout)["distribution"] == dist.metadata["Name"]


def test_files_of_no_distribution_and_missing_files_name_none(tmp_path):
    lonely = tmp_path / "libpjrt_lonely.so"
    lonely.write_bytes(b"\x7fELF")
    assert library_distribution(str(lonely)) is None
    assert library_distribution(str(tmp_path / "absent.so")) is None
    assert library_distribution(None) is None


def test_a_path_that_is_not_a_string_is_refused_naming_the_argument():
    with pytest.raises(TypeError, match="argument 'library_path'.*got int"):
        library_distribution(3)
