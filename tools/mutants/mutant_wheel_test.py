"""The mutant wheel: one file edited, its RECORD line fixed, everything else as stored, and the
same bytes every time (the venv of ./bazelw is keyed by the wheel's sha256)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import catalogue
import mutant_wheel
import pytest

NAME = "apache_tvm-9.9.9-py3-none-any.whl"
SOURCE = "def scale(x):\n    return x * 2\n"
OTHER = b"\x7fELF" + bytes(range(256)) * 64  # a binary entry, stored compressed
MUTANT = catalogue.Mutant(
    "scale-off-by-one", "ffi", "apache-tvm", "tvm/ops.py", "x * 2", "x * 2 + 1", "scale is off"
)


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def _original(tmp_path: Path) -> Path:
    path = tmp_path / "src" / NAME
    path.parent.mkdir()
    files = {
        "tvm/__init__.py": b"",
        "tvm/ops.py": SOURCE.encode(),
        "tvm/lib/libtvm.so": OTHER,
        "apache_tvm-9.9.9.dist-info/METADATA": b"Metadata-Version: 2.1\nName: apache-tvm\n",
    }
    record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in files.items())
    record += "apache_tvm-9.9.9.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            method = zipfile.ZIP_STORED if name.endswith("METADATA") else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6)), data, method)
        archive.writestr("apache_tvm-9.9.9.dist-info/RECORD", record)
    return path


def _write(original: Path, dest: Path, mutant: catalogue.Mutant = MUTANT) -> str:
    return mutant_wheel.write_mutant(
        str(original), str(dest), mutant.file, lambda text: catalogue.apply(text, mutant)
    )


def test_mutant_wheel_edits_one_file_and_fixes_its_record_line(tmp_path: Path) -> None:
    original = _original(tmp_path)
    dest = tmp_path / "out" / NAME
    sha = _write(original, dest)
    assert sha == hashlib.sha256(dest.read_bytes()).hexdigest()
    with zipfile.ZipFile(original) as before, zipfile.ZipFile(dest) as after:
        assert after.testzip() is None  # every entry's CRC holds
        assert after.namelist() == before.namelist()
        edited = after.read("tvm/ops.py")
        assert edited == b"def scale(x):\n    return x * 2 + 1\n"
        for name in ("tvm/__init__.py", "tvm/lib/libtvm.so", "apache_tvm-9.9.9.dist-info/METADATA"):
            assert after.read(name) == before.read(name)
            assert after.getinfo(name).date_time == before.getinfo(name).date_time
        record = after.read("apache_tvm-9.9.9.dist-info/RECORD").decode().splitlines()
        old_record = before.read("apache_tvm-9.9.9.dist-info/RECORD").decode().splitlines()
    assert f"tvm/ops.py,{_digest(edited)},{len(edited)}" in record
    changed = [(a, b) for a, b in zip(old_record, record, strict=True) if a != b]
    assert [a.split(",")[0] for a, _ in changed] == ["tvm/ops.py"]


def test_mutant_wheel_is_reproducible_and_differs_from_the_original(tmp_path: Path) -> None:
    original = _original(tmp_path)
    first = _write(original, tmp_path / "a" / NAME)
    second = _write(original, tmp_path / "b" / NAME)
    assert first == second
    assert first != hashlib.sha256(original.read_bytes()).hexdigest()


def test_mutant_that_does_not_apply_or_names_a_missing_file_writes_nothing(tmp_path: Path) -> None:
    original = _original(tmp_path)
    dest = tmp_path / "out" / NAME
    absent = catalogue.Mutant("m", "ffi", "apache-tvm", "tvm/ops.py", "x * 3", "x", "b")
    with pytest.raises(catalogue.CatalogueError, match="occurs 0 times"):
        _write(original, dest, absent)
    elsewhere = catalogue.Mutant("m", "ffi", "apache-tvm", "tvm/nope.py", "x", "y", "b")
    with pytest.raises(mutant_wheel.WheelError, match="has no tvm/nope.py"):
        _write(original, dest, elsewhere)
    assert not dest.exists()


def test_fixed_record_refuses_a_path_it_does_not_list() -> None:
    with pytest.raises(mutant_wheel.WheelError, match="no line for a.py"):
        mutant_wheel.fixed_record("b.py,sha256=x,1\n", "a.py", b"")
