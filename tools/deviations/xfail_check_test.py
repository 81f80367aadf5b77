"""xfail_check: bare xfails and unlisted deviation ids in test sources are found; strings not."""

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


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("@deviations.xfail('a-b')\ndef t(): pass\n", []),
        ("@deviations.xfail('no-such')\ndef t(): pass\n", [(1, "no-such")]),
        ("x = [tvm_conformance.deviations.xfail('gone')]\n", [(1, "gone")]),
        ("p = pytest.param('fx', marks=deviations.xfail('a-b'))\n", []),
        ("s = \"deviations.xfail('no-such')\"\n", []),  # inside a string
        ("deviations.xfail(DEV_ID)\n", []),  # not a literal: checked at import time
    ],
)
def test_finds_unlisted_deviation_ids(source: str, expected: list[tuple[int, str]]) -> None:
    assert xfail_check.unknown_ids(source, {"a-b"}) == expected


def test_tree_with_a_bare_xfail_fails_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "area").mkdir()
    (tmp_path / "area" / "ok_test.py").write_text("def test(): pass\n")
    (tmp_path / "area" / "bad_test.py").write_text("import pytest\npytest.mark.xfail\n")
    found = xfail_check.problems(str(tmp_path), known=())
    assert len(found) == 1 and "area/bad_test.py:2: bare xfail" in found[0]


def test_tree_with_an_unlisted_id_fails_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "ok_test.py").write_text("@deviations.xfail('a-b')\ndef test(): pass\n")
    (tmp_path / "bad_test.py").write_text("\n@deviations.xfail('c-d')\ndef test(): pass\n")
    found = xfail_check.problems(str(tmp_path), known={"a-b"})
    assert found == [
        f"xfail_check: {tmp_path}/bad_test.py:2: deviations.xfail('c-d') names no deviation "
        "of tvm_conformance.deviation_registry"
    ]


def test_the_registry_is_read_by_default(tmp_path: Path) -> None:
    (tmp_path / "ok_test.py").write_text("@deviations.xfail('ffi-keyerror-args')\ndef t(): pass\n")
    (tmp_path / "bad_test.py").write_text("@deviations.xfail('not-a-listed-id')\ndef t(): pass\n")
    found = xfail_check.problems(str(tmp_path))
    assert len(found) == 1 and "bad_test.py:1:" in found[0]
