"""tvm_conformance.runfiles: data files are found by workspace-relative path, never a name."""

import os
from pathlib import Path

import pytest

from tvm_conformance.runfiles import rlocation


def test_finds_a_data_file_by_workspace_relative_path() -> None:
    path = rlocation("python/tests/harness/testdata/marker.txt")
    assert os.path.isabs(path)
    with open(path) as fh:
        assert fh.read().strip() == "tvm_conformance runfiles marker"


def test_missing_file_error_names_the_path() -> None:
    with pytest.raises(FileNotFoundError, match=r"^no/such/file\.so not found"):
        rlocation("no/such/file.so")


def test_under_bazel_undeclared_file_is_an_error_not_a_source_tree_fallback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A Bazel runfiles tree that lacks the file (the test's `data` does not declare it), while
    # the file does exist in the source tree: only declared data may be found.
    assert (Path(__file__).parent / "testdata" / "marker.txt").exists()
    for name in ("RUNFILES_DIR", "RUNFILES_MANIFEST_FILE", "RUNFILES_MANIFEST_ONLY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEST_SRCDIR", str(tmp_path))
    monkeypatch.setenv("TEST_WORKSPACE", "tvm_conformance")
    (tmp_path / "tvm_conformance").mkdir()
    with pytest.raises(
        FileNotFoundError,
        match=r"^python/tests/harness/testdata/marker\.txt not found in this test's runfiles "
        r".*list the target that makes it in the test's `data`",
    ):
        rlocation("python/tests/harness/testdata/marker.txt")


def test_absolute_path_is_rejected() -> None:
    with pytest.raises(ValueError, match="workspace-relative"):
        rlocation(os.path.abspath(__file__))
