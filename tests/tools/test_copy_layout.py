"""copy-layout: the SMEM grids are `copy_dialect.layout`'s swizzle cell by cell, the SVG has one
box per chunk, the bank-conflict counts, the TMEM maps against the shape table and CUTLASS's
TMEM copy atoms, and bad input ends in one error line with exit code 2."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from copy_dialect import layout
from copy_dialect.attributes import TmemShape
from copy_dialect.tmem import TMEM_LANES, TMEM_REGS_PER_NUM, tmem_fragment
from copy_tools import copy_layout
from tests.forked_tool import ForkedTool

SVG = "{http://www.w3.org/2000/svg}"
ROW = re.compile(r"^\s*(\d+) \|(.*)$")


def run(capsys, *argv: str) -> str:
    assert copy_layout.main(list(argv)) == 0
    return capsys.readouterr().out


def grid(text: str) -> dict[int, list[str]]:
    """Row (or lane) -> its cells, from the text grid."""
    found = {}
    for line in text.splitlines():
        if m := ROW.match(line):
            found[int(m.group(1))] = m.group(2).split()
    return found


# (type, rows, bytes per row): rows of one span, narrower, wider, an odd row, 16-bit and 8-bit.
TYPES = [
    ("64x32xf32", 64, 128),
    ("16x16xf32", 16, 64),
    ("8x8xf32", 8, 32),
    ("16x64xbf16", 16, 128),
    ("12x24xi8", 12, 24),
    ("8x64xf32", 8, 256),
]


@pytest.mark.parametrize("swizzle", ["none", "32", "64", "128"])
@pytest.mark.parametrize(("shape", "rows", "row_bytes"), TYPES)
def test_grid_is_the_layout_swizzle_cell_by_cell(capsys, swizzle, shape, rows, row_bytes):
    span = 16 if swizzle == "none" else int(swizzle)
    space = "#copy.smem" if span == 16 else f"#copy.smem<swizzle = {span}>"
    pitch = layout.row_pitch(row_bytes, span)
    chunks = -(-row_bytes // 16)
    for show in ("chunk", "bank", "offset"):
        found = grid(run(capsys, f"memref<{shape}, {space}>", "--show", show))
        assert sorted(found) == list(range(rows))
        for r, cells in found.items():
            assert len(cells) == chunks
            for c, cell in enumerate(cells):
                stored = layout.swizzled(r * pitch + 16 * c, span)
                want = {"chunk": (stored - r * pitch) // 16, "bank": stored % 128 // 4}.get(
                    show, stored
                )
                assert int(cell) == want, (show, r, c)


def test_swizzle_option_overrides_the_type(capsys):
    typed = run(capsys, "memref<16x16xf32, #copy.smem<swizzle = 64>>")
    overridden = run(capsys, "memref<16x16xf32, #copy.smem>", "--swizzle", "64")
    assert grid(typed) == grid(overridden)
    # 64-byte rows under the 64-byte swizzle: two rows per 128 bytes share a pattern.
    assert grid(typed)[1] == ["0", "1", "2", "3"]
    assert grid(typed)[2] == ["1", "0", "3", "2"]
    assert "swizzle 64 B" in typed.splitlines()[0]


def test_128b_rows_of_one_span_xor_the_chunk_with_the_row(capsys):
    found = grid(run(capsys, "memref<8x64xbf16, #copy.smem<swizzle = 128>>"))
    assert found == {r: [str(c ^ r) for c in range(8)] for r in range(8)}


def test_a_slot_of_a_multi_buffer(capsys):
    ty = "memref<3x8x32xf32, #copy.smem<swizzle = 128>>"
    out = run(capsys, ty, "--slot", "2", "--show", "offset")
    assert "slot [2]" in out
    assert "the slot starts at byte 2048" in out
    found = grid(out)
    shape = (3, 8, 32)
    for r, cells in found.items():
        for c, cell in enumerate(cells):
            assert int(cell) == layout.element_offset((2, r, 4 * c), shape, 32, 128)


def test_svg_is_xml_with_one_box_per_chunk(tmp_path, capsys):
    path = tmp_path / "smem.svg"
    ty = "memref<16x64xbf16, #copy.smem<swizzle = 128>>"
    run(capsys, ty, "--svg", str(path), "--no-text")
    assert capsys.readouterr().out == ""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    chunks = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "chunk"]
    assert len(chunks) == 16 * 8
    # Each box sits at its SMEM chunk and is coloured by its GMEM chunk.
    xs = sorted({float(r.get("x")) for r in chunks})
    assert len(xs) == 8
    for rect in chunks:
        row, gmem = map(int, re.match(r"row (\d+), .*GMEM chunk (\d+)", rect[0].text).groups())
        assert xs.index(float(rect.get("x"))) == gmem ^ (row % 8)
    colours = {r.get("fill") for r in chunks}
    assert len(colours) == 8


def test_svg_of_a_narrow_row_shows_the_padding(tmp_path, capsys):
    path = tmp_path / "pad.svg"
    run(capsys, "memref<8x8xf32, #copy.smem<swizzle = 128>>", "--svg", str(path), "--no-text")
    rects = list(ET.parse(path).getroot().iter(f"{SVG}rect"))
    assert sum(r.get("class") == "chunk" for r in rects) == 8 * 2
    assert sum(r.get("class") == "pad" for r in rects) == 8 * 6


@pytest.mark.parametrize(
    ("ty", "element", "vector"),
    [
        ("memref<32x32xf32, #copy.smem>", "32-way", "8-way"),
        ("memref<32x32xf32, #copy.smem<swizzle = 128>>", "4-way", "1-way"),
        ("memref<32x16xf32, #copy.smem<swizzle = 64>>", "4-way", "1-way"),
        ("memref<32x64xf32, #copy.smem<swizzle = 128>>", "8-way", "2-way"),  # rows over the span
        ("memref<32x33xf32, #copy.smem>", "1-way", "-"),  # the padded-row trick, no 16 B loads
    ],
)
def test_conflicts_of_a_column_read(capsys, ty, element, vector):
    out = run(capsys, ty, "--conflicts")
    worst = next(line for line in out.splitlines() if line.startswith("worst:"))
    assert f"{element} for element reads" in worst
    if vector != "-":
        assert f"{vector} for 16-byte reads" in worst


def test_wavefront_model():
    banks = copy_layout.wavefronts
    assert banks([4 * t for t in range(32)], 4) == (1, 1)
    assert banks([128 * t for t in range(32)], 4) == (32, 1)
    assert banks([0] * 32, 4) == (1, 1)  # one word: a broadcast
    assert banks([16 * t for t in range(32)], 16) == (4, 4)
    assert banks([128 * t for t in range(32)], 16) == (32, 4)


# --- TMEM -------------------------------------------------------------------------------


def tmem_cells(text: str) -> dict[tuple[int, int], tuple[int, int]]:
    found = {}
    for lane, cells in grid(text).items():
        for col, cell in enumerate(cells):
            if cell != ".":
                t, r = re.fullmatch(r"t(\d+)\.r(\d+)", cell).groups()
                found[(lane, col)] = (int(t), int(r))
    return found


@pytest.mark.parametrize("shape", list(TmemShape))
@pytest.mark.parametrize("num", [1, 2, 4])
def test_tmem_map_agrees_with_the_shape_table(capsys, shape, num):
    name = shape.value.removeprefix("shape_")
    warp = 2
    cells = tmem_cells(run(capsys, "--tmem", name, "--num", str(num), "--warp", str(warp)))
    regs = num * TMEM_REGS_PER_NUM[shape]
    # Every register of every thread once, at the shape's lanes of the warp's quarter.
    assert sorted(cells.values()) == [(t, r) for t in range(32) for r in range(regs)]
    lanes = {lane for lane, _ in cells}
    assert lanes == set(range(64, 64 + TMEM_LANES[shape]))
    offset = num if shape == TmemShape.S16X32BX2 else 0
    for (lane, col), (t, r) in cells.items():
        assert tmem_fragment(shape, t, r, offset) == (lane - 64, col)
    # Columns: the shape's bits per lane times num (the 16x32bx2 halves side by side here).
    bits = {"32x32b": 32, "16x64b": 64, "16x128b": 128, "16x256b": 256, "16x32bx2": 64}[name]
    assert 1 + max(col for _, col in cells) == bits * num // 32


def _cute(shape: tuple[int, ...], stride: tuple[int, ...], i: int) -> int:
    """A flat CuTe layout at index i (colexicographic: the first mode fastest)."""
    total = 0
    for s, d in zip(shape, stride, strict=True):
        total, i = total + (i % s) * d, i // s
    return total


# CUTLASS's SM100 TMEM_LOAD copy atoms (cute/atom/copy_traits_sm100.hpp): DstLayout maps
# (thread, value bit) to the bit (lane * row_bits + bit in the lane) of the atom's lanes x
# row_bits; a register holds 32 value bits. (shape, num, row bits, thread modes, value modes)
CUTLASS_ATOMS = [
    (TmemShape.S16X64B, 1, 64, ((2, 2, 8), (512, 32, 64)), ((32,), (1,))),
    (TmemShape.S16X64B, 2, 128, ((2, 2, 8), (1024, 32, 128)), ((32, 2), (1, 64))),
    (TmemShape.S16X128B, 1, 128, ((4, 8), (32, 128)), ((32, 2), (1, 1024))),
    (TmemShape.S16X128B, 2, 256, ((4, 8), (32, 256)), ((32, 2, 2), (1, 2048, 128))),
    (TmemShape.S16X256B, 1, 256, ((4, 8), (64, 256)), ((64, 2), (1, 2048))),
    (TmemShape.S16X256B, 2, 512, ((4, 8), (64, 512)), ((64, 2, 2), (1, 4096, 256))),
    (TmemShape.S16X32BX2, 2, 128, ((16, 2), (128, 64)), ((64,), (1,))),
]


@pytest.mark.parametrize(("shape", "num", "row_bits", "threads", "values"), CUTLASS_ATOMS)
def test_tmem_fragment_is_cutlass_atom(shape, num, row_bits, threads, values):
    regs = num * TMEM_REGS_PER_NUM[shape]
    for t in range(32):
        for v in range(0, 32 * regs, 32):
            bit = _cute(*threads, t) + _cute(*values, v)
            want = (bit // row_bits, bit % row_bits // 32)
            # CUTLASS's 16dp32b atom is 16x32bx2 with the second half right after the first.
            assert tmem_fragment(shape, t, v // 32, offset=num) == want, (t, v // 32)


def test_tmem_32x32b_is_one_lane_per_thread(capsys):
    cells = tmem_cells(run(capsys, "--tmem", "32x32b", "--num", "4"))
    assert cells == {(t, r): (t, r) for t in range(32) for r in range(4)}


def test_tmem_16x32bx2_offset(capsys):
    out = run(capsys, "--tmem", "16x32bx2", "--num", "2", "--offset", "6")
    cells = tmem_cells(out)
    assert (cells[(3, 0)], cells[(3, 6)], cells[(3, 7)]) == ((3, 0), (19, 0), (19, 1))
    assert (3, 2) not in cells
    assert "second half at column +6" in out


def test_tmem_svg(tmp_path, capsys):
    path = tmp_path / "tmem.svg"
    run(capsys, "--tmem", "16x128b", "--num", "2", "--svg", str(path), "--no-text")
    rects = list(ET.parse(path).getroot().iter(f"{SVG}rect"))
    cells = [r for r in rects if r.get("class") == "cell"]
    assert len(cells) == 4 * 32 * 4  # 4 warps x 32 threads x 4 registers
    assert sum(r.get("class") == "unread" for r in rects) == 4 * 16 * 8


# --- errors -----------------------------------------------------------------------------


FORKED = ForkedTool("copy_tools.copy_layout")
"""copy-layout as a forked process (`forked_tool`: a process of its own, less Python's start
and the imports)."""


def tool(*argv: str) -> subprocess.CompletedProcess[str]:
    done = FORKED.run(list(argv), b"", timeout=60)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["i32"], "expected a memref type, got i32"),
        (["memref<4x"], "expected a memref type, 'memref<4x' does not parse: Expected shape type."),
        (["memref<4x4xf32>"], "expected a memref in shared memory (#copy.smem), got one in GMEM"),
        (["memref<4x4xf32, #copy.tmem>"], "got one in TMEM"),
        (["memref<4x4xf32, #copy.smem<swizzle = 48>>"], "does not verify: Unsupported swizzle: 48"),
        (["memref<4x4xf32, #copy.smem>", "--swizzle", "12"], "expected a swizzle of none, 32"),
        (["memref<4x4xf32, #copy.smem> i32"], "expected one type, got 'i32'"),
        (["memref<?x4xf32, #copy.smem>"], "expected a static shape"),
        (["memref<2x4x4xf32, #copy.smem>", "--slot", "2"], "expected slot indices within [2]"),
        (["memref<4x4xf32, #copy.smem>", "--slot", "1"], "expected 0 slot indices"),
        (["memref<4x4xf32, #copy.smem>", "--svg", "x.pdf"], "ending in .svg, got 'x.pdf'"),
        (["--tmem", "32x64b"], "expected a tcgen05.ld shape (32x32b, 16x64b"),
        (["--tmem", "16x256b", "--num", "64"], "expected at most 128 registers per thread"),
        (["--tmem", "16x64b", "--num", "3"], "expected --num a power of 2"),
        (["--tmem", "16x64b", "--offset", "3"], "--offset applies to shape 16x32bx2 only"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(argv, message):
    found = tool(*argv)
    assert found.returncode == 2, found
    assert found.stdout == ""
    assert "Traceback" not in found.stderr
    assert found.stderr.startswith("copy-layout: error: ")
    assert message in found.stderr


def test_png_without_matplotlib_is_a_clear_error(tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        found = tool("memref<4x4xf32, #copy.smem>", "--png", str(tmp_path / "x.png"))
        assert (found.returncode, found.stdout) == (2, "")
        assert "needs matplotlib, which is not installed: write an .svg" in found.stderr
    else:
        found = tool("memref<4x4xf32, #copy.smem>", "--png", str(tmp_path / "x.png"))
        assert found.returncode == 0
        assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "argv",
    [[], ["memref<4x4xf32, #copy.smem>", "--tmem", "32x32b"], ["--tmem", "32x32b", "--warp", "4"]],
)
def test_usage_errors_exit_2(argv):
    found = tool(*argv)
    assert found.returncode == 2
    assert "Traceback" not in found.stderr
    assert "copy-layout: error: expected" in found.stderr
