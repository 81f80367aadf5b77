"""report.html renders in headless Chromium: the table shows, coloured, with every behaviour.

Needs Debian's `chromium`, one of the kit's prerequisites (tools/setup/prerequisites.txt, which
./bazelw installs); without it the cases skip and say so, and the verdict fails the target whose
every case skipped. Under Bazel the browser is the one @chromium_detect recorded (this
test's data), so a cached skip or pass holds only for a machine with the same browser.
"""

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
import render_html
import report
import sample_runs


def _find_chromium() -> str | None:
    """The browser @chromium_detect recorded (under Bazel), else the one on PATH."""
    if os.environ.get("TEST_SRCDIR"):
        from runfiles import runfiles  # bazel-runfiles, in the pinned venv

        record = Path(runfiles.Create().Rlocation("chromium_detect/chromium.txt"))
        lines = record.read_text(encoding="utf-8").splitlines()
        if lines[0] != "present":
            return None
        if not os.access(lines[1], os.X_OK):
            raise RuntimeError(
                f"{record} names {lines[1]}, which is gone: run ./bazelw sync --configure"
            )
        return lines[1]
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


CHROMIUM = _find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (tools/setup/prerequisites.txt: apt-get install -y chromium)",
)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # --no-sandbox: Chromium's own sandbox needs namespaces that Bazel's sandbox (and root)
    # do not give it; the page is our own file and loads nothing.
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1400,1000",
        *args,
    ]
    env = {**os.environ, "HOME": str(tmp_path)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, RGB(A) rows) of an 8-bit RGB or RGBA PNG, filters undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, up_left = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def _colours(rows: list[bytes], bpp: int) -> set[tuple[int, int, int]]:
    return {tuple(row[i : i + 3]) for row in rows for i in range(0, len(row), bpp)}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("report")
    built = sample_runs.build(tmp_path)
    report.write(built, str(tmp_path / "out"))
    return tmp_path / "out" / "report.html"


def test_page_text_contains_every_behaviour_and_summary(page: Path, tmp_path: Path) -> None:
    result = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for line in sample_runs.CONFORMANCE.splitlines()[2:]:
        behaviour = line.split("|")[2].strip()
        assert behaviour in dom, behaviour
    assert "Verdict: FAIL" in dom  # the ffi_next column fails
    assert "4 behaviours: 2 hold, 1 deviations, 0 fail, 0 skipped on lane default · cpu" in dom
    assert "crashed: ffi-save-json-crash" in dom
    assert "Rows that differ between columns (3)" in dom
    assert sample_runs.GPU_NAME in dom


def test_screenshot_shows_the_coloured_table(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = _chromium(tmp_path, f"--screenshot={shot}", page.as_uri())
    assert shot.is_file(), result.stderr[-2000:]
    data = shot.read_bytes()
    width, height, rows = png_pixels(data)
    bpp = len(rows[0]) // width
    colours = _colours(rows, bpp)
    assert len(colours) > 20, "screenshot is (nearly) blank"
    # The cell colours of passed, failed and deviation cells are on the page.
    for name in ("passed", "failed", "deviation"):
        rgb = tuple(bytes.fromhex(render_html.CELL_COLOURS[name][1:]))
        assert rgb in colours, (name, rgb)
    # The verdict is at the top of the page: the FAIL banner's colour in the first 120 px.
    top = _colours(rows[:120], bpp)
    assert tuple(bytes.fromhex(render_html.CELL_COLOURS["failed"][1:])) in top


def test_png_reader_sees_a_blank_image_as_one_colour() -> None:
    # A 2x2 white RGB PNG, filter 0: one colour, so the blank check above can fail.
    raw = b"".join(b"\x00" + b"\xff" * 6 for _ in range(2))
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    width, _, rows = png_pixels(png)
    assert _colours(rows, len(rows[0]) // width) == {(255, 255, 255)}
