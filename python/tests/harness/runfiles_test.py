"""tvm_conformance.runfiles: data files are found by workspace-relative path, never a name."""

import os

import pytest

from tvm_conformance.runfiles import rlocation


def test_finds_a_data_file_by_workspace_relative_path() -> None:
    path = rlocation("python/tests/harness/testdata/marker.txt")
    assert os.path.isabs(path)
    with open(path) as fh:
        assert fh.read().strip() == "tvm_conformance runfiles marker"


def test_missing_file_error_names_path_and_places_looked() -> None:
    with pytest.raises(FileNotFoundError, match=r"no/such/file\.so not found; looked in"):
        rlocation("no/such/file.so")


def test_absolute_path_is_rejected() -> None:
    with pytest.raises(ValueError, match="workspace-relative"):
        rlocation(os.path.abspath(__file__))
