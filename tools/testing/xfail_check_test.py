"""xfail_check: bare xfails in test sources are found; deviations.xfail and strings are not."""

from pathlib import Path

import pytest
import xfail_check


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import pytest\n@pytest.mark.xfail(strict=True)\ndef test(): pass\n", [2]),
        ("import pytest\ndef test():\n    pytest.xfail('no')\n", [3]),
        ("from pytest import xfail\n", [1]),
        ("from tvm_conformance import deviations\n@deviations.xfail('a-b')\ndef t(): pass\n", []),
        ("s = '''@pytest.mark.xfail\\ndef test(): pass'''\n", []),  # pytester inner code
        ("from tvm_conformance.testing import known_failing_targets\n", []),
    ],
)
def test_finds_bare_xfails_only(source: str, expected: list[int]) -> None:
    assert xfail_check.bare_xfails(source) == expected


def test_tree_with_a_bare_xfail_fails_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "area").mkdir()
    (tmp_path / "area" / "ok_test.py").write_text("def test(): pass\n")
    (tmp_path / "area" / "bad_test.py").write_text("import pytest\npytest.mark.xfail\n")
    found = xfail_check.problems(str(tmp_path), allowed=())
    assert len(found) == 1 and "area/bad_test.py:2: bare xfail" in found[0]
    assert xfail_check.problems(str(tmp_path), allowed=("area/bad_test.py",)) == []


def test_allowed_file_without_bare_xfail_must_leave_the_list(tmp_path: Path) -> None:
    (tmp_path / "done_test.py").write_text("def test(): pass\n")
    found = xfail_check.problems(str(tmp_path), allowed=("done_test.py",))
    assert found == ["xfail_check: done_test.py is converted; remove it from NOT_YET_CONVERTED"]
