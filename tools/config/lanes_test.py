"""The lanes table (lanes.bzl) is the one list of lanes, and the generated configs follow it."""

import re
from pathlib import Path

import lanes
import pytest

from tvm_conformance.runfiles import rlocation


def test_the_checked_in_lane_configs_are_the_tables() -> None:
    written = Path(rlocation("tools/config/lanes.bazelrc")).read_text()

    assert written == lanes.bazelrc(lanes.read_lanes()), (
        "tools/config/lanes.bazelrc lags tools/config/lanes.bzl: run ./bazelw once (it rewrites"
        " the file) and commit it"
    )


def test_the_kit_bazelrc_imports_the_lane_configs_and_lists_no_lane_itself() -> None:
    text = Path(rlocation(".bazelrc")).read_text()

    assert "import %workspace%/tools/config/lanes.bazelrc" in text.splitlines()
    assert "--//tools/config:lane=" not in text


def test_every_lane_has_a_hashed_lock_and_a_summary() -> None:
    table = lanes.read_lanes()

    assert list(table)[0] == "default"
    for name, lane in table.items():
        lock = Path(rlocation("third_party/python/" + lane["lock"])).read_text()
        assert "--hash=sha256:" in lock, f"lane {name}: {lane['lock']} is not a hashed lock"
        assert "apache-tvm==" in lock and "apache-tvm-ffi==" in lock, name
        assert lane["summary"].strip(), f"lane {name}: no summary"


def _pins(lock: str) -> dict[str, str]:
    """{package: version} of a hashed lock's `name==version` lines."""
    return {
        m.group(1).lower(): m.group(2)
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", lock, re.M)
    }


def test_every_lane_has_a_gpu_flavour_with_cuda_torch_and_the_same_pins() -> None:
    for name, lane in lanes.read_lanes().items():
        cpu = _pins(Path(rlocation("third_party/python/" + lane["lock"])).read_text())
        text = Path(rlocation("third_party/python/" + lane["gpu_lock"])).read_text()
        gpu = _pins(text)

        assert "--hash=sha256:" in text, f"lane {name}: {lane['gpu_lock']} is not hashed"
        # torch's CUDA build of the same release, with the CUDA libraries it needs.
        assert cpu["torch"].endswith("+cpu"), (name, cpu["torch"])
        assert gpu["torch"] == cpu["torch"].removesuffix("+cpu"), (name, gpu["torch"])
        assert "nvidia-cuda-runtime" in gpu and "nvidia-cudnn-cu13" in gpu, name
        # Everything else as in the CPU lock: same packages, same versions.
        same = {p: v for p, v in cpu.items() if p != "torch"}
        assert {p: gpu.get(p) for p in same} == same, name


def test_every_lane_has_a_310_lock_with_its_own_tvm_and_what_310_needs() -> None:
    for name, lane in lanes.read_lanes().items():
        assert set(lane.get("python_locks", {})) == {"3.10"}, name
        gpu = _pins(Path(rlocation("third_party/python/" + lane["gpu_lock"])).read_text())
        text = Path(rlocation("third_party/python/" + lane["python_locks"]["3.10"])).read_text()
        py310 = _pins(text)

        assert text.count("--hash=sha256:") >= len(py310), f"lane {name}: a 3.10 pin has no hash"
        # What the lane is: the same TVM, tvm-ffi and (the index's) torch.
        for defining in ("apache-tvm", "apache-tvm-ffi", "torch"):
            assert py310[defining] == gpu[defining], (name, defining)
        # pytest's backports for 3.10, and a numpy that has cp310 wheels (2.3+ needs 3.11).
        assert {"tomli", "exceptiongroup"} <= set(py310), name
        assert tuple(int(x) for x in py310["numpy"].split(".")[:2]) < (2, 3), name
        # Everything the GPU lock has is there too, so nothing the suite imports is missing.
        assert set(gpu) <= set(py310), (name, set(gpu) - set(py310))


def test_a_new_entry_is_a_new_config(tmp_path: Path) -> None:
    table = tmp_path / "lanes.bzl"
    table.write_text(
        'LANES = {"default": {"lock": "requirements.lock", "summary": "d"},\n'
        '         "nightly": {"lock": "lanes/nightly.lock", "summary": "TVM main"}}\n'
        "def lane_lock(lane):\n    return Label(lane)\n"
    )

    read = lanes.read_lanes(table)

    assert list(read) == ["default", "nightly"]
    rc = lanes.bazelrc(read)
    assert "build:nightly --//tools/config:lane=nightly\n" in rc
    assert "build:default" not in rc
    assert "# --config=nightly: TVM main." in rc


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("X = 1\n", "no `LANES = {...}` assignment"),
        ('LANES = {"default": {"lock": LOCK}}\n', "LANES must be plain data"),
        ('LANES = {"other": {"lock": "x.lock"}}\n', "LANES has no 'default' lane"),
    ],
)
def test_a_malformed_table_is_an_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    table = tmp_path / "lanes.bzl"
    table.write_text(text)

    with pytest.raises(ValueError, match=message) as raised:
        lanes.read_lanes(table)
    assert str(table) in str(raised.value)


def test_names_lists_the_lanes_in_table_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert lanes.main(["names", "--except", "default"]) == 0

    assert capsys.readouterr().out.split() == [n for n in lanes.read_lanes() if n != "default"]


def test_write_if_changed_leaves_an_identical_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "lanes.bazelrc"

    assert lanes.write_if_changed(target, "a\n")
    assert not lanes.write_if_changed(target, "a\n")
    assert lanes.write_if_changed(target, "b\n")
    assert target.read_text() == "b\n"
