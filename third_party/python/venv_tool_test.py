"""venv_tool.py and scrub_venv.py on small venvs: the entries of each distribution, a layer's
removal of the pinned ones (never touching the base it was hard-linked from) and its scrub."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOOL = HERE / "venv_tool.py"
SCRUB = HERE / "scrub_venv.py"


def make_venv(root: Path) -> Path:
    """A venv without pip, and its site-packages."""
    # Isolated (-I): under Bazel, PYTHONPATH holds the runfiles root, whose `python_venv/venv`
    # directory would shadow the venv module, and whose distributions are not this venv's.
    subprocess.run([sys.executable, "-I", "-m", "venv", "--without-pip", str(root)], check=True)
    (site,) = root.glob("lib/python3*/site-packages")
    return site


def add_dist(site: Path, name: str, files: dict[str, str], record: bool = True) -> None:
    """A distribution installed by hand: its files, METADATA and (optionally) RECORD."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for rel, text in files.items():
        path = (site / rel).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if record:
        listed = [*files, f"{info.name}/METADATA", f"{info.name}/RECORD"]
        (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in listed))


def tool(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-I", str(TOOL), *args], capture_output=True, text=True
    )


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A venv with a package, a top-level module, a script outside site-packages and a
    directory two distributions share."""
    venv = tmp_path / "base"
    site = make_venv(venv)
    add_dist(
        site,
        "apache-tvm",
        {"tvm/__init__.py": "X = 1\n", "tvm/sub/x.py": "", "../../../bin/tvm-tool": "#!"},
    )
    add_dist(site, "other", {"other.py": "Y = 2\n"})
    add_dist(site, "shared-a", {"nspkg/a.py": ""})
    add_dist(site, "shared-b", {"nspkg/b.py": ""})
    return venv


def test_entries_lists_top_level_entries_and_files_outside_site_packages(base: Path) -> None:
    out = base.parent / "entries.json"
    assert tool(base, "entries", str(out)).returncode == 0
    found = json.loads(out.read_text())
    assert found["apache-tvm"] == {
        "top": ["apache_tvm-1.0.dist-info", "tvm"],
        "outside": ["bin/tvm-tool"],
    }
    assert found["other"]["top"] == ["other-1.0.dist-info", "other.py"]
    assert found["shared-a"]["top"] == ["nspkg", "shared_a-1.0.dist-info"]


def test_entries_without_record_come_from_the_base_and_fail_without_one(base: Path) -> None:
    first = base.parent / "entries.json"
    assert tool(base, "entries", str(first)).returncode == 0
    for record in base.glob("lib/python3*/site-packages/*.dist-info/RECORD"):
        record.unlink()  # what the scrub does
    again = base.parent / "again.json"
    assert tool(base, "entries", str(again), str(first)).returncode == 0
    assert json.loads(again.read_text()) == json.loads(first.read_text())
    missing = tool(base, "entries", str(again))
    assert missing.returncode != 0 and "has no RECORD" in missing.stderr


def test_unlayer_removes_a_distribution_from_a_hard_linked_copy_only(base: Path) -> None:
    entries = base.parent / "entries.json"
    assert tool(base, "entries", str(entries)).returncode == 0
    layer = base.parent / "layer"
    subprocess.run(["cp", "-al", str(base), str(layer)], check=True)
    result = tool(layer, "unlayer", str(entries), "apache_tvm", "other")
    assert result.returncode == 0, result.stderr
    (site,) = layer.glob("lib/python3*/site-packages")
    (base_site,) = base.glob("lib/python3*/site-packages")
    for gone in ("tvm", "apache_tvm-1.0.dist-info", "other.py", "other-1.0.dist-info"):
        assert not (site / gone).exists() and (base_site / gone).exists()
    assert not (layer / "bin" / "tvm-tool").exists() and (base / "bin" / "tvm-tool").exists()
    assert (site / "nspkg" / "a.py").exists()


@pytest.mark.parametrize(
    ("dist", "message"),
    [
        ("shared-a", "shares nspkg with shared-b"),
        ("apache-tvm-ffi", "has no apache-tvm-ffi to replace"),
    ],
)
def test_unlayer_refuses_what_it_cannot_remove_alone(base: Path, dist: str, message: str) -> None:
    entries = base.parent / "entries.json"
    assert tool(base, "entries", str(entries)).returncode == 0
    result = tool(base, "unlayer", str(entries), dist)
    assert result.returncode != 0 and message in result.stderr
    assert len(list(base.glob("lib/python3*/site-packages/nspkg/*.py"))) == 2


def test_scrub_of_a_layer_touches_only_the_entries_it_names(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    site = make_venv(venv)
    add_dist(site, "kept", {"kept/__init__.py": ""})
    add_dist(site, "fresh", {"fresh/__init__.py": "Z = 3\n"})
    (venv / "bin" / "fresh-script").write_text("#!/abs/path/python\n")
    cfg = (venv / "pyvenv.cfg").read_text()
    subprocess.run(
        [sys.executable, str(SCRUB), str(venv), "fresh", "fresh-1.0.dist-info"], check=True
    )
    assert (site / "kept-1.0.dist-info" / "RECORD").exists()
    assert not (site / "fresh-1.0.dist-info" / "RECORD").exists()
    assert list((site / "fresh" / "__pycache__").glob("__init__.*.pyc"))
    assert not (site / "kept" / "__pycache__").exists()
    assert not (venv / "bin" / "fresh-script").exists()
    assert (venv / "pyvenv.cfg").read_text() == cfg


def test_scrub_renames_a_spaced_file_a_module_reads_and_removes_the_rest(tmp_path: Path) -> None:
    # The shape of setuptools' vendored jaraco.text, which reads `Lorem ipsum.txt` at import.
    venv = tmp_path / "venv"
    site = make_venv(venv)
    reader = (
        "from importlib.resources import files\n"
        "TEXT = files(__name__).joinpath('Data file.txt').read_text(encoding='utf-8')\n"
    )
    add_dist(
        site,
        "spaced",
        {
            "spaced/__init__.py": reader,
            "spaced/Data file.txt": "kept content\n",
            "spaced/Unread file.xml": "<x/>\n",
            "spaced/sub/Data file.txt": "another directory's file\n",
        },
    )
    base_init = tmp_path / "linked_init.py"
    base_init.hardlink_to(site / "spaced" / "__init__.py")  # a layer's hard link to its base
    subprocess.run([sys.executable, str(SCRUB), str(venv)], check=True)
    names = [p.name for p in site.rglob("*")]
    assert not [n for n in names if " " in n]
    assert (site / "spaced" / "Data_file.txt").read_text() == "kept content\n"
    assert not (site / "spaced" / "Unread_file.xml").exists()
    # Only the modules of the file's own directory count as its readers.
    assert not (site / "spaced" / "sub" / "Data_file.txt").exists()
    assert base_init.read_text() == reader
    imported = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", "import spaced; print(spaced.TEXT, end='')"],
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout == "kept content\n"


def test_scrub_refuses_a_rename_onto_an_existing_file(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    site = make_venv(venv)
    add_dist(
        site,
        "clash",
        {"clash/__init__.py": "N = 'a b.txt'\n", "clash/a b.txt": "1", "clash/a_b.txt": "2"},
    )
    result = subprocess.run([sys.executable, str(SCRUB), str(venv)], capture_output=True, text=True)
    assert result.returncode != 0 and "'a_b.txt' exists beside it" in result.stderr
    assert (site / "clash" / "a_b.txt").read_text() == "2"


def _pip_report(path: Path, wheels: dict[str, str]) -> Path:
    """A pip install report naming each distribution's wheel by sha256."""
    install = [
        {
            "metadata": {"name": name, "version": "1.0"},
            "download_info": {
                "url": f"file:///wheels/{name}-1.0-py3-none-any.whl",
                "archive_info": {"hashes": {"sha256": sha}},
            },
        }
        for name, sha in wheels.items()
    ]
    path.write_text(json.dumps({"install": install}))
    return path


def test_the_record_names_every_wheel_and_the_interpreter(base: Path, tmp_path: Path) -> None:
    # The record is what re-runs a test when the venv changes (BUILD.venv.tpl): any other
    # wheel of the lock, or another interpreter, must change it.
    report = _pip_report(tmp_path / "report.json", {"apache-tvm": "a" * 64, "other": "b" * 64})
    out = tmp_path / "record.json"
    proc = tool(base, "record", str(out), "default", "//lock", str(report))
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert record["wheel_sha256"] == {"apache-tvm": "a" * 64, "other": "b" * 64}
    assert record["installed"]["apache-tvm"]["sha256"] == "a" * 64
    assert "other" not in record["installed"]
    assert record["python"] == ".".join(map(str, sys.version_info[:3]))


def test_the_record_names_the_lock_installed_in_place_of_the_cpu_lock(
    base: Path, tmp_path: Path
) -> None:
    # A stock pip has no CPU-only torch: venv.bzl installs the lane's GPU lock instead, and the
    # record (the run's identity) says which lock it replaced (issue 43).
    report = _pip_report(tmp_path / "report.json", {"apache-tvm": "a" * 64})
    out = tmp_path / "record.json"
    args = [str(out), "default", "//gpu.lock", str(report)]
    proc = tool(base, "record", *args, "--instead-of=//cpu.lock")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert (record["lock"], record["lock_instead_of"]) == ("//gpu.lock", "//cpu.lock")
    assert tool(base, "record", *args).returncode == 0
    assert json.loads(out.read_text())["lock_instead_of"] == ""


def test_a_user_wheel_replaces_the_pinned_one_in_the_record(base: Path, tmp_path: Path) -> None:
    report = _pip_report(tmp_path / "report.json", {"apache-tvm": "a" * 64, "other": "b" * 64})
    wheel = tmp_path / "apache_tvm-9.9-py3-none-any.whl"
    wheel.write_bytes(b"not the pinned wheel")
    out = tmp_path / "record.json"
    proc = tool(base, "record", str(out), "default", "//lock", str(report), f"apache-tvm={wheel}")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert record["wheel_sha256"] == {"other": "b" * 64}
    assert "apache-tvm" not in record["installed"]
    user = record["user_wheels"]["apache-tvm"]
    assert user["file"] == wheel.name
    assert user["sha256"] == hashlib.sha256(b"not the pinned wheel").hexdigest()


def _lock(path: Path, pins: dict[str, tuple[str, list[str]]]) -> Path:
    """A hashed lock as pip-compile writes it: `name==version \\` and `--hash` lines, comments."""
    lines = ["# a comment pip-compile writes\n"]
    for name, (version, hashes) in pins.items():
        lines.append(f"{name}=={version} \\\n")
        lines += [f"    --hash=sha256:{h} \\\n" for h in hashes[:-1]]
        lines.append(f"    --hash=sha256:{hashes[-1]}\n    # via -r x.in\n")
    path.write_text("".join(lines))
    return path


BASE_PINS = {
    "apache-tvm": ("0.27", ["1" * 64, "2" * 64]),
    "apache-tvm-ffi": ("0.1.14", ["3" * 64]),
    "torch": ("2.13.0+cpu", ["4" * 64]),
}


def test_a_lane_lock_differing_in_tvms_pair_only_gives_the_pair_as_a_layer(tmp_path: Path) -> None:
    base = _lock(tmp_path / "base.lock", BASE_PINS)
    # The lane's other pins in another order, their hashes too: the same pins.
    lane_pins = {
        "torch": ("2.13.0+cpu", ["4" * 64]),
        "apache-tvm-ffi": ("0.1.13", ["6" * 64, "5" * 64]),
        "apache-tvm": ("0.26", ["7" * 64]),
    }
    lane = _lock(tmp_path / "lane.lock", lane_pins)
    out = tmp_path / "layer.lock"
    proc = tool(Path(sys.prefix), "lane-layer", str(lane), str(base), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "torch" not in text
    reqs = [line.strip() for line in text.splitlines() if "==" in line]
    assert reqs == ["apache-tvm==0.26 \\", "apache-tvm-ffi==0.1.13 \\"]
    for h in ("5", "6", "7"):
        assert f"--hash=sha256:{h * 64}" in text
    assert "1" * 64 not in text and "3" * 64 not in text


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"torch": ("2.13.0+cpu", ["8" * 64])}, "torch"),  # another wheel of the same version
        ({"torch": ("2.12.0+cpu", ["4" * 64])}, "torch"),
        ({"numpy": ("2.4", ["9" * 64])}, "numpy"),  # a pin the default lock does not have
    ],
)
def test_a_lane_lock_differing_beyond_tvms_pair_is_installed_whole(
    tmp_path: Path, change: dict, named: str
) -> None:
    base = _lock(tmp_path / "base.lock", BASE_PINS)
    lane = _lock(tmp_path / "lane.lock", {**BASE_PINS, **change})
    out = tmp_path / "layer.lock"
    proc = tool(Path(sys.prefix), "lane-layer", str(lane), str(base), str(out))
    assert proc.returncode == 3
    assert f"beyond TVM's pair ({named})" in proc.stdout
    assert not out.exists()


def test_a_lane_lock_without_tvms_pair_is_installed_whole(tmp_path: Path) -> None:
    base = _lock(tmp_path / "base.lock", BASE_PINS)
    lane = _lock(tmp_path / "lane.lock", {"torch": BASE_PINS["torch"]})
    proc = tool(Path(sys.prefix), "lane-layer", str(lane), str(base), str(tmp_path / "o"))
    assert proc.returncode == 3
    assert "no apache-tvm / apache-tvm-ffi in" in proc.stdout


def test_the_merged_report_has_the_layers_wheels_in_place_of_the_bases(tmp_path: Path) -> None:
    base = _pip_report(
        tmp_path / "base.json",
        {"apache-tvm": "a" * 64, "apache-tvm-ffi": "b" * 64, "torch": "c" * 64},
    )
    layer = _pip_report(
        tmp_path / "layer.json", {"apache-tvm": "d" * 64, "apache_tvm_ffi": "e" * 64}
    )
    out = tmp_path / "merged.json"
    proc = tool(Path(sys.prefix), "merge-report", str(base), str(layer), str(out))
    assert proc.returncode == 0, proc.stderr
    install = json.loads(out.read_text())["install"]
    shas = {
        item["metadata"]["name"]: item["download_info"]["archive_info"]["hashes"]["sha256"]
        for item in install
    }
    assert len(install) == 3
    assert shas == {"torch": "c" * 64, "apache-tvm": "d" * 64, "apache_tvm_ffi": "e" * 64}
